// The CONV template's legality function, register estimate, look-up table, grid and search space.
#include "lower/conv_layout.hpp"
#include "lower/tensor_core_rules.hpp"
#include "lower/winograd_layout.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/conv.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace isaac::lower {

namespace {

// (x & (x - 1)): std::has_single_bit calls libgcc's popcount without -mpopcnt, and the searches
// check a million sets.
bool power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

// Can a tile of `contiguous` x `other` elements be loaded by `threads` threads, `along` of them side
// by side on the contiguous axis, each reading `vec` elements at once?
template <bool Explain>
Legality check_load_layout(const char* tile, const char* l, const char* v, int contiguous, int other, int threads,
                           int along, int vec) {
  if (along <= 0 || threads % along != 0)
    return no<Explain>("{}={} must divide the {} threads of a block", l, along, threads);
  if (contiguous % (along * vec) != 0)
    return no<Explain>("{}={} threads x {}={} elements must divide the {} contiguous elements of the {} tile", l,
                          along, v, vec, contiguous, tile);
  if (other % (threads / along) != 0)
    return no<Explain>("the {} threads not along the contiguous axis ({} / {}={}) must divide the other extent {} "
                          "of the {} tile",
                          threads / along, threads, l, along, other, tile);
  return {};
}

// Largest offset + 1 of a strided tensor.
std::int64_t span(const std::array<std::int64_t, 4>& extents, const std::array<std::int64_t, 4>& strides) {
  std::int64_t s = 1;
  for (int d = 0; d < 4; ++d) s += (extents[d] - 1) * std::abs(strides[d]);
  return s;
}

bool rsc_order(const ir::Conv& v) { return v.filter_layout == ir::FilterLayout::krsc; }

}  // namespace

bool conv_input_reduction_contiguous(const ir::Conv& conv) { return conv.input_layout == ir::ImageLayout::nhwc; }
bool conv_filter_k_contiguous(const ir::Conv& conv) { return conv.filter_layout == ir::FilterLayout::crsk; }

int estimate_conv_registers(ir::DType dtype, bool in_red, bool f_k, const ConvParams& p, bool tma_copies) {
  const int gemm = estimate_gemm_registers(dtype, in_red, f_k, conv_as_gemm(p));
  if (tma_copies) return gemm;
  // The GEMM estimate plus, per input load, the pixel's base offset, h0 and w0 and the LUT entry.
  return gemm + 3 * conv_layout(dtype, in_red, f_k, p).loads_a + 16;
}

int conv_shared_bytes(ir::DType dtype, bool in_red, bool f_k, const ConvParams& p) {
  GemmParams g = conv_as_gemm(p);
  return conv_layout(dtype, in_red, f_k, p).shared_bytes(g);
}

int conv_kernel_shared_bytes(const ir::Conv& v, const ConvParams& p) {
  return conv_tiling_shared_bytes(v, p, conv_kernel_tiling(v, p), conv_tile_loop(v, p));
}

