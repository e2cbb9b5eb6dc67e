// Whether a direct CONV kernel copies its tiles with the Tensor Memory Accelerator, and the tensor
// maps its launches build (lower/conv.hpp, conv_tma).
#include "lower/conv_layout.hpp"

#include <isaac/lower/conv.hpp>

#include <algorithm>

namespace isaac::lower {

namespace {

// The windows' first taps range over [-pad, (P - 1) * stride - pad] along each axis: the bounding
// box's upper corner is that end's distance past the image's last row or column.
int upper_corner(std::int64_t extent, std::int64_t out, std::int64_t stride, std::int64_t pad) {
  return static_cast<int>((out - 1) * stride + 1 - pad - extent);
}

bool within_corner_range(std::int64_t x) { return x >= -128 && x <= 127; }

// The shallowest ring deeper than four stages that a CONV kernel takes. On the H200 (round 60: 210
// sets of DeepBench's Conv6-8, 13 and 14 whose grids fit on the SMs), rings of 8 to 16 stages ran 64 x 32
// to 128 x 64 tiles 1.2-1.6x as fast as four stages (geometric means per tile shape), while 128 x 128
// tiles, whose 32 KB stages leave room for six, ran 0.90-0.96x as fast, and 256 x 32 tiles (five)
// 1.02x.
constexpr int conv_min_deep_stages = 8;

// The implicit GEMM as GEMM's TMA rules see it: an NHWC input is A with K (the reduction)
// contiguous, a KRSC filter is B with K contiguous.
ir::Gemm implicit_tma_gemm(const ir::Conv& v) {
  ir::Gemm g;
  g.dtype = v.dtype;
  g.m = v.n * v.p * v.q, g.n = v.k, g.k = v.c * v.r * v.s;
  g.a_trans = true, g.b_trans = false;
  return g;
}

}  // namespace

bool conv_tma(const ir::Conv& v, const ConvParams& p) {
  if (p.tc != 2 || p.wg || !ir::is_16_bit(v.dtype)) return false;
  if (v.input_layout != ir::ImageLayout::nhwc || v.filter_layout != ir::FilterLayout::krsc) return false;
  if (v.c % p.u || p.pl > 256 || p.kl > 256) return false;
  // ptxas spills the TMA kernel of a KL = 256 tile under a CG split (255 registers and 270 bytes of
  // spills for PL=128, KS=8, U=16 to 64, where the cp.async kernel needs 210; a 256 x 128 tile needs 154).
  if (p.kl == 256 && p.cg > 1) return false;
  const std::int64_t elem = 2;
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;
  if (is[1] != 1 || fs[1] != 1 || v.align_input % 16 || v.align_filter % 16) return false;
  for (std::int64_t stride : {is[0], is[2], is[3], fs[0], fs[2], fs[3]})
    if ((stride * elem) % 16) return false;
  if (v.stride_h > 8 || v.stride_w > 8) return false;
  // The filter offsets of a copy are 16-bit.
  if ((v.r - 1) * v.dilation_h > 32767 || (v.s - 1) * v.dilation_w > 32767) return false;
  return std::ranges::all_of(
      std::array<std::int64_t, 4>{-v.pad_w, -v.pad_h, upper_corner(v.w, v.q, v.stride_w, v.pad_w),
                                  upper_corner(v.h, v.p, v.stride_h, v.pad_h)},
      within_corner_range);
}

bool conv_tma_producer_warp(const ir::Conv& v, const ConvParams& p) {
  if (!conv_tma(v, p)) return false;
  return conv_tile_loop(v, p) || tma_producer_warp(implicit_tma_gemm(v), conv_kernel_tiling(v, p));
}

bool conv_tile_loop(const ir::Conv& v, const ConvParams& p, const DeviceLimits& device) {
  if (!conv_tma(v, p) || !conv_staged_stores(v, p) || p.cg != 1 || p.pl > gemm_tile_loop_max_rows ||
      p.ps * p.ks > gemm_tile_loop_max_cells)
    return false;
  const GemmParams t = conv_kernel_tiling(v, p);
  if (t.st) return false;  // a deep ring: the grid fits on the SMs
  const ir::Gemm g = implicit_tma_gemm(v);
  const GemmLayout l(v.dtype, conv_input_reduction_contiguous(v), conv_filter_k_contiguous(v), t);
  const std::int64_t tiles = gemm_block_tiles(g, t);
  const int shared = conv_tiling_shared_bytes(v, p, t, true);
  if (l.stages < 2 || tiles > 0x7fffffff || gemm_k_tiles_per_block(g, t) > gemm_tile_loop_max_k_tiles ||
      shared > device.max_shared_per_block || !tma_producer_fits(g, t, device))
    return false;
  // A loop's staging of its own must not cost blocks per SM, counted by shared memory (with the 1 KB the
  // driver reserves per block) and threads: where the grid's blocks fit two or more per SM, they
  // overlap one block's stores with another's main loop already, and loops with one per SM ran Conv9's
  // 128 x 128 tiles 5-12% slower on the H200 (docs/conv.md, "Tile loops"). Registers are left out:
  // the estimate is too coarse for it (Conv10's grid has 95 registers, its loop 128).
  const int threads = l.threads + 32;
  const auto blocks_per_sm = [&](int bytes) { return std::min(device.max_shared_per_sm / (bytes + 1024), 2048 / threads); };
  if (blocks_per_sm(shared) < blocks_per_sm(conv_tiling_shared_bytes(v, p, t, false))) return false;
  // The blocks the SMs would hold at once (as gemm_tile_loop counts them): a loop where each would run
  // two tiles or more.
  const int registers = (estimate_conv_registers(v.dtype, conv_input_reduction_contiguous(v), conv_filter_k_contiguous(v), p, true) + 7) / 8 * 8;
  const std::int64_t per_sm = std::max(1, std::min({device.max_shared_per_sm / (shared + 1024),
                                                   device.registers_per_block / (registers * threads), 2048 / threads}));
  return tiles >= 2 * device.sm_count * per_sm;
}

unsigned conv_tile_loop_blocks(const ir::Conv& v, const ConvParams& p, std::int64_t resident) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(resident, 1, gemm_block_tiles(implicit_tma_gemm(v), conv_as_gemm(p))));
}

