#include "lower/gemm_layout.hpp"
#include "lower/tensor_core_rules.hpp"

#include <isaac/lower/gemm.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <bit>

namespace isaac::lower {

namespace {

// (x & (x - 1)): std::has_single_bit calls libgcc's popcount without -mpopcnt, and the searches
// check a million sets.
bool power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

// Can a tile of `contiguous` x `other` elements be loaded by `threads` threads, `along` of them side
// by side on the contiguous axis, each reading `vec` elements at once?
template <bool Explain>
Legality check_load_layout(char operand, int contiguous, int other, int threads, int along, int vec) {
  if (along <= 0 || threads % along != 0)
    return no<Explain>("L{0}={1} must divide the {2} threads of a block", operand, along, threads);
  if (contiguous % (along * vec) != 0)
    return no<Explain>("L{0}={1} threads x V{0}={2} elements must divide the {3} contiguous elements of the {0} tile",
                          operand, along, vec, contiguous);
  if (other % (threads / along) != 0)
    return no<Explain>("the {} threads not along the contiguous axis ({} / L{}={}) must divide the other extent {} "
                          "of the {} tile",
                          threads / along, threads, operand, along, other, operand);
  return {};
}

}  // namespace

namespace {

// Registers that hold data for the whole main loop: accumulators, the fragments of KS steps, the
// prefetched tile (DB=1) and the 64-bit addresses of the global loads.
// f32 TC=2 adds `split`: it splits each stage in registers and hands wgmma its accumulators through
// inline PTX, and ptxas used about as many registers again as the accumulators (32 random sets,
// sm_90a); they are not live through the main loop.
struct RegisterDemand {
  int accumulators, fragments, prefetch, loads, steps, split = 0;
  int live() const { return accumulators + fragments + prefetch + 2 * loads; }
};

RegisterDemand register_demand(const GemmLayout& l, ir::DType dtype, const GemmParams& p) {
  auto regs = [](int elements, int bytes) { return (elements * bytes + 3) / 4; };
  int fragment_bytes = ir::is_16_bit(dtype) && p.acc32 ? 4 : l.elem;
  // mma.sync: per 16-deep step, MS/2 A fragments of 4 registers and NS/2 B fragments of 2 (f64: MS
  // and NS/2 doubles per 4-deep step, as many registers); cp.async stages nothing in registers.
  // f32 (TF32, per 8-deep step): 2 MS and NS floats, each split in two. wgmma (TC=2) reads both
  // operands from shared memory: no fragments.
  const int tc_fragments = (dtype == ir::DType::f32 ? 2 : 1) * (2 * p.ms + p.ns);
  int fragments = p.tc == 2 ? 0 : p.tc ? tc_fragments : regs(p.ks * (p.ms + p.ns), fragment_bytes);
  const int accumulators = regs(p.ms * p.ns, l.acc_elem);
  return {accumulators,
          fragments,
          p.db && !p.tc ? regs(l.loads_a * p.va + l.loads_b * p.vb, l.elem) : 0,
          l.loads_a + l.loads_b,
          p.u / p.kl,
          p.tc == 2 && dtype == ir::DType::f32 ? accumulators : 0};
}

// The register file one thread of a block of `threads` may use (one block per SM, granule of 8). Each
// of the four schedulers holds a quarter of the file and every fourth warp: 288 threads (9 warps, 3 on
// one scheduler) leave 168 registers, not 65536 / 288.
int register_budget(int threads, const DeviceLimits& device) {
  const int warps_per_scheduler = std::max(1, (threads / 32 + 3) / 4);
  return std::min(device.max_registers_per_thread, device.registers_per_block / 4 / (32 * warps_per_scheduler) / 8 * 8);
}

// What legality keeps between the estimate and the budget (why: check_params).
constexpr int register_margin = 46;

// A least-squares fit of ptxas's counts (sm_80 and sm_90, 505 sets of the CPU sweep) on the live
// data; ptxas adds indices, predicates and scheduling slack that grow with the stage depth.
int estimate_registers(const RegisterDemand& d) {
  return d.accumulators + d.fragments / 2 + d.prefetch + 2 * d.loads + d.steps / 5 + 43 + d.split;
}

}  // namespace

bool tma_producer_fits(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device) {
  const GemmLayout l(g.dtype, g.a_trans, g.b_trans, p);
  return l.threads + 32 <= device.max_threads_per_block &&
         estimate_registers(register_demand(l, g.dtype, p)) + register_margin <= register_budget(l.threads + 32, device);
}

bool tma_producer_warp(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device) {
  if (!p.tma) return false;
  if (gemm_ping_pong(g, p, device)) return true;
  return (gemm_k_tiles_per_block(g, p) >= tma_producer_min_stages || gemm_tile_loop(g, p, device)) &&
         tma_producer_fits(g, p, device);
}

namespace {

// A tile loop numbers the tiles of all batches in 32 bits.
bool tiles_fit_a_loop(const ir::Gemm& g, const GemmParams& p) { return gemm_block_tiles(g, p) * g.batch <= 0x7fffffff; }

}  // namespace

bool gemm_ping_pong(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device) {
  const GemmLayout l(g.dtype, g.a_trans, g.b_trans, p);
  const int cells = p.ms * p.ns;
  if (!gemm_stores_c_by_tma(g, p) || !tiles_fit_a_loop(g, p) || !l.staged_stores(p) || l.threads != 128 || cells <= gemm_tile_loop_max_cells ||
      cells > gemm_ping_pong_max_cells || l.stages < 4 ||
      gemm_k_tiles_per_block(g, p) > gemm_tile_loop_max_k_tiles ||
      l.tile_loop_shared_bytes(p, 2) > device.max_shared_per_block)
    return false;
  const std::int64_t per_sm = std::max(1, device.max_shared_per_sm / (l.tile_loop_shared_bytes(p, 2) + 1024));
  return gemm_block_tiles(g, p) * g.batch >= 2 * device.sm_count * per_sm;
}

bool gemm_tile_loop(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device) {
  if (gemm_ping_pong(g, p, device)) return true;
  const GemmLayout l(g.dtype, g.a_trans, g.b_trans, p);
  if (!gemm_stores_c_by_tma(g, p) || !tiles_fit_a_loop(g, p) || !l.staged_stores(p) || l.stages < 2 ||
      p.ml > gemm_tile_loop_max_rows ||
      p.ms * p.ns > gemm_tile_loop_max_cells || gemm_k_tiles_per_block(g, p) > gemm_tile_loop_max_k_tiles ||
      l.tile_loop_shared_bytes(p) > device.max_shared_per_block || !tma_producer_fits(g, p, device))
    return false;
  // The blocks the SMs would hold at once (the registers estimated, in granules of 8 per thread, and the
  // shared memory with the 1 KB the driver reserves per block): a loop where each would run two tiles
  // or more.
  const int threads = l.threads + 32;
  const int registers = (estimate_registers(register_demand(l, g.dtype, p)) + 7) / 8 * 8;
  const std::int64_t per_sm = std::max(1, std::min({device.max_shared_per_sm / (l.tile_loop_shared_bytes(p) + 1024),
                                                   device.registers_per_block / (registers * threads), 2048 / threads}));
  return gemm_block_tiles(g, p) * g.batch >= 2 * device.sm_count * per_sm;
}

int gemm_launch_threads(const ir::Gemm& problem, const GemmParams& p) {
  return p.threads() * (gemm_ping_pong(problem, p) ? 2 : 1) + (tma_producer_warp(problem, p) ? 32 : 0);
}

int estimate_gemm_registers(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p) {
  return estimate_registers(register_demand(GemmLayout(dtype, a_trans, b_trans, p), dtype, p));
}

int gemm_shared_bytes(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p) {
  return GemmLayout(dtype, a_trans, b_trans, p).gemm_shared_bytes(p);
}

namespace {

template <bool Explain>
Legality check_params(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p, const DeviceLimits& device) {
  // bf16 arithmetic, conversions and mma start at sm_80; their reductions in memory (a split across
  // blocks adds into C) at sm_90.
  if (dtype == ir::DType::bf16 && device.sm < 80)
    return no<Explain>("bf16 needs sm_80 or newer, not sm_{}: use f16, f32 or f64", device.sm);
  if (dtype == ir::DType::bf16 && p.kg > 1 && device.sm < 90)
    return no<Explain>("KG={} with bf16 adds partial sums into C with bf16 reductions, which need sm_90, not sm_{}: "
                       "KG must be 1",
                       p.kg, device.sm);
  if (auto r = check_bounds<Explain>({{"ML", p.ml, 1024}, {"NL", p.nl, 1024}, {"MS", p.ms, 256}, {"NS", p.ns, 256},
                                      {"U", p.u, 1024}, {"KS", p.ks, 1024}, {"KL", p.kl, 1024}, {"VA", p.va, 16},
                                      {"VB", p.vb, 16}, {"LA", p.la, 1024}, {"LB", p.lb, 1024}, {"SW", p.sw, 1024},
                                      {"KG", p.kg, 65535}});
      !r)
    return r;
  for (auto [name, value] : {std::pair{"ML", p.ml}, {"NL", p.nl}, {"MS", p.ms}, {"NS", p.ns}, {"U", p.u},
                             {"KS", p.ks}, {"KL", p.kl}, {"VA", p.va}, {"VB", p.vb}})
    if (!power_of_two(value)) return no<Explain>("{}={} must be a power of two", name, value);
  if (p.kg < 1) return no<Explain>("KG={} must be at least 1 (the number of blocks that share K)", p.kg);
  if (p.db != 0 && p.db != 1) return no<Explain>("DB={} must be 0 or 1", p.db);
  if (p.sw < 1) return no<Explain>("SW={} must be at least 1", p.sw);
  if (p.ml % p.ms) return no<Explain>("MS={} must divide ML={}", p.ms, p.ml);
  if (p.nl % p.ns) return no<Explain>("NS={} must divide NL={}", p.ns, p.nl);
  if (p.u % (p.kl * p.ks))
    return no<Explain>("KL={} x KS={} must divide U={}: each warp group takes U/KL steps, KS at a time", p.kl,
                          p.ks, p.u);
  if (dtype != ir::DType::f16 && !p.acc32)
    return no<Explain>("ACC=16 (f16 accumulation) is for f16 only; {} accumulates in {}: ACC must be 32",
                       ir::name(dtype), dtype == ir::DType::f64 ? "f64" : "f32");
  if (dtype == ir::DType::f16 && !p.acc32 && p.ms % 2)
    return no<Explain>("f16 accumulation works on f16x2 pairs along M: MS={} must be even", p.ms);
  if (auto r = check_tensor_core_tiling<Explain>(dtype, p, device, gemm_keys); !r) return r;
  if (p.tma != 0 && p.tma != 1) return no<Explain>("TMA={} must be 0 or 1", p.tma);
  if (p.tma && p.tc != 2)
    return no<Explain>("TMA=1 copies the stages of a wgmma kernel: it needs TC=2, not TC={}", p.tc);
  if (p.tma && (p.ml > 256 || p.nl > 256))
    return no<Explain>("TMA=1 copies a tile in boxes of at most 256 rows: ML={} and NL={} must not exceed 256", p.ml,
                       p.nl);
  if (p.st != 0 && (!p.tma || !p.db))
    return no<Explain>("ST={} sets the depth of a TMA pipeline: it needs TMA=1 and DB=1 (ST=0 otherwise)", p.st);
  if (p.st != 0 && (p.st < 1 || (p.st > gemm_max_shallow_stages && p.st < gemm_min_deep_stages) ||
                    p.st > gemm_max_stages))
    return no<Explain>("ST={} must be 0 (four stages), 1 to {} (one buffer per K tile) or {} to {}", p.st,
                       gemm_max_shallow_stages, gemm_min_deep_stages, gemm_max_stages);
  GemmLayout l(dtype, a_trans, b_trans, p);
  if (l.threads % 32) return no<Explain>("(ML/MS)x(NL/NS)xKL = {} threads is not a whole number of warps", l.threads);
  if (l.threads > device.max_threads_per_block)
    return no<Explain>("{} threads per block exceed the device's {}", l.threads, device.max_threads_per_block);
  for (auto [name, v] : {std::pair{"VA", p.va}, {"VB", p.vb}})
    if (v * l.elem > 16) return no<Explain>("{}={} exceeds 16-byte loads for {}-byte elements", name, v, l.elem);
  if (!p.tma) {  // TMA=1: no thread loads the tiles
    if (auto r = check_load_layout<Explain>('A', l.ca, l.oa, l.threads, p.la, p.va); !r) return r;
    if (auto r = check_load_layout<Explain>('B', l.cb, l.ob, l.threads, p.lb, p.vb); !r) return r;
  }
  if (int smem = l.gemm_shared_bytes(p); smem > device.max_shared_per_block)
    return no<Explain>("{} bytes of shared memory exceed the device's {} per block", smem,
                          device.max_shared_per_block);
  // The estimate's error reaches 16 registers (one standard deviation) and ptxas spills rather
  // than exceed its budget, so legality keeps a margin. In two ptxas sweeps (1,956 sets, sm_80 and
  // sm_90), 18 sets spilled: 12 had KL > 1 (or f16 accumulation) and 128 accumulators (or 128
  // accumulator registers), 3 were f64 with MS=16 and 128 accumulator registers, the others had an
  // estimate within 46 registers of the budget or live data above 70% of it. The margin is the sweep's boundary: the largest
  // estimate that spilled was 210 against a budget of 255, while a 128 x 128 f32 tile of 16 x 8
  // (estimate 208, the fastest f32 set at 4096^3) did not.
  int budget = register_budget(l.threads, device);
  const RegisterDemand demand = register_demand(l, dtype, p);
  int registers = estimate_registers(demand);
  if (registers + register_margin > budget)
    return no<Explain>("an estimated {} registers per thread (+{} of margin) exceed the budget of {} for {} threads",
                       registers, register_margin, budget, l.threads);
  const bool half_acc = dtype == ir::DType::f16 && !p.acc32;
  if ((p.kl > 1 || half_acc) && (demand.accumulators >= 128 || p.ms * p.ns >= 128))
    return no<Explain>("{} with MS x NS = {} accumulators ({} registers) per thread: ptxas spills such sets (use a "
                       "smaller MS x NS)",
                       half_acc && p.kl == 1 ? std::string("f16 accumulation") : fmt::format("KL={}", p.kl),
                       p.ms * p.ns, demand.accumulators);
  if (dtype == ir::DType::f64 && p.ms == 16 && demand.accumulators >= 128)
    return no<Explain>("f64 with MS=16 and {} accumulator registers per thread: ptxas spills such sets (use MS <= 8)",
                       demand.accumulators);
  if (int live = demand.live(); 10 * live > 7 * budget)
    return no<Explain>("{} registers of accumulators, fragments, prefetch and addresses exceed 70% of the budget "
                          "of {} for {} threads",
                          live, budget, l.threads);
  return {};
}

// The problem whatever the parameters: a kernel given leading dimensions shorter than the columns they
// step over, batches of C that overlap, or offsets past 64 bits would write wrong results silently.
template <bool Explain>
Legality check_layout(const ir::Gemm& g) {
  if (g.m < 1 || g.n < 1 || g.k < 0 || g.batch < 1)
    return no<Explain>("GEMM sizes must be positive (K may be 0): {}", ir::to_string(g));
  if (g.m > 0x7fffffff || g.n > 0x7fffffff || g.k > 0x7fffffff) return no<Explain>("M, N and K must each fit in 32 bits");
  // Each operand as stored, column-major: rows, columns, leading dimension, batch stride.
  struct Stored {
    char name;
    std::int64_t rows, columns, ld, stride;
  };
  const Stored operands[] = {{'A', g.a_trans ? g.k : g.m, g.a_trans ? g.m : g.k, g.lda, g.stride_a},
                             {'B', g.b_trans ? g.n : g.k, g.b_trans ? g.k : g.n, g.ldb, g.stride_b},
                             {'C', g.m, g.n, g.ldc, g.stride_c}};
  const auto elem = static_cast<__int128>(ir::size_of(g.dtype));
  for (const Stored& s : operands) {
    if (s.columns > 1 && s.ld < s.rows)
      return no<Explain>("ld{}={} is shorter than the {} rows of {} as stored ({}): it must be at least {}",
                         char(s.name + 32), s.ld, s.rows, s.name, ir::to_string(g), s.rows);
    if (g.batch > 1 && s.stride < 0)
      return no<Explain>("the batch stride of {} is {}: batch strides must not be negative (0 repeats an input)",
                         s.name, s.stride);
    const __int128 last = (__int128(s.columns) - 1) * s.ld + s.rows - 1 + __int128(g.batch - 1) * s.stride;
    if ((last + 1) * elem > std::numeric_limits<std::int64_t>::max())
      return no<Explain>("{} spans more than 2^63 bytes with ld{}={} and batch stride {}", s.name, char(s.name + 32),
                         s.ld, s.stride);
  }
  // Distinct elements of C at distinct addresses: sorted by stride, each dimension steps over all that
  // the smaller ones span (batches may interleave with C's columns, as attention's heads do).
  std::array<std::pair<std::int64_t, std::int64_t>, 3> dims{{{1, g.m}, {g.ldc, g.n}, {g.stride_c, g.batch}}};
  std::ranges::sort(dims);
  __int128 spanned = 0;
  for (auto [stride, extent] : dims) {
    if (extent == 1) continue;
    if (stride <= spanned)
      return no<Explain>("two elements of C share memory: with ldc={} and batch stride {}, C's {} rows, {} columns "
                         "and {} batches overlap",
                         g.ldc, g.stride_c, g.m, g.n, g.batch);
    spanned += __int128(stride) * (extent - 1);
  }
  return {};
}

// The problem on the device, whatever the parameters.
template <bool Explain>
Legality check_problem_alone(const ir::Gemm& g, const DeviceLimits& device) {
  if (auto r = check_layout<Explain>(g); !r) return r;
  if (g.batch > 65535) return no<Explain>("batch={} exceeds 65535, the grid's z limit", g.batch);
  if (g.dtype == ir::DType::bf16 && device.sm < 80)
    return no<Explain>("bf16 needs sm_80 or newer, not sm_{}: use f16, f32 or f64", device.sm);
  return {};
}

template <bool Explain>
Legality check_problem(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device) {
  if (auto r = check_problem_alone<Explain>(g, device); !r) return r;
  if (auto r = check_params<Explain>(g.dtype, g.a_trans, g.b_trans, p, device); !r) return r;
  int elem = static_cast<int>(ir::size_of(g.dtype));
  // A vector load must lie inside one row or column and start aligned: the contiguous extent, the
  // leading dimension, the batch stride and the base address must all be multiples of it.
  auto check_vector = [&](char operand, int v, std::int64_t contiguous, std::int64_t ld, std::int64_t stride,
                          int align) -> Legality {
    if (v == 1) return {};
    if (contiguous % v)
      return no<Explain>("V{}={} must divide the contiguous extent {} of {}", operand, v, contiguous, operand);
    if (ld % v) return no<Explain>("V{}={} must divide ld{}={}", operand, v, char(operand + 32), ld);
    if (g.batch > 1 && stride % v)
      return no<Explain>("V{}={} must divide the batch stride {} of {}", operand, v, stride, operand);
    if (align % (v * elem))
      return no<Explain>("V{}={} needs {}-byte aligned {}, which is only {}-byte aligned", operand, v, v * elem,
                            operand, align);
    return {};
  };
  if (auto r = check_vector('A', p.va, g.a_trans ? g.k : g.m, g.lda, g.stride_a, g.align_a); !r) return r;
  if (auto r = check_vector('B', p.vb, g.b_trans ? g.n : g.k, g.ldb, g.stride_b, g.align_b); !r) return r;
  if (p.tma && g.batch > 1 && (g.stride_a == 0 || g.stride_b == 0))
    return no<Explain>("TMA=1 reads the batches along a tensor map's third axis, which cannot repeat an operand: "
                       "batch strides of 0 need TMA=0");
  std::int64_t k_tiles = (g.k + p.u - 1) / p.u;
  if (p.st != 0 && p.st <= gemm_max_shallow_stages && gemm_k_tiles_per_block(g, p) > p.st)
    return no<Explain>("ST={} holds at most {} K tiles, all copied at once, and a block here reads {} (K={}, U={}, "
                       "KG={}): use ST=0 or a deeper one",
                       p.st, p.st, gemm_k_tiles_per_block(g, p), g.k, p.u, p.kg);
  if (p.kg > 1 && p.kg > k_tiles)
    return no<Explain>("KG={} splits K={} into more pieces than its {} tiles of U={}", p.kg, g.k, k_tiles, p.u);
  if (p.kg > 65535 || g.batch > 65535) return no<Explain>("KG and the batch count are limited to 65535 (grid y and z)");
  const std::int64_t tiles = gemm_block_tiles(g, p);
  if (tiles > 0x7fffffff) return no<Explain>("{} tiles exceed the grid's x limit", tiles);
  // The swizzle walks groups of SW rows of tiles, each as wide as C's columns of tiles: 32-bit counts.
  if (p.sw > 1 && (g.n + p.nl - 1) / p.nl * p.sw > 0x7fffffff)
    return no<Explain>("SW={} groups of {} column tiles exceed 32 bits: use SW=1", p.sw, (g.n + p.nl - 1) / p.nl);
  return {};
}

}  // namespace

Legality check_gemm_params(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p,
                           const DeviceLimits& device) {
  return check_params<true>(dtype, a_trans, b_trans, p, device);
}

Legality check_gemm(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device) {
  return check_problem<true>(g, p, device);
}

Legality check_gemm_problem(const ir::Gemm& g, const DeviceLimits& device) {
  return check_problem_alone<true>(g, device);
}

bool gemm_legal(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device) {
  return check_problem<false>(g, p, device).legal;
}

}  // namespace isaac::lower