namespace {

// WG=1: what the parameters alone must satisfy (the planes, and so the registers and shared memory,
// come with the problem: check_winograd_problem).
// WG=2: the parameters are the batched GEMM's (winograd_product): A is the input's planes, tiles
// contiguous, and B the filter's, filters contiguous.
template <bool Explain>
Legality check_winograd_product_params(ir::DType dtype, const ConvParams& p, const DeviceLimits& device) {
  if (p.cg != 1)
    return no<Explain>("WG=2 multiplies the planes with one batched GEMM over all of C: CG={} must be 1", p.cg);
  if (auto legal = check_gemm_params(dtype, false, true, conv_as_gemm(p), device); !legal)
    return no<Explain>("WG=2's batched GEMM ({}): {}", conv_as_gemm(p).str(), legal.reason);
  return {};
}

template <bool Explain>
Legality check_winograd_params(ir::DType dtype, const ConvParams& p, const DeviceLimits& device) {
  if (p.wg != 1 && p.wg != 2)
    return no<Explain>("WG={} must be 0 (direct), 1 (Winograd F(2x2, RxS) in one kernel) or 2 (Winograd F(4x4, RxS) "
                       "with a batched GEMM)",
                       p.wg);
  if (dtype != ir::DType::f32 && dtype != ir::DType::f64)
    return no<Explain>("WG={} (Winograd) is built for f32 and f64, not {}: use WG=0", p.wg, ir::name(dtype));
  if (p.wg == 2) return check_winograd_product_params<Explain>(dtype, p, device);
  if (device.sm < 80) return no<Explain>("WG=1 copies the filter with cp.async, which needs sm_80 or newer");
  if (p.cs != 1 || p.cg != 1 || p.vi != 1 || p.vf != 1 || p.li != 0 || p.lf != 0 || p.tc != 0)
    return no<Explain>("WG=1 takes PL, KL, PS, KS, U, CL and DB: CS, CG, VI and VF must be 1, LI, LF and TC 0 "
                       "(CS={}, CG={}, VI={}, VF={}, LI={}, LF={}, TC={})",
                       p.cs, p.cg, p.vi, p.vf, p.li, p.lf, p.tc);
  if (p.cl < 1) return no<Explain>("CL={} must be at least 1 (the groups of threads that share the planes)", p.cl);
  for (auto [name, value] : {std::pair{"PL", p.pl}, {"KL", p.kl}, {"PS", p.ps}, {"KS", p.ks}, {"U", p.u}})
    if (!power_of_two(value)) return no<Explain>("{}={} must be a power of two", name, value);
  if (p.db != 0 && p.db != 1) return no<Explain>("DB={} must be 0 or 1", p.db);
  if (p.pl % p.ps) return no<Explain>("PS={} must divide PL={}", p.ps, p.pl);
  if (p.kl % p.ks) return no<Explain>("KS={} must divide KL={}", p.ks, p.kl);
  const int elem = static_cast<int>(ir::size_of(dtype));
  // The filter's planes are copied in 16-byte pieces of a row of KL filters; the shared-memory
  // regions must start on 16 bytes for the threads' vector reads.
  if (p.kl * elem < 16 || p.pl * elem < 16)
    return no<Explain>("WG=1 needs PL and KL of at least 16 bytes of {} ({} elements); PL={}, KL={}", ir::name(dtype),
                       16 / elem, p.pl, p.kl);
  const int threads = p.threads();
  if (threads % 32)
    return no<Explain>("(PL/PS)x(KL/KS)xCL = {} threads is not a whole number of warps", threads);
  if (threads > device.max_threads_per_block)
    return no<Explain>("{} threads per block exceed the device's {}", threads, device.max_threads_per_block);
  return {};
}

template <bool Explain>
Legality check_params(ir::DType dtype, bool in_red, bool f_k, const ConvParams& p, const DeviceLimits& device,
                      bool tma_copies) {
  if (auto r = check_bounds<Explain>({{"PL", p.pl, 1024}, {"KL", p.kl, 1024}, {"PS", p.ps, 256}, {"KS", p.ks, 256},
                                      {"U", p.u, 1024}, {"CS", p.cs, 1024}, {"CL", p.cl, 1024}, {"CG", p.cg, 65535},
                                      {"VI", p.vi, 16}, {"VF", p.vf, 16}, {"LI", p.li, 1024}, {"LF", p.lf, 1024}});
      !r)
    return r;
  if (p.wg) return check_winograd_params<Explain>(dtype, p, device);
  // As in GEMM: bf16 arithmetic, conversions and mma start at sm_80, bf16 reductions in memory (CG > 1
  // adds its partial sums into the output) at sm_90.
  if (dtype == ir::DType::bf16 && device.sm < 80)
    return no<Explain>("bf16 needs sm_80 or newer, not sm_{}: use f16, f32 or f64", device.sm);
  if (dtype == ir::DType::bf16 && p.cg > 1 && device.sm < 90)
    return no<Explain>("CG={} with bf16 adds partial sums into the output with bf16 reductions, which need sm_90, "
                       "not sm_{}: CG must be 1",
                       p.cg, device.sm);
  for (auto [name, value] : {std::pair{"PL", p.pl}, {"PS", p.ps}, {"U", p.u}, {"CS", p.cs}, {"CL", p.cl},
                             {"CG", p.cg}, {"VI", p.vi}, {"VF", p.vf}})
    if (!power_of_two(value)) return no<Explain>("{}={} must be a power of two", name, value);
  if (p.tc != 2 && (!power_of_two(p.kl) || !power_of_two(p.ks)))
    return no<Explain>("KL={} and KS={} must be powers of two (with TC=2, any KS up to 16)", p.kl, p.ks);
  if (p.tc == 2 && (p.ks < 1 || p.ks > 16))
    return no<Explain>("TC=2 gives each warp group an N of 16 KS filters, at most 256: KS={} must be 1 to 16", p.ks);
  if (p.db != 0 && p.db != 1) return no<Explain>("DB={} must be 0 or 1", p.db);
  if (auto r = check_tensor_core_tiling<Explain>(dtype, conv_as_gemm(p), device, conv_keys); !r) return r;
  if (p.pl % p.ps) return no<Explain>("PS={} must divide PL={}", p.ps, p.pl);
  if (p.kl % p.ks) return no<Explain>("KS={} must divide KL={}", p.ks, p.kl);
  if (p.u % (p.cl * p.cs))
    return no<Explain>("CL={} x CS={} must divide U={}: each warp group takes U/CL steps, CS at a time", p.cl, p.cs,
                          p.u);
  GemmLayout l = conv_layout(dtype, in_red, f_k, p);
  if (l.threads % 32)
    return no<Explain>("(PL/PS)x(KL/KS)xCL = {} threads is not a whole number of warps", l.threads);
  if (l.threads > device.max_threads_per_block)
    return no<Explain>("{} threads per block exceed the device's {}", l.threads, device.max_threads_per_block);
  for (auto [name, v] : {std::pair{"VI", p.vi}, {"VF", p.vf}})
    if (v * l.elem > 16) return no<Explain>("{}={} exceeds 16-byte loads for {}-byte elements", name, v, l.elem);
  if (!tma_copies) {  // TMA copies the tiles: no thread loads them
    if (auto r = check_load_layout<Explain>("input", "LI", "VI", l.ca, l.oa, l.threads, p.li, p.vi); !r) return r;
    if (auto r = check_load_layout<Explain>("filter", "LF", "VF", l.cb, l.ob, l.threads, p.lf, p.vf); !r) return r;
  }
  if (int smem = l.shared_bytes(conv_as_gemm(p)); smem > device.max_shared_per_block)
    return no<Explain>("{} bytes of shared memory exceed the device's {} per block", smem,
                          device.max_shared_per_block);
  // ptxas spills rather than exceed a thread's share of the register file. In a ptxas sweep of 378
  // register-heavy sets (sm_80 and sm_90), the sets that spilled had CL > 1 with 128 accumulators, or
  // an estimate within 6 registers of the budget.
  if (p.cl > 1 && p.ps * p.ks >= 128)
    return no<Explain>("CL={} with PS x KS = {} accumulators per thread: ptxas spills such sets (use a smaller "
                          "PS x KS)",
                          p.cl, p.ps * p.ks);
  // f32 on the tensor cores holds two TF32 words per fragment element besides the accumulators: of
  // 182 such sets with 128 accumulators (ptxas, sm_80 and sm_90, four shapes and three layouts), 36
  // spilled and 80 took 250 registers or more; of 178 with fewer, none spilled.
  if (dtype == ir::DType::f32 && p.tc == 1 && p.ps * p.ks >= 128)
    return no<Explain>("f32 TC=1 with PS x KS = {} accumulators per thread: ptxas spills such sets (use a smaller "
                       "PS x KS)",
                       p.ps * p.ks);
  int registers = estimate_conv_registers(dtype, in_red, f_k, p, tma_copies);
  int budget = std::min(device.max_registers_per_thread, device.registers_per_block / l.threads / 8 * 8);
  if (registers + 8 > budget)
    return no<Explain>("an estimated {} registers per thread (+8 of margin) exceed the budget of {} for {} threads",
                          registers, budget, l.threads);
  return {};
}

int winograd_registers(const ir::Conv& v, const ConvParams& p) {
  WinogradShape shape = winograd_shape(v, p);
  int words = v.dtype == ir::DType::f64 ? 2 : 1;
  // The accumulators of the group's planes, the taps of the tiles in flight, per tile its offsets and
  // masks, the transforms' temporaries, and what the loops and addresses hold; with CL > 1, per
  // element of the thread tile and per channel of a stage what the loads and addresses hold (twice
  // as much in f64, whose transforms also hold four times the temporaries), and 16 more. The weights come from ptxas sweeps (sm_90, every filter size, layout and dtype): 3,387 sets
  // with CL = 1, then 3,360 with CL up to 18 and tiles up to 8 x 8. With them, the 8 registers of
  // margin and the limits of check_winograd_problem, one of the 2,700 sets kept spilled (32 bytes:
  // a 5 x 5 CL = 1 set on the budget's edge, where two like it did not).
  const int base = words * (shape.group_planes * p.ks * p.ps + shape.planes * shape.tile_slots) +
                   16 * shape.tile_slots + shape.planes / 2 + 32;
  if (p.cl == 1) return base + 2 * p.db;
  return base + words * words * p.ks * p.ps + 3 * p.u + 16 + (words - 1) * shape.planes * 3 / 2;
}

template <bool Explain>
Legality check_winograd_product_problem(const ir::Conv& v, const ConvParams& p, const DeviceLimits& device) {
  for (int d = 0; d < 4; ++d)
    if (v.input_strides[d] < 0 || v.filter_strides[d] < 0 || v.output_strides[d] < 0)
      return no<Explain>("negative strides are not supported");
  constexpr std::int64_t i32max = std::numeric_limits<std::int32_t>::max();
  const WinogradShape shape = winograd_shape(v, p);
  // The transforms index the tiles and channels in 32 bits, the GEMM its M, N and K.
  if (shape.padded_tiles * v.c > i32max || shape.padded_tiles * v.k > i32max || shape.padded_k * v.c > i32max)
    return no<Explain>("WG=2 needs the 4x4 output tiles x C, tiles x K and K x C each below 2^31 ({} tiles, C={}, "
                       "K={})",
                       shape.tiles, v.c, v.k);
  if (std::int64_t in_span = span({v.n, v.c, v.h, v.w}, v.input_strides); in_span > i32max)
    return no<Explain>("the input spans {} elements: WG=2's input transform indexes it in 32 bits (< 2^31)", in_span);
  if (v.h + v.pad_h > (1 << 28) || v.w + v.pad_w > (1 << 28) || v.p > (1 << 28) || v.q > (1 << 28))
    return no<Explain>("image coordinates must stay below 2^28");
  const WinogradProduct product = winograd_product(v, p);
  if (auto legal = check_gemm(product.gemm, product.params, device); !legal)
    return no<Explain>("WG=2's batched GEMM ({}, {}): {}", ir::to_string(product.gemm), product.params.str(),
                       legal.reason);
  return {};
}

template <bool Explain>
Legality check_winograd_problem(const ir::Conv& v, const ConvParams& p, const ConvEpilogue&,
                                const DeviceLimits& device) {
  if (auto r = check_winograd_params<Explain>(v.dtype, p, device); !r) return r;
  if (v.stride_h != 1 || v.stride_w != 1 || v.dilation_h != 1 || v.dilation_w != 1)
    return no<Explain>("WG={} (Winograd) needs stride 1 and dilation 1: {}", p.wg, ir::to_string(v));
  const int m = p.wg == 2 ? 4 : 2;
  if (v.r < 2 || v.r > 5 || v.s < 2 || v.s > 5)
    return no<Explain>("WG={} (Winograd F({}x{}, RxS)) is built for 2 <= R, S <= 5, not R={}, S={}", p.wg, m, m, v.r,
                       v.s);
  if (p.wg == 2) return check_winograd_product_problem<Explain>(v, p, device);
  if (const int planes = static_cast<int>((v.r + 1) * (v.s + 1)); planes % p.cl)
    return no<Explain>("CL={} must divide the {} planes of F(2x2, {}x{}) (each group of threads takes as many)", p.cl,
                       planes, v.r, v.s);
  constexpr std::int64_t i32max = std::numeric_limits<std::int32_t>::max();
  for (int d = 0; d < 4; ++d)
    if (v.input_strides[d] < 0 || v.filter_strides[d] < 0 || v.output_strides[d] < 0)
      return no<Explain>("negative strides are not supported");
  if (std::int64_t in_span = span({v.n, v.c, v.h, v.w}, v.input_strides); in_span > i32max)
    return no<Explain>("the input spans {} elements: WG=1 kernels index it in 32 bits (< 2^31)", in_span);
  if (v.h + v.pad_h > (1 << 28) || v.w + v.pad_w > (1 << 28) || v.p > (1 << 28) || v.q > (1 << 28))
    return no<Explain>("image coordinates must stay below 2^28");
  WinogradShape shape = winograd_shape(v, p);
  if (shape.tiles > i32max || shape.padded_k * shape.padded_c > i32max)
    return no<Explain>("N x the 2x2 output tiles, and K x C, must each fit in 32 bits");
  if ((shape.tiles + p.pl - 1) / p.pl * shape.filter_blocks > i32max)
    return no<Explain>("the blocks exceed the grid's x limit");
  if (int smem = shape.shared_bytes(v.dtype, p); smem > device.max_shared_per_block)
    return no<Explain>("{} bytes of shared memory (the larger of {} planes x U={} x (PL={} + KL={}){} and, for CL > 1, "
                       "{} planes x PL x KL) exceed the device's {} per block",
                       smem, shape.planes, p.u, p.pl, p.kl, p.db ? " x 2 stages" : "", shape.planes,
                       device.max_shared_per_block);
  // Where each thread transforms its own tiles, ptxas spills larger blocks and thread tiles than
  // these even when the estimate fits (3 of 31 spilling sets in the sweeps were kept otherwise).
  if (p.threads() > 384)
    return no<Explain>("WG=1 blocks take at most 384 threads, not {} (ptxas spills larger ones even where the "
                       "estimate fits)",
                       p.threads());
  if (p.cl == 1 && (p.ks * p.ps > 8 || p.threads() > 128))
    return no<Explain>("with CL=1, KS x PS = {} must be at most 8 and the {} threads at most 128 (ptxas spills "
                       "beyond): split the planes with CL > 1",
                       p.ks * p.ps, p.threads());
  int registers = winograd_registers(v, p);
  // The register file is split among the SM's four schedulers, and a block's warps are dealt out to
  // them in turn: with 9 warps, one scheduler holds 3, so ptxas gives each thread 168 registers, not 224.
  const int warps_per_scheduler = (p.threads() / 32 + 3) / 4;
  int budget = std::min(device.max_registers_per_thread, device.registers_per_block / 4 / (32 * warps_per_scheduler) / 8 * 8);
  if (registers + 8 > budget)
    return no<Explain>("an estimated {} registers per thread ({} planes x KS={} x PS={} accumulators, {} input tiles "
                       "in flight) +8 of margin exceed the budget of {} for {} threads",
                       registers, shape.group_planes, p.ks, p.ps, shape.tile_slots, budget, p.threads());
  return {};
}

// The problem on the device, whatever the parameters.
template <bool Explain>
Legality check_problem_alone(const ir::Conv& v, const DeviceLimits& device) {
  for (auto [name, x] : {std::pair{"n", v.n}, {"c", v.c}, {"h", v.h}, {"w", v.w}, {"k", v.k}, {"p", v.p}, {"q", v.q},
                         {"r", v.r}, {"s", v.s}, {"stride_h", v.stride_h}, {"stride_w", v.stride_w},
                         {"dilation_h", v.dilation_h}, {"dilation_w", v.dilation_w}})
    if (x < 1) return no<Explain>("CONV extent {}={} must be positive: {}", name, x, ir::to_string(v));
  if (v.pad_h < 0 || v.pad_w < 0) return no<Explain>("negative padding is not supported: {}", ir::to_string(v));
  // The implicit GEMM's sizes in 64 bits first: the later checks multiply them.
  std::int64_t npq = 0, crs = 0;
  if (__builtin_mul_overflow(v.n, v.p, &npq) || __builtin_mul_overflow(npq, v.q, &npq) ||
      __builtin_mul_overflow(v.c, v.r, &crs) || __builtin_mul_overflow(crs, v.s, &crs))
    return no<Explain>("N*P*Q or C*R*S exceeds 64 bits: {}", ir::to_string(v));
  if (v.dtype == ir::DType::bf16 && device.sm < 80)
    return no<Explain>("bf16 needs sm_80 or newer, not sm_{}: use f16, f32 or f64", device.sm);
  // Distinct outputs at distinct addresses: sorted by stride, each dimension steps over all that the
  // smaller ones span.
  std::array<std::pair<std::int64_t, std::int64_t>, 4> out{{{v.output_strides[0], v.n},
                                                            {v.output_strides[1], v.k},
                                                            {v.output_strides[2], v.p},
                                                            {v.output_strides[3], v.q}}};
  std::ranges::sort(out);
  std::int64_t spanned = 0;
  for (auto [stride, extent] : out) {
    if (extent == 1) continue;
    if (stride <= spanned || stride > (std::int64_t(1) << 40))
      return no<Explain>("the output's strides ({}, {}, {}, {}) over n, k, p, q make two outputs share memory "
                         "(or exceed 2^40): {}",
                         v.output_strides[0], v.output_strides[1], v.output_strides[2], v.output_strides[3],
                         ir::to_string(v));
    spanned += stride * (extent - 1);
  }
  return {};
}

template <bool Explain>
Legality check_problem(const ir::Conv& v, const ConvParams& p, const ConvEpilogue& epilogue,
                       const DeviceLimits& device) {
  if (auto r = check_problem_alone<Explain>(v, device); !r) return r;
  if (p.wg) return check_winograd_problem<Explain>(v, p, epilogue, device);
  bool in_red = conv_input_reduction_contiguous(v), f_k = conv_filter_k_contiguous(v);
  if (auto r = check_params<Explain>(v.dtype, in_red, f_k, p, device, conv_tma(v, p)); !r) return r;
  int elem = static_cast<int>(ir::size_of(v.dtype));
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;

  // 32-bit index arithmetic: the LUT holds 32-bit input offsets.
  constexpr std::int64_t i32max = std::numeric_limits<std::int32_t>::max();
  std::int64_t npq = v.n * v.p * v.q, crs = v.c * v.r * v.s;
  if (npq > i32max || crs > i32max || v.k > i32max) return no<Explain>("N*P*Q, K and C*R*S must each fit in 32 bits");
  if (std::int64_t in_span = span({v.n, v.c, v.h, v.w}, is); in_span > i32max)
    return no<Explain>("the input spans {} elements: the look-up table holds 32-bit offsets (< 2^31)", in_span);
  if (v.h + v.pad_h > (1 << 28) || v.w + v.pad_w > (1 << 28) || (v.p * v.stride_h) > (1 << 28) ||
      (v.q * v.stride_w) > (1 << 28) || (v.r * v.dilation_h) > (1 << 28) || (v.s * v.dilation_w) > (1 << 28))
    return no<Explain>("image coordinates must stay below 2^28");
  for (auto [name, x] : {std::pair{"input", is[0]}, {"input", is[1]}, {"input", is[2]}, {"input", is[3]},
                         {"filter", fs[0]}, {"filter", fs[1]}, {"filter", fs[2]}, {"filter", fs[3]},
                         {"output", v.output_strides[0]}, {"output", v.output_strides[1]},
                         {"output", v.output_strides[2]}, {"output", v.output_strides[3]}})
    if (x < 0) return no<Explain>("negative {} strides are not supported", name);

  // The filter is a matrix over (k, j): its reduction dimensions must nest densely in the kernel's
  // reduction order, (c, r, s) or (r, s, c) for KRSC.
  std::int64_t fj = rsc_order(v) ? fs[1] : fs[3];
  bool nested = rsc_order(v) ? (fs[3] == fj * v.c && fs[2] == fj * v.c * v.s)
                             : (fs[2] == fj * v.s && fs[1] == fj * v.s * v.r);
  if (!nested)
    return no<Explain>("the filter's strides ({}, {}, {}, {}) do not nest C, R, S densely in the {} order the {} "
                          "layout implies",
                          fs[0], fs[1], fs[2], fs[3], rsc_order(v) ? "(r, s, c)" : "(c, r, s)",
                          ir::name(v.filter_layout));
  if ((f_k && fs[0] != 1) || (!f_k && fj != 1))
    return no<Explain>("the {} filter must be contiguous along {} (filter strides {}, {}, {}, {})",
                          ir::name(v.filter_layout), f_k ? "k" : "the reduction", fs[0], fs[1], fs[2], fs[3]);
  // The input's contiguous axis: c for NHWC, n for CHWN, w (the pixels, q fastest) for NCHW.
  if (in_red && is[1] != 1)
    return no<Explain>("the NHWC input must be contiguous along c (input strides {}, {}, {}, {})", is[0], is[1],
                          is[2], is[3]);

  if (p.vi > 1) {
    if (v.input_layout == ir::ImageLayout::nchw)
      return no<Explain>("VI={} must be 1 for an NCHW input: consecutive output pixels have different padding "
                            "masks and strides",
                            p.vi);
    // Vectors run along c (NHWC) or n (CHWN): that extent, every other input stride, and the
    // address must be multiples of the vector.
    // An NHWC input's vector is VI channels of one tap, which are consecutive reduction indices only
    // in a KRSC filter's (r, s, c) order; KCRS and CRSK order the reduction (c, r, s), s fastest.
    if (in_red && !rsc_order(v))
      return no<Explain>("VI={} must be 1 for an NHWC input with a {} filter: the reduction runs (c, r, s), so "
                         "consecutive reduction indices are taps, not channels (a KRSC filter puts c fastest)",
                         p.vi, ir::name(v.filter_layout));
    std::int64_t extent = in_red ? v.c : v.n;
    const char* axis = in_red ? "C" : "N";
    if (!in_red && is[0] != 1)
      return no<Explain>("VI={} needs a CHWN input contiguous along n (strides {}, {}, {}, {})", p.vi, is[0], is[1],
                            is[2], is[3]);
    if (extent % p.vi) return no<Explain>("VI={} must divide {}={}", p.vi, axis, extent);
    for (int d = 0; d < 4; ++d)
      if (d != (in_red ? 1 : 0) && is[d] % p.vi)
        return no<Explain>("VI={} must divide every other input stride; stride {} of dimension {} is not a multiple",
                              p.vi, is[d], "nchw"[d]);
    if (v.align_input % (p.vi * elem))
      return no<Explain>("VI={} needs a {}-byte aligned input, which is only {}-byte aligned", p.vi, p.vi * elem,
                            v.align_input);
  }
  if (p.vf > 1) {
    std::int64_t extent = f_k ? v.k : crs;
    std::int64_t other = f_k ? fj : fs[0];
    if (extent % p.vf)
      return no<Explain>("VF={} must divide {}={}", p.vf, f_k ? "K" : "C*R*S", extent);
    if (other % p.vf)
      return no<Explain>("VF={} must divide the filter's {} stride {}", p.vf, f_k ? "reduction" : "k", other);
    if (v.align_filter % (p.vf * elem))
      return no<Explain>("VF={} needs a {}-byte aligned filter, which is only {}-byte aligned", p.vf, p.vf * elem,
                            v.align_filter);
  }
  std::int64_t tiles = (crs + p.u - 1) / p.u;
  if (p.cg > 1 && p.cg > tiles)
    return no<Explain>("CG={} splits C*R*S={} into more pieces than its {} tiles of U={}", p.cg, crs, tiles, p.u);
  if (p.cg > 65535) return no<Explain>("CG is limited to 65535 (grid y)");
  if (p.cg > 1 && epilogue.relu)
    return no<Explain>("CG={} adds partial sums with atomics, so the result cannot pass through relu: use CG=1",
                          p.cg);
  std::int64_t blocks = ((npq + p.pl - 1) / p.pl) * ((v.k + p.kl - 1) / p.kl);
  if (blocks > i32max) return no<Explain>("{} tiles exceed the grid's x limit", blocks);
  if (int smem = conv_kernel_shared_bytes(v, p); smem > device.max_shared_per_block)
    return no<Explain>("{} bytes of shared memory (the tiles and TMA's mbarriers) exceed the device's {} per block",
                       smem, device.max_shared_per_block);
  return {};
}

}  // namespace