int conv_pipeline_stages(const ir::Conv& v, const ConvParams& p) {
  if (!conv_tma(v, p)) return 0;
  const ir::Gemm g = implicit_tma_gemm(v);
  GemmParams t = conv_as_gemm(p);
  t.tma = 1;
  if (!gemm_runs_deep_pipeline(g, t)) return 0;
  // The deepest whose shared memory, the staging of the stores and the mbarriers included, fits.
  const int budget = std::min(gemm_deep_pipeline_bytes, DeviceLimits{}.max_shared_per_block);
  t.st = int(std::min<std::int64_t>(gemm_max_stages, gemm_k_tiles_per_block(g, t)));
  while (t.st >= conv_min_deep_stages && conv_tiling_shared_bytes(v, p, t, false) > budget) --t.st;
  return t.st >= conv_min_deep_stages ? t.st : 0;
}

bool conv_stores_by_tma(const ir::Conv& v, const ConvParams& p) {
  const auto& os = v.output_strides;
  // K a multiple of 8 as well: on a K = 36 output in rows of 48, TMA wrote 968 elements of the gaps
  // after the last filter, 4 a pixel: as if it stored whole 16 bytes (filters 32 to 39), H200.
  return conv_tma(v, p) && conv_staged_stores(v, p) && p.cg == 1 && p.kl % 64 == 0 && v.k % 8 == 0 &&
         v.align_output % 16 == 0 && os[1] == 1 && os[2] == os[3] * v.q && os[0] == os[2] * v.p && os[3] >= v.k &&
         (os[3] * 2) % 16 == 0;
}

ConvTensorMaps conv_tensor_maps(const ir::Conv& v, const ConvParams& p) {
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;
  const std::uint64_t elem = 2;
  ConvTensorMaps m;
  m.input_dims = {std::uint64_t(v.c), std::uint64_t(v.w), std::uint64_t(v.h), std::uint64_t(v.n)};
  m.input_strides = {is[3] * elem, is[2] * elem, is[0] * elem};
  m.lower_corner = {static_cast<int>(-v.pad_w), static_cast<int>(-v.pad_h)};
  m.upper_corner = {upper_corner(v.w, v.q, v.stride_w, v.pad_w), upper_corner(v.h, v.p, v.stride_h, v.pad_h)};
  m.channels = static_cast<std::uint32_t>(p.u);
  m.pixels = static_cast<std::uint32_t>(p.pl);
  m.element_strides = {1, static_cast<std::uint32_t>(v.stride_w), static_cast<std::uint32_t>(v.stride_h), 1};
  m.filter_dims = {std::uint64_t(v.c), std::uint64_t(v.s), std::uint64_t(v.r), std::uint64_t(v.k)};
  m.filter_strides = {fs[3] * elem, fs[2] * elem, fs[0] * elem};
  m.filter_box = {static_cast<std::uint32_t>(p.u), 1, 1, static_cast<std::uint32_t>(p.kl)};
  m.swizzle_bytes = static_cast<int>(std::min<std::int64_t>(128, p.u * elem));
  if (conv_stores_by_tma(v, p)) {
    m.output_dims = {std::uint64_t(v.k), std::uint64_t(v.n * v.p * v.q), 1};
    m.output_strides = {std::uint64_t(v.output_strides[3]) * elem, std::uint64_t(v.n * v.p * v.q * v.output_strides[3]) * elem};
    m.output_box = {64, static_cast<std::uint32_t>(p.pl), 1};
  }
  return m;
}

}  // namespace isaac::lower