Legality check_conv_params(ir::DType dtype, bool in_red, bool f_k, const ConvParams& p, const DeviceLimits& device) {
  return check_params<true>(dtype, in_red, f_k, p, device, false);
}

Legality check_conv(const ir::Conv& v, const ConvParams& p, const ConvEpilogue& epilogue, const DeviceLimits& device) {
  return check_problem<true>(v, p, epilogue, device);
}

Legality check_conv_problem(const ir::Conv& v, const DeviceLimits& device) {
  return check_problem_alone<true>(v, device);
}

bool conv_legal(const ir::Conv& v, const ConvParams& p, const ConvEpilogue& epilogue, const DeviceLimits& device) {
  return check_problem<false>(v, p, epilogue, device).legal;
}

int estimate_conv_registers(const ir::Conv& v, const ConvParams& p) {
  if (p.wg == 2) return estimate_gemm_registers(v.dtype, false, true, conv_as_gemm(p));
  if (p.wg) return winograd_registers(v, p);
  return estimate_conv_registers(v.dtype, conv_input_reduction_contiguous(v), conv_filter_k_contiguous(v), p,
                                 conv_tma(v, p));
}

std::vector<ConvLutEntry> conv_lookup_table(const ir::Conv& v, const ConvParams& p) {
  if (p.wg) return {};
  std::int64_t crs = v.c * v.r * v.s;
  std::int64_t padded = (crs + p.u - 1) / p.u * p.u;
  std::vector<ConvLutEntry> lut(static_cast<std::size_t>(padded));
  const auto& is = v.input_strides;
  for (std::int64_t j = 0; j < padded; ++j) {
    if (j >= crs) {  // past the reduction: a tap far outside the image, so the input reads zero
      lut[j] = {0, 1 << 30, 1 << 30, 0};
      continue;
    }
    std::int64_t c, r, s;
    if (rsc_order(v)) c = j % v.c, s = (j / v.c) % v.s, r = j / (v.c * v.s);
    else s = j % v.s, r = (j / v.s) % v.r, c = j / (v.s * v.r);
    std::int64_t dh = r * v.dilation_h, dw = s * v.dilation_w;
    lut[j] = {static_cast<std::int32_t>(c * is[1] + dh * is[2] + dw * is[3]), static_cast<std::int32_t>(dh),
              static_cast<std::int32_t>(dw), 0};
  }
  return lut;
}

ConvGrid conv_grid(const ir::Conv& v, const ConvParams& p) {
  ConvGrid grid;
  if (p.wg == 2) {
    const WinogradShape shape = winograd_shape(v, p);
    const WinogradProduct product = winograd_product(v, p);
    grid.main = gemm_grid(product.gemm, product.params, SplitMode::atomic).main;
    auto blocks = [](std::int64_t threads) { return std::array<unsigned, 3>{static_cast<unsigned>((threads + 255) / 256), 1, 1}; };
    grid.helper = blocks(shape.padded_k * v.c);
    grid.input_transform = blocks(shape.padded_tiles * v.c);
    grid.output_transform = blocks(shape.padded_tiles * v.k);
    grid.workspace_bytes = product.workspace_bytes;
    return grid;
  }
  if (p.wg) {
    WinogradShape shape = winograd_shape(v, p);
    grid.main = {static_cast<unsigned>((shape.tiles + p.pl - 1) / p.pl * shape.filter_blocks), 1, 1};
    grid.helper = {static_cast<unsigned>((shape.padded_k * shape.padded_c + 255) / 256), 1, 1};
    grid.workspace_bytes = static_cast<std::size_t>(shape.planes * shape.padded_k * shape.padded_c) * ir::size_of(v.dtype);
    return grid;
  }
  std::int64_t npq = v.n * v.p * v.q;
  std::int64_t tiles = ((npq + p.pl - 1) / p.pl) * ((v.k + p.kl - 1) / p.kl);
  grid.main = {static_cast<unsigned>(tiles), static_cast<unsigned>(p.cg), 1};
  grid.helper = {static_cast<unsigned>((npq * v.k + 255) / 256), 1, 1};
  return grid;
}

double conv_flops(const ir::Conv& v) {
  return 2.0 * static_cast<double>(v.n * v.p * v.q) * static_cast<double>(v.k) * static_cast<double>(v.c * v.r * v.s);
}

namespace {

// The search space's lists of values.
// U = 64 for TC=2 alone, as in the GEMM space: a wgmma stage of 16 is short.
constexpr int tiles[] = {16, 32, 64, 128, 256}, thread_tiles[] = {1, 2, 4, 8, 16}, warp_groups[] = {1, 2, 4},
              depths[] = {4, 8, 16, 32, 64}, steps[] = {1, 2}, vectors[] = {1, 2, 4, 8}, buffers[] = {0, 1},
              splits[] = {1, 2, 4, 8, 16};

template <std::size_t N>
bool listed(const int (&list)[N], int v) {
  return std::find(std::begin(list), std::end(list), v) != std::end(list);
}

// TC=2 filter tiles fitted to K: K cut into one, two or three tiles of a multiple of 16 (wgmma's N
// runs in steps of 8, a warp group's in 16 KS), where that is no power of two and no power-of-two
// tile covers K in as few tiles with as little left over. A power-of-two tile leaves much of its last
// tile empty on K such as DeepBench's 174 and 87 (a third of the work of K = 87 in one of 128). Only
// for filters with the reduction contiguous: wgmma reads a K-contiguous tile in rows of any count, a
// filter-contiguous one in swizzled blocks of 64 filters.
std::vector<int> fitted_filter_tiles(const ir::Conv& problem) {
  std::vector<int> out;
  if (conv_filter_k_contiguous(problem)) return out;
  const auto covers = [&](std::int64_t tile, std::int64_t parts, std::int64_t cover) {
    const std::int64_t needed = (problem.k + tile - 1) / tile;
    return needed <= parts && needed * tile <= cover;
  };
  for (std::int64_t parts = 1; parts <= 3; ++parts) {
    const std::int64_t kl = (problem.k + 16 * parts - 1) / (16 * parts) * 16;
    if (kl <= 32 || kl > 256 || power_of_two(int(kl)) || std::ranges::find(out, int(kl)) != out.end()) continue;
    if (std::ranges::none_of(tiles, [&](int tile) { return covers(tile, parts, kl * parts); })) out.push_back(int(kl));
  }
  return out;
}

// The thread tiles along K of a fitted filter tile: its warp groups side by side, one to four.
std::vector<int> fitted_thread_tiles(int kl) {
  std::vector<int> out;
  for (int groups : {1, 2, 4})
    if (kl % (16 * groups) == 0 && kl / (16 * groups) <= 16) out.push_back(kl / (16 * groups));
  return out;
}

// Tensor cores where the template has them for this dtype and device: mma.sync (TC=1) from sm_80,
// and for f16 and bf16 on sm_90 wgmma (TC=2).
std::vector<int> tensor_core_choices(const ir::Conv& problem, const DeviceLimits& device) {
  bool mma = (ir::is_16_bit(problem.dtype) || problem.dtype == ir::DType::f64 ||
              (problem.dtype == ir::DType::f32 && device.f32_tensor_cores)) &&
             device.sm >= 80;
  if (!mma) return {0};
  if (ir::is_16_bit(problem.dtype) && device.sm == 90) return {0, 1, 2};
  return {0, 1};
}

// The most threads (a power of two dividing the block) side by side along a tile's contiguous axis.
int widest(int contiguous, int vector, int threads) {
  int along = std::min(threads, std::max(1, contiguous / vector));
  while (along > 1 && (threads % along || contiguous % (along * vector))) along /= 2;
  return along;
}

}  // namespace

void fit_conv_load_layouts(const ir::Conv& problem, ConvParams& p) {
  if (p.wg == 2) {  // as GEMM's space sets them for the batched product
    GemmParams g = conv_as_gemm(p);
    fit_gemm_load_layouts(false, true, g);
    p.li = g.la, p.lf = g.lb;
    return;
  }
  if (p.wg) {  // the WG=1 kernels place their loads themselves
    p.li = p.lf = 0;
    return;
  }
  // TC=2 copies eight rows per group of eight threads (TiledKernelBuilder::load_position).
  int threads = p.tc == 2 ? p.threads() / 8 : p.threads();
  p.li = widest(conv_input_reduction_contiguous(problem) ? p.u : p.pl, p.vi, threads);
  p.lf = widest(conv_filter_k_contiguous(problem) ? p.kl : p.u, p.vf, threads);
}

std::optional<std::string> outside_conv_space(const ir::Conv& problem, const ConvParams& p,
                                              const ConvEpilogue& epilogue, const DeviceLimits& device) {
  if (p.wg) return fmt::format("{}: WG={} sets are in {}, not conv_space", p.str(), p.wg,
                               p.wg == 2 ? "winograd_product_space" : "winograd_space");
  auto tc = tensor_core_choices(problem, device);
  const auto fitted_tiles = fitted_filter_tiles(problem), fitted_ks = fitted_thread_tiles(p.kl);
  const bool fitted_tile = p.tc == 2 && std::ranges::find(fitted_tiles, p.kl) != fitted_tiles.end() &&
                           std::ranges::find(fitted_ks, p.ks) != fitted_ks.end();
  if (!listed(tiles, p.pl) || !(fitted_tile || (listed(tiles, p.kl) && listed(thread_tiles, p.ks))) ||
      !listed(thread_tiles, p.ps) ||
      !listed(warp_groups, p.cl) || !listed(depths, p.u) || !listed(steps, p.cs) || !listed(vectors, p.vi) ||
      !listed(vectors, p.vf) || !listed(buffers, p.db) || !listed(splits, p.cg) ||
      std::find(tc.begin(), tc.end(), p.tc) == tc.end())
    return fmt::format("{}: a value outside conv_space's lists", p.str());
  if (p.u == 64 && p.tc != 2) return fmt::format("U=64: conv_space has it for TC=2 alone");
  if (p.threads() < 64) return fmt::format("{} threads: conv_space starts at 64", p.threads());
  ConvParams fitted = p;
  fit_conv_load_layouts(problem, fitted);
  if (fitted.li != p.li || fitted.lf != p.lf)
    return fmt::format("LI={}, LF={}: conv_space sets LI={}, LF={}", p.li, p.lf, fitted.li, fitted.lf);
  if (auto legal = check_conv(problem, p, epilogue, device); !legal) return legal.reason;
  return std::nullopt;
}

std::vector<ConvParams> conv_space(const ir::Conv& problem, const ConvEpilogue& epilogue, const DeviceLimits& device) {
  std::vector<ConvParams> out;
  ConvParams p;
  std::vector<std::pair<int, std::vector<int>>> filter_tiles;  // KL and its KS
  for (int kl : tiles) filter_tiles.emplace_back(kl, std::vector<int>(std::begin(thread_tiles), std::end(thread_tiles)));
  const std::size_t power_of_two_tiles = filter_tiles.size();
  for (int kl : fitted_filter_tiles(problem)) filter_tiles.emplace_back(kl, fitted_thread_tiles(kl));
  for (int tc : tensor_core_choices(problem, device))
    for (int pl : tiles)
      for (std::size_t f = 0; f < (tc == 2 ? filter_tiles.size() : power_of_two_tiles); ++f)
        for (int ps : thread_tiles)
          for (int ks : filter_tiles[f].second)
            for (int cl : warp_groups) {
              const int kl = filter_tiles[f].first;
              p.pl = pl, p.kl = kl, p.ps = ps, p.ks = ks, p.cl = cl, p.tc = tc;
              int threads = p.threads();
              if (threads % 32 || threads > device.max_threads_per_block || threads < 64) continue;
              for (int u : depths) {
                if (u == 64 && tc != 2) continue;
                for (int cs : steps)
                  for (int vi : vectors)
                    for (int vf : vectors)
                      for (int db : buffers) {
                        p.u = u, p.cs = cs, p.vi = vi, p.vf = vf, p.db = db, p.cg = 1;
                        fit_conv_load_layouts(problem, p);
                        if (!conv_legal(problem, p, epilogue, device)) continue;
                        for (int cg : splits) {
                          p.cg = cg;
                          if (conv_legal(problem, p, epilogue, device)) out.push_back(p);
                        }
                      }
              }
            }
  return out;
}

std::vector<ConvParams> winograd_space(const ir::Conv& problem, const ConvEpilogue& epilogue,
                                       const DeviceLimits& device) {
  std::vector<ConvParams> out;
  ConvParams p;
  p.wg = 1, p.li = 0, p.lf = 0;
  // CL: the divisors of the 16, 25 or 36 planes of 3 x 3, 4 x 4 and 5 x 5 filters (check_conv keeps
  // those that divide this problem's).
  for (int pl : {16, 32, 64, 128})
    for (int kl : {8, 16, 32, 64})
      for (int ps : {1, 2, 4, 8, 16})
        for (int ks : {1, 2, 4, 8, 16})
          for (int u : {2, 4, 8, 16})
            for (int cl : {1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 18, 36})
              for (int db : {0, 1}) {
                p.pl = pl, p.kl = kl, p.ps = ps, p.ks = ks, p.u = u, p.cl = cl, p.db = db;
                if (p.threads() >= 64 && conv_legal(problem, p, epilogue, device)) out.push_back(p);
              }
  return out;
}

}  // namespace isaac::lower
