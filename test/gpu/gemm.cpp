// The GEMM template on the GPU against the float64 reference: every dtype and layout, awkward sizes,
// random legal parameter sets, beta != 0, padded leading dimensions, batches, and both KG modes.
#include <doctest/doctest.h>
#include <isaac/gemm.hpp>
#include <isaac/ir/evaluate.hpp>
#include <isaac/runtime/runtime.hpp>

#include "support/host_data.hpp"
#include "support/parallel_compile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

using namespace isaac;
using test::HostArray;

namespace {

struct Case {
  ir::Gemm problem;
  double alpha, beta;
  lower::GemmParams params;
  lower::SplitMode mode;
  std::size_t c_offset = 0;  // elements between the allocation and C: 1 leaves C only 2-byte aligned (f16)
};

std::string describe(const Case& c) {
  return fmt::format("{} alpha={} beta={} params={} split={}{}", ir::to_string(c.problem), c.alpha, c.beta,
                     c.params.str(), c.mode == lower::SplitMode::atomic ? "atomic" : "deterministic",
                     c.c_offset ? fmt::format(" C offset by {} elements", c.c_offset) : "");
}

// A problem with leading dimensions padded by `pad` elements: the padding must stay untouched.
ir::Gemm padded(ir::DType t, std::int64_t m, std::int64_t n, std::int64_t k, bool at, bool bt, std::int64_t batch,
                std::int64_t pad) {
  ir::Gemm g = ir::dense_gemm(t, m, n, k, at, bt, batch);
  g.lda += pad, g.ldb += pad, g.ldc += pad;
  g.stride_a = g.lda * (at ? m : k);
  g.stride_b = g.ldb * (bt ? k : n);
  g.stride_c = g.ldc * n;
  return g;
}

// Picks `count` legal parameter sets for the problem, spread over the space, with a fixed seed.
std::vector<lower::GemmParams> pick(const ir::Gemm& g, int count, std::mt19937_64& rng,
                                    const lower::DeviceLimits& limits) {
  auto space = lower::gemm_space(g, limits);
  REQUIRE_MESSAGE(!space.empty(), "no legal parameters for " << ir::to_string(g));
  std::vector<lower::GemmParams> out;
  for (int i = 0; i < count; ++i) out.push_back(space[std::uniform_int_distribution<size_t>(0, space.size() - 1)(rng)]);
  return out;
}

// Awkward sizes: 1, primes, one past a tile edge, K = 1 and K = 60000, batches, padded leading dimensions.
struct Shape {
  std::int64_t m, n, k, batch, pad;
};

std::vector<Case> make_cases(const lower::DeviceLimits& limits,
                             std::initializer_list<ir::DType> dtypes = {ir::DType::f32, ir::DType::f64, ir::DType::f16}) {
  std::mt19937_64 rng(20261122);
  const Shape shapes[] = {
      {1, 1, 1, 1, 0},       {37, 53, 61, 1, 0},  {65, 17, 33, 1, 4},    {128, 128, 1, 1, 0},
      {31, 29, 60000, 1, 0}, {257, 129, 97, 1, 0}, {64, 64, 128, 3, 4},   {256, 96, 256, 1, 0},
  };
  std::vector<Case> cases;
  for (ir::DType t : dtypes)
    for (int layout = 0; layout < 4; ++layout)
      for (const Shape& s : shapes) {
        bool at = layout & 1, bt = layout & 2;
        ir::Gemm g = padded(t, s.m, s.n, s.k, at, bt, s.batch, s.pad);
        for (const auto& p : pick(g, 2, rng, limits)) {
          double beta = cases.size() % 2 ? 0.0 : -0.75;
          auto mode = cases.size() % 3 ? lower::SplitMode::atomic : lower::SplitMode::deterministic;
          cases.push_back({g, 1.25, beta, p, mode});
        }
        // Always cover the split modes and warp-group splits where the problem allows them.
        for (auto p : pick(g, 1, rng, limits)) {
          p.kg = 4;
          if (lower::check_gemm(g, p, limits))
            for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
              cases.push_back({g, -0.5, 0.5, p, mode});
        }
      }
  return cases;
}

// Tensor-core (TC=1) f16, f32 (TF32 parts) and f64 kernels: random TC sets of the space for every layout and awkward
// size, with warp-group (KL) and block (KG) splits where the problem allows them.
std::vector<Case> make_tc_cases(const lower::DeviceLimits& limits,
                                std::initializer_list<ir::DType> dtypes = {ir::DType::f16, ir::DType::f32,
                                                                           ir::DType::f64}) {
  std::vector<Case> cases;
  if (limits.sm < 80) return cases;
  std::mt19937_64 rng(80);
  const Shape shapes[] = {
      {1, 1, 1, 1, 0},     {37, 53, 61, 1, 0},    {65, 17, 33, 1, 4},   {128, 128, 1, 1, 0},
      {31, 29, 60000, 1, 0}, {257, 129, 97, 1, 0}, {64, 64, 128, 3, 4}, {129, 65, 2053, 1, 0},
  };
  for (ir::DType t : dtypes)
  for (int layout = 0; layout < 4; ++layout)
    for (const Shape& s : shapes) {
      bool at = layout & 1, bt = layout & 2;
      ir::Gemm g = padded(t, s.m, s.n, s.k, at, bt, s.batch, s.pad);
      std::vector<lower::GemmParams> tc, warp_split;
      for (const auto& p : lower::gemm_space(g, limits)) {
        if (p.tc) tc.push_back(p);
        if (p.tc && p.kl > 1) warp_split.push_back(p);
      }
      REQUIRE_MESSAGE(!tc.empty(), "no TC=1 parameters for " << ir::to_string(g));
      auto any = [&](const std::vector<lower::GemmParams>& from) {
        return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
      };
      for (int i = 0; i < 3; ++i)
        cases.push_back({g, 1.25, i % 2 ? 0.0 : -0.75, any(tc), lower::SplitMode::atomic});
      if (!warp_split.empty()) cases.push_back({g, 0.5, 2.0, any(warp_split), lower::SplitMode::atomic});
      auto split = any(tc);
      split.kg = 4;
      if (lower::check_gemm(g, split, limits))
        for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
          cases.push_back({g, -0.5, 0.5, split, mode});
    }
  return cases;
}

// A TC=2 problem of the shape: the contiguous extents rounded up to whole 16-byte copies (8 f16, 4
// f32), the others left awkward (M too, unless `whole_m`); C's columns 16 bytes apart, so that TMA=1
// without a split moves C by TMA where M is whole (gemm_stores_c_by_tma) and the threads store it
// elsewhere.
ir::Gemm wgmma_problem(const Shape& s, bool at, bool bt, ir::DType dtype = ir::DType::f16, bool whole_m = false) {
  const std::int64_t v = 16 / std::int64_t(ir::size_of(dtype));
  auto round = [v](std::int64_t x) { return (x + v - 1) / v * v; };
  ir::Gemm g = padded(dtype, at && !whole_m ? s.m : round(s.m), bt ? round(s.n) : s.n, at || !bt ? round(s.k) : s.k, at,
                      bt, s.batch, s.pad);
  g.ldc = round(g.ldc);
  g.stride_c = g.ldc * g.n;
  return g;
}

// TC=2 (wgmma, sm_90 only) kernels: random TC=2 sets for every layout at awkward sizes, with KG
// splits in both modes; f16, or f32 (three TF32 products from split copies of each stage). Their
// 16-byte copies need contiguous extents and leading dimensions that are multiples of 8 (f32: 4):
// those extents are rounded up, the others stay awkward. With `tma` (f16), sets with TMA=1, whose
// copies read zeros past every edge instead; the long K (60000, 2053) gives their blocks the 8
// stages or more for which a producer warp issues the copies, the short ones leave them to thread 0.
std::vector<Case> make_wgmma_cases(const lower::DeviceLimits& limits, bool tma = false,
                                   ir::DType dtype = ir::DType::f16) {
  std::vector<Case> cases;
  if (limits.sm != 90) return cases;
  std::mt19937_64 rng(90);
  const Shape shapes[] = {
      {1, 1, 1, 1, 0},       {37, 53, 61, 1, 0},   {65, 17, 33, 1, 8},    {128, 128, 1, 1, 0},  {31, 29, 60000, 1, 0},
      {257, 129, 97, 1, 0}, {64, 64, 128, 3, 8}, {129, 65, 2053, 1, 0}, {200, 264, 72, 1, 0},
  };
  for (int layout = 0; layout < 4; ++layout)
    for (const Shape& s : shapes) {
      bool at = layout & 1, bt = layout & 2;
      const ir::Gemm g = wgmma_problem(s, at, bt, dtype);
      std::vector<lower::GemmParams> wgmma;
      // The space's TC=2 sets copy with TMA; some of them need it (their LA and LB do not tile a
      // cp.async copy), so the cp.async family keeps those legal without it.
      for (auto p : lower::gemm_space(g, limits)) {
        p.tma = tma;
        lower::fit_gemm_pipeline_depth(g, p, limits);
        if (p.tc == 2 && lower::gemm_legal(g, p, limits)) wgmma.push_back(p);
      }
      REQUIRE_MESSAGE(!wgmma.empty(), "no TC=2 parameters for " << ir::to_string(g));
      auto any = [&] { return wgmma[std::uniform_int_distribution<size_t>(0, wgmma.size() - 1)(rng)]; };
      for (int i = 0; i < 3; ++i) cases.push_back({g, 1.25, i % 2 ? 0.0 : -0.75, any(), lower::SplitMode::atomic});
      auto split = any();
      split.kg = 4;
      lower::fit_gemm_pipeline_depth(g, split, limits);
      if (lower::check_gemm(g, split, limits))
        for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
          cases.push_back({g, -0.5, 0.5, split, mode});
    }
  return cases;
}

// TMA=1 pipelines deeper than four stages (ST), at depths the rule picks and others: 5, 8, 13 and 16
// buffers, more than a block's K tiles (K = 97, 128) or fewer (2053, 60000: with a producer warp),
// with KG = 2 in both modes, in every layout; M whole, so that TMA moves C.
std::vector<Case> make_deep_pipeline_cases(const lower::DeviceLimits& limits) {
  std::vector<Case> cases;
  if (limits.sm != 90) return cases;
  std::mt19937_64 rng(91);
  const Shape shapes[] = {{129, 65, 2053, 1, 0}, {257, 129, 97, 1, 0}, {64, 64, 128, 3, 8}, {31, 29, 60000, 1, 0}};
  for (int layout = 0; layout < 4; ++layout)
    for (const Shape& s : shapes) {
      bool at = layout & 1, bt = layout & 2;
      const ir::Gemm g = wgmma_problem(s, at, bt, ir::DType::f16, true);
      std::vector<lower::GemmParams> tma;
      for (const auto& p : lower::gemm_space(g, limits))
        if (p.tma && p.db) tma.push_back(p);
      REQUIRE_MESSAGE(!tma.empty(), "no TMA=1 DB=1 parameters for " << ir::to_string(g));
      for (int pick = 0; pick < 2; ++pick) {
        lower::GemmParams p = tma[std::uniform_int_distribution<size_t>(0, tma.size() - 1)(rng)];
        for (int st : {5, 8, 13, 16}) {
          p.st = st;
          if (!lower::gemm_legal(g, p, limits)) continue;  // the footprint of 13 or 16 stages of a large tile
          cases.push_back({g, 1.25, st % 2 ? 0.0 : -0.75, p, lower::SplitMode::atomic});
          if (st != 8) continue;
          lower::GemmParams split = p;
          split.kg = 2;
          if (lower::check_gemm(g, split, limits))
            for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
              cases.push_back({g, -0.5, 0.5, split, mode});
        }
      }
    }
  return cases;
}

// TMA=1 with one buffer per K tile (ST=1 or 2, where a block reads at most two K tiles): K of 1, one
// tile less a few, one tile and a little (two tiles, the last partial), two whole tiles, a split
// whose blocks read one tile each, and a batch, in every layout: a random set of each depth the
// space gives the shape (M whole, so that TMA moves C).
std::vector<Case> make_shallow_pipeline_cases(const lower::DeviceLimits& limits) {
  std::vector<Case> cases;
  if (limits.sm != 90) return cases;
  std::mt19937_64 rng(92);
  const Shape shapes[] = {{64, 64, 1, 1, 0}, {37, 53, 61, 1, 0}, {200, 264, 72, 1, 0}, {129, 65, 128, 3, 8}};
  for (int layout = 0; layout < 4; ++layout)
    for (const Shape& s : shapes) {
      bool at = layout & 1, bt = layout & 2;
      const ir::Gemm g = wgmma_problem(s, at, bt, ir::DType::f16, true);
      std::vector<std::vector<lower::GemmParams>> by_depth(lower::gemm_max_shallow_stages + 1);
      for (const auto& p : lower::gemm_space(g, limits))
        if (p.tma && p.kg == 1 && p.st != 0 && p.st <= lower::gemm_max_shallow_stages)
          by_depth[std::size_t(p.st)].push_back(p);
      REQUIRE_MESSAGE(by_depth[1].size() + by_depth[2].size() > 0, "no TMA=1 ST=1 or 2 parameters for " << ir::to_string(g));
      for (const auto& shallow : by_depth) {
        if (shallow.empty()) continue;
        const lower::GemmParams p = shallow[std::uniform_int_distribution<size_t>(0, shallow.size() - 1)(rng)];
        cases.push_back({g, 1.25, (p.st + layout) % 2 ? 0.0 : -0.75, p, lower::SplitMode::atomic});
        lower::GemmParams split = p;
        split.kg = 2;
        lower::fit_gemm_pipeline_depth(g, split, limits);
        if (lower::check_gemm(g, split, limits))
          for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
            cases.push_back({g, -0.5, 0.5, split, mode});
      }
    }
  return cases;
}

// TMA=1 without a split moves C by TMA where it can (lower::gemm_stores_c_by_tma), in boxes of 64 rows
// clipped at C's edges: a box of 8 rows (M = 200 and 8), one wholly outside (M = 8 with 128-row
// tiles), a column edge (N prime), a batch, C 16 bytes past the allocation's start; beta = 0 (NaNs in
// C, never read), beta != 0 (C read by TMA), and beta = 1e-50, which is 0 in f32. Where it cannot,
// the same kernels' threads store C: M = 37 and 61 (ldc 40 and 64), ldc = 201, C only 2-byte aligned.
// Two tile heights, in every layout.
std::vector<Case> make_tensor_store_cases(const lower::DeviceLimits& limits) {
  std::vector<Case> cases;
  if (limits.sm != 90) return cases;
  struct Store {
    Shape shape;
    std::int64_t ldc_extra;
    double beta;
    std::size_t c_offset;  // elements
  };
  const Store stores[] = {
      {{200, 53, 72, 1, 0}, 0, 0.0, 0},  {{8, 37, 64, 1, 0}, 0, 0.0, 0},      {{64, 64, 128, 3, 8}, 0, 0.0, 0},
      {{200, 53, 72, 1, 0}, 0, -0.75, 0}, {{8, 37, 64, 1, 0}, 0, 0.5, 0},     {{64, 64, 128, 3, 8}, 0, 2.0, 8},
      {{200, 53, 72, 1, 0}, 0, 1e-50, 8}, {{37, 53, 72, 1, 0}, 0, 0.0, 0},    {{61, 29, 64, 2, 0}, 0, -0.75, 0},
      {{200, 53, 72, 1, 0}, 1, 0.0, 0},   {{200, 53, 72, 1, 0}, 1, 0.5, 0},   {{200, 53, 72, 1, 0}, 0, 0.0, 1},
  };
  int by_threads = 0;
  for (const char* text : {"ML=128,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1",
                           "ML=64,NL=128,MS=8,NS=8,U=32,VA=8,VB=8,TC=2,TMA=1"})
    for (int layout = 0; layout < 4; ++layout)
      for (const Store& s : stores) {
        const bool at = layout & 1, bt = layout & 2;
        ir::Gemm g = wgmma_problem(s.shape, at, bt);  // M = 37 and 61 stay awkward only where A is K-contiguous
        g.ldc += s.ldc_extra;
        g.stride_c = g.ldc * g.n;
        if (s.c_offset % 8) g.align_c = 2;
        lower::GemmParams p = lower::parse_gemm_params(text);
        lower::fit_gemm_pipeline_depth(g, p, limits);
        auto legal = lower::check_gemm(g, p, limits);
        REQUIRE_MESSAGE(legal.legal, legal.reason << " for " << ir::to_string(g));
        const bool by_tma = g.m % 8 == 0 && g.ldc % 8 == 0 && s.c_offset % 8 == 0;
        REQUIRE_MESSAGE(lower::gemm_stores_c_by_tma(g, p) == by_tma, ir::to_string(g));
        by_threads += !by_tma;
        cases.push_back({g, 1.25, s.beta, p, lower::SplitMode::atomic, s.c_offset});
      }
  CHECK(by_threads == 2 * (4 * 3 + 2 * 2));  // ldc = 201 and 2-byte aligned C everywhere, M awkward in TN and TT
  return cases;
}

// Tile loops (lower::gemm_tile_loop): grids of more tiles than the device holds blocks at once, so
// that each block computes several tiles through one ring of stages. Many batches of small problems
// (up to 1,100: one block per batch, which runs all of its tiles) and a few of larger ones; K of one
// tile and less, of two to four and of six to 21 ending in a partial tile (the ring's stages run on from
// tile to tile); N prime; batch strides padded; beta = 0 (C full of NaN), -0.75 and 0.5 (C read by TMA
// each tile). A random set of the space per shape, layout and depth (ST=2, or 0 for a ring of three or four).
std::vector<Case> make_tile_loop_cases(const lower::DeviceLimits& limits) {
  std::vector<Case> cases;
  if (limits.sm != 90) return cases;
  std::mt19937_64 rng(93);
  const Shape shapes[] = {{128, 137, 40, 1100, 0}, {256, 263, 200, 40, 8}, {192, 200, 72, 300, 0}, {64, 137, 330, 800, 8}};
  const double betas[] = {0.0, -0.75, 0.5};
  for (int layout = 0; layout < 4; ++layout)
    for (const Shape& s : shapes) {
      bool at = layout & 1, bt = layout & 2;
      const ir::Gemm g = wgmma_problem(s, at, bt, ir::DType::f16, true);
      std::map<int, std::vector<lower::GemmParams>> by_depth;  // ST=2 (one K tile) and 0 (more)
      for (auto p : lower::gemm_space(g, limits)) {
        lower::fit_gemm_pipeline_depth(g, p, limits);
        if (lower::gemm_legal(g, p, limits) && lower::gemm_tile_loop(g, p)) by_depth[p.st].push_back(p);
      }
      REQUIRE_MESSAGE(!by_depth.empty(), "no tile-loop parameters for " << ir::to_string(g));
      for (const auto& [depth, loops] : by_depth)
        cases.push_back({g, 1.25, betas[cases.size() % 3], loops[std::uniform_int_distribution<size_t>(0, loops.size() - 1)(rng)],
                         lower::SplitMode::atomic});
    }
  return cases;
}

// Ping-pong tile loops (lower::gemm_ping_pong): two consumer warp groups take a block's tiles and the
// turns of their main loops in turn. Batches of more tiles than four per block (one block per batch),
// an odd count of them per block so that one group runs a tile more than the other; K of one tile and
// less, of two, of four and of six ending in a partial tile; N prime; batch strides padded; beta = 0
// (C full of NaN), -0.75 and 0.5 (C read by TMA each tile, into each group's staging). A random set of
// the space per shape and layout.
std::vector<Case> make_ping_pong_cases(const lower::DeviceLimits& limits) {
  std::vector<Case> cases;
  if (limits.sm != 90) return cases;
  std::mt19937_64 rng(94);
  const Shape shapes[] = {{384, 263, 40, 150, 0}, {256, 389, 200, 140, 8}, {640, 131, 128, 133, 0}, {128, 131, 330, 150, 0}};
  const double betas[] = {0.0, -0.75, 0.5};
  for (int layout = 0; layout < 4; ++layout)
    for (const Shape& s : shapes) {
      bool at = layout & 1, bt = layout & 2;
      const ir::Gemm g = wgmma_problem(s, at, bt, ir::DType::f16, true);
      std::vector<lower::GemmParams> loops;
      for (auto p : lower::gemm_space(g, limits)) {
        lower::fit_gemm_pipeline_depth(g, p, limits);
        if (lower::gemm_legal(g, p, limits) && lower::gemm_ping_pong(g, p, limits)) loops.push_back(p);
      }
      if (loops.empty()) continue;
      cases.push_back({g, 1.25, betas[cases.size() % 3], loops[std::uniform_int_distribution<size_t>(0, loops.size() - 1)(rng)],
                       lower::SplitMode::atomic});
    }
  return cases;
}

// KG that are not powers of two: K's tiles spread evenly over 3, 5, 6 or 7 blocks, or over as many
// blocks as there are tiles (one each), K ending in a partial tile, in both modes, for FMA, TC=1
// and (on sm_90) TC=2 with TMA sets, in every layout.
std::vector<Case> make_uneven_split_cases(const lower::DeviceLimits& limits) {
  std::vector<Case> cases;
  std::mt19937_64 rng(3567);
  const Shape shapes[] = {{67, 45, 7 * 64 + 5, 1, 0}, {130, 33, 29 * 16 + 3, 2, 8}};
  for (ir::DType t : {ir::DType::f32, ir::DType::f64, ir::DType::f16})
    for (int layout = 0; layout < 4; ++layout)
      for (const Shape& s : shapes) {
        bool at = layout & 1, bt = layout & 2;
        const ir::Gemm g = t == ir::DType::f16 && limits.sm == 90 ? wgmma_problem(s, at, bt)
                                                                   : padded(t, s.m, s.n, s.k, at, bt, s.batch, s.pad);
        std::vector<std::vector<lower::GemmParams>> by_tc(3);
        for (const auto& p : lower::gemm_space(g, limits))
          if (p.kg == 1) by_tc[std::size_t(p.tc)].push_back(p);
        for (const auto& family : by_tc) {
          if (family.empty()) continue;
          lower::GemmParams p = family[std::uniform_int_distribution<size_t>(0, family.size() - 1)(rng)];
          const int k_tiles = int((g.k + p.u - 1) / p.u);
          const int uneven[] = {3, 5, 6, 7};
          for (int kg : {uneven[cases.size() % 4], k_tiles}) {
            p.kg = kg;
            lower::fit_gemm_pipeline_depth(g, p, limits);
            if (!lower::check_gemm(g, p, limits)) continue;
            for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
              cases.push_back({g, -0.5, cases.size() % 2 ? 0.0 : 0.5, p, mode});
          }
        }
      }
  return cases;
}

// A and B of a problem's storage filled with random values, and C's storage left for the caller to
// fill (random or poisoned): two draws from rng, in that order.
struct Operands {
  HostArray a, b, c;
};
Operands random_operands(const ir::Gemm& g, std::mt19937_64& rng) {
  const auto storage = ir::gemm_storage(g);
  Operands o{HostArray(g.dtype, storage.a), HostArray(g.dtype, storage.b), HostArray(g.dtype, storage.c)};
  o.a.fill_random(rng);
  o.b.fill_random(rng);
  return o;
}

// |alpha| |op(A)| |op(B)| + |beta| |C| per element (C left out where beta = 0): what the rounding
// error of each element of C is proportional to.
std::vector<double> reference_magnitude(const ir::Gemm& g, double alpha, double beta, const HostArray& a,
                                        const HostArray& b, const HostArray& c_in) {
  auto absolute = [](std::vector<double> v) {
    for (double& x : v) x = std::abs(x);
    return v;
  };
  std::vector<double> magnitude = beta == 0 ? std::vector<double>(c_in.size(), 0.0) : absolute(c_in.values);
  ir::reference_gemm(g, std::abs(alpha), std::abs(beta), absolute(a.values).data(), absolute(b.values).data(),
                     magnitude.data());
  return magnitude;
}

// The roundings each element of C may take, counted as terms of the reduction. Tensor cores round
// their f32 sums toward zero, not to nearest: twice the unit roundoff, counted here as twice the
// terms. f32 on tensor cores adds three TF32 products per term, each off by at most about
// 3 x 2^-22 = 12 f32 roundoffs of |a b| (TiledKernelBuilder::compute_stage_tf32): 13 more.
std::int64_t rounded_terms(const Case& c) {
  const bool tf32 = c.params.tc && c.problem.dtype == ir::DType::f32;
  return (c.params.tc ? 2 : 1) * (tf32 ? 3 : 1) * (c.problem.k + c.params.kg + 2) + (tf32 ? 13 : 0);
}

// Atomic KG splits add their partial sums in C's own type, after C was scaled by beta.
int roundings_of_c(const Case& c) {
  return c.params.kg > 1 && c.mode == lower::SplitMode::atomic ? c.params.kg + 2 : 1;
}

// C = alpha op(A) op(B) + beta C on the GPU, from and back to host arrays.
HostArray run_on_gpu(const CompiledGemm& kernel, const ir::Gemm& g, const HostArray& a, const HostArray& b,
                     const HostArray& c_in, double alpha, double beta, std::size_t c_offset = 0) {
  const std::size_t c_skip = c_offset * ir::size_of(g.dtype);
  runtime::Buffer da(a.bytes.size()), db(b.bytes.size()), dc(c_skip + c_in.bytes.size());
  da.upload(a.bytes.data(), a.bytes.size());
  db.upload(b.bytes.data(), b.bytes.size());
  dc.upload(c_in.bytes.data(), c_in.bytes.size(), c_skip);
  runtime::Stream stream;
  kernel.run(g, dc.ptr() + c_skip, da.ptr(), db.ptr(), alpha, beta, stream);
  stream.synchronize();
  HostArray c_out(g.dtype, c_in.size());
  dc.download(c_out.bytes.data(), c_out.bytes.size(), c_skip);
  return c_out;
}

// Runs one case on the GPU and compares every element of C (padding included) with the reference.
void check(const Case& c, const CompiledGemm& kernel, std::mt19937_64& rng) {
  const ir::Gemm& g = c.problem;
  auto [a, b, c_in] = random_operands(g, rng);
  c_in.fill_random(rng);
  // beta = 0 must not read C: give it NaNs there, and check none leaks into the result.
  if (c.beta == 0)
    for (size_t i = 0; i < c_in.size(); ++i) c_in.set(i, std::nan(""));

  const HostArray c_out = run_on_gpu(kernel, g, a, b, c_in, c.alpha, c.beta, c.c_offset);

  std::vector<double> expected = c_in.values;
  ir::reference_gemm(g, c.alpha, c.beta, a.values.data(), b.values.data(), expected.data());
  const std::vector<double> magnitude = reference_magnitude(g, c.alpha, c.beta, a, b, c_in);

  ir::DType accumulation = g.dtype == ir::DType::f16 && !c.params.acc32 ? ir::DType::f16
                           : g.dtype == ir::DType::f64                  ? ir::DType::f64
                                                                        : ir::DType::f32;
  const std::int64_t terms = rounded_terms(c);
  const int output_roundings = roundings_of_c(c);
  auto bound_at = [&](std::size_t i) {
    return test::error_bound(magnitude[i], terms, accumulation, g.dtype, output_roundings);
  };
  int wrong = 0;
  std::string first;
  for (std::int64_t batch = 0; batch < g.batch; ++batch)
    for (std::int64_t n = 0; n < g.n; ++n)
      for (std::int64_t m = 0; m < g.ldc; ++m) {
        std::size_t i = batch * g.stride_c + n * g.ldc + m;
        if (i >= c_in.size()) continue;  // the last column's padding lies past the storage
        double got = c_out.get(i);
        bool ok;
        if (m >= g.m) {  // padding: untouched
          ok = std::memcmp(&c_out.bytes[i * ir::size_of(g.dtype)], &c_in.bytes[i * ir::size_of(g.dtype)],
                           ir::size_of(g.dtype)) == 0;
        } else {
          ok = std::isfinite(got) && std::abs(got - expected[i]) <= bound_at(i);
        }
        if (!ok && wrong++ == 0)
          first = fmt::format("C[{}]({}, {}) = {} but the reference is {} (bound {})", batch, m, n, got, expected[i],
                              m < g.m ? bound_at(i) : 0.0);
      }
  INFO(describe(c));
  CHECK_MESSAGE(wrong == 0, wrong << " wrong elements; first: " << first);
}

// f32 on tensor cores splits each element into TF32 parts (TiledKernelBuilder::compute_stage_tf32),
// and computes the cells that come out NaN again with FMA (GemmEmitter::recompute_nan_cells). Rows 0
// to 3 of A hold +inf, NaN, -inf and 3.4028e38 at k = 5 (the last rounds to infinity as TF32): rows
// 0 to 2 of C must be IEEE's +-inf and NaN, rows 3 and up finite and within the bound.
void check_special_values(const Case& c, const CompiledGemm& kernel, std::mt19937_64& rng) {
  const ir::Gemm& g = c.problem;
  auto [a, b, c_in] = random_operands(g, rng);
  for (size_t i = 0; i < c_in.size(); ++i) c_in.set(i, std::nan(""));
  const double specials[] = {INFINITY, std::nan(""), -INFINITY, 3.4028e38};
  for (int r = 0; r < 4; ++r) a.set(std::size_t(g.a_trans ? r * g.lda + 5 : 5 * g.lda + r), specials[r]);
  const HostArray c_out = run_on_gpu(kernel, g, a, b, c_in, 1.0, 0.0);
  std::vector<double> expected(c_in.size());
  ir::reference_gemm(g, 1, 0, a.values.data(), b.values.data(), expected.data());
  const std::vector<double> magnitude = reference_magnitude(g, 1, 0, a, b, c_in);
  const std::int64_t terms = rounded_terms(c);
  const int roundings = roundings_of_c(c);
  int wrong = 0;
  std::string first;
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t m = 0; m < g.m; ++m) {
      const std::size_t i = n * g.ldc + m;
      const double got = c_out.get(i), want = expected[i];
      const double bound = test::error_bound(magnitude[i], terms, ir::DType::f32, ir::DType::f32, roundings);
      const bool ok = m < 3 ? (std::isnan(want) ? std::isnan(got) : got == want)
                            : std::isfinite(got) && std::abs(got - want) <= bound;
      if (!ok && wrong++ == 0) first = fmt::format("C({}, {}) = {} but the reference is {}", m, n, got, want);
    }
  INFO(describe(c));
  CHECK_MESSAGE(wrong == 0, wrong << " wrong elements; first: " << first);
}

// Compiles every case (LLVM, then the driver's JIT) on all cores, then checks them one at a time.
void compile_and_check(const std::vector<Case>& cases) {
  MESSAGE(cases.size() << " cases");
  auto compiled = test::compile_all<CompiledGemm>(cases.size(), [&](size_t i, std::optional<CompiledGemm>& kernel) {
    kernel.emplace(cases[i].problem, cases[i].params, cases[i].mode);
  });
  MESSAGE("compiled " << cases.size() << " kernels on " << compiled.workers << " threads in " << compiled.seconds
                      << " s");
  auto& kernels = compiled.results;
  auto& errors = compiled.errors;
  std::mt19937_64 rng(7);
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO(describe(cases[i]));
    REQUIRE_MESSAGE(errors[i].empty(), errors[i]);
    check(cases[i], *kernels[i], rng);
  }
}

// TMA=1 needs TC=2 (wgmma), so sm_90: elsewhere the test says why it is skipped.
bool has_tma(const lower::DeviceLimits& limits) {
  if (limits.sm == 90) return true;
  MESSAGE("skipped: TMA=1 needs TC=2 (wgmma), so sm_90; this device is sm_" << limits.sm);
  return false;
}

}  // namespace

TEST_CASE("GEMM: every dtype, layout, awkward size and split mode matches the float64 reference") {
  compile_and_check(make_cases(device_limits(runtime::device_info(0))));
}

TEST_CASE("GEMM TC=1: f16, f32 and f64 tensor-core kernels match the float64 reference in every layout and awkward size") {
  const auto limits = device_limits(runtime::device_info(0));
  if (limits.sm < 80) {
    MESSAGE("skipped: TC=1 needs sm_80 or newer, this device is sm_" << limits.sm);
    return;
  }
  compile_and_check(make_tc_cases(limits));
}

TEST_CASE("GEMM TC=1 and 2 f32: +-inf, NaN and values that overflow TF32 give IEEE's results") {
  const auto limits = device_limits(runtime::device_info(0));
  if (limits.sm < 80) {
    MESSAGE("skipped: TC=1 needs sm_80 or newer, this device is sm_" << limits.sm);
    return;
  }
  std::mt19937_64 rng(32);
  std::vector<Case> cases;
  for (int layout = 0; layout < 4; ++layout) {
    // TC=2 copies 16 bytes at a time: its problem's contiguous extents are multiples of 4.
    const ir::Gemm g1 = ir::dense_gemm(ir::DType::f32, 37, 29, 70, layout & 1, layout & 2);
    const ir::Gemm g2 = ir::dense_gemm(ir::DType::f32, 36, 28, 72, layout & 1, layout & 2);
    std::vector<lower::GemmParams> tc, wgmma;
    for (const auto& p : lower::gemm_space(g1, limits))
      if (p.tc == 1 && p.kg == 1) tc.push_back(p);
    REQUIRE_MESSAGE(!tc.empty(), "no f32 TC=1 parameters for " << ir::to_string(g1));
    for (const auto& p : lower::gemm_space(g2, limits))
      if (p.tc == 2 && p.kg == 1) wgmma.push_back(p);
    for (const auto& [g, from] : {std::pair{&g1, &tc}, {&g2, &wgmma}})
      for (int kg : {1, 2})
        for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic}) {
          if (from->empty()) continue;  // TC=2 on sm_90 alone
          lower::GemmParams p = (*from)[std::uniform_int_distribution<size_t>(0, from->size() - 1)(rng)];
          p.kg = kg;
          if (lower::check_gemm(*g, p, limits) && (kg > 1 || mode == lower::SplitMode::atomic))
            cases.push_back({*g, 1.0, 0.0, p, mode});
        }
  }
  CHECK(cases.size() >= (limits.sm == 90 ? 16 : 8));
  for (const Case& c : cases) {
    CompiledGemm kernel(c.problem, c.params, c.mode);
    check_special_values(c, kernel, rng);
  }
}

TEST_CASE("GEMM TC=2: f16 wgmma kernels match the float64 reference in every layout and awkward size") {
  const auto limits = device_limits(runtime::device_info(0));
  if (limits.sm != 90) {
    MESSAGE("skipped: TC=2 (wgmma) needs sm_90, this device is sm_" << limits.sm);
    return;
  }
  compile_and_check(make_wgmma_cases(limits));
}

TEST_CASE("GEMM TC=2 f32: three TF32 products on wgmma match the float64 reference in every layout and awkward size") {
  const auto limits = device_limits(runtime::device_info(0));
  if (limits.sm != 90) {
    MESSAGE("skipped: TC=2 (wgmma) needs sm_90, this device is sm_" << limits.sm);
    return;
  }
  compile_and_check(make_wgmma_cases(limits, false, ir::DType::f32));
}

TEST_CASE("GEMM bf16: FMA, mma.sync and wgmma kernels (with cp.async and TMA copies) match the float64 reference") {
  const auto limits = device_limits(runtime::device_info(0));
  if (limits.sm < 80) {
    MESSAGE("skipped: bf16 needs sm_80 or newer, this device is sm_" << limits.sm);
    return;
  }
  std::vector<Case> cases = make_cases(limits, {ir::DType::bf16});
  for (const std::vector<Case>& more :
       {make_tc_cases(limits, {ir::DType::bf16}), make_wgmma_cases(limits, false, ir::DType::bf16),
        make_wgmma_cases(limits, true, ir::DType::bf16)})
    cases.insert(cases.end(), more.begin(), more.end());
  CHECK(std::ranges::count_if(cases, [](const Case& c) { return c.params.tc == 2 && c.params.tma; }) >
        (limits.sm == 90 ? 0 : -1));
  compile_and_check(cases);
}

TEST_CASE("GEMM TC=2 TMA=1: f16 wgmma kernels fed by the Tensor Memory Accelerator match the float64 reference") {
  const auto limits = device_limits(runtime::device_info(0));
  if (!has_tma(limits)) return;
  compile_and_check(make_wgmma_cases(limits, true));
}

TEST_CASE("GEMM TC=2 TMA=1 ST: deeper TMA pipelines match the float64 reference at every depth") {
  const auto limits = device_limits(runtime::device_info(0));
  if (!has_tma(limits)) return;
  const auto cases = make_deep_pipeline_cases(limits);
  std::set<int> depths;
  for (const Case& c : cases) depths.insert(c.params.st);
  CHECK(depths == std::set<int>{5, 8, 13, 16});
  compile_and_check(cases);
}

TEST_CASE("GEMM TC=2 TMA=1 ST=1 and 2: one buffer per K tile matches the float64 reference") {
  const auto limits = device_limits(runtime::device_info(0));
  if (!has_tma(limits)) return;
  const auto cases = make_shallow_pipeline_cases(limits);
  std::set<int> depths;
  for (const Case& c : cases) depths.insert(c.params.st);
  CHECK(depths == std::set<int>{1, 2});
  compile_and_check(cases);
}

TEST_CASE("GEMM TC=2 TMA=1: C is read and written by TMA where it can be, clipped at its edges, for any beta") {
  const auto limits = device_limits(runtime::device_info(0));
  if (!has_tma(limits)) return;
  compile_and_check(make_tensor_store_cases(limits));
  // A kernel that moves C by TMA refuses a problem whose C it cannot move, and the other way round.
  const auto g = ir::dense_gemm(ir::DType::f16, 64, 64, 64, true, false);
  auto odd = g;
  odd.m = 61;
  lower::GemmParams p = lower::parse_gemm_params("ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1");
  lower::fit_gemm_pipeline_depth(g, p, limits);
  runtime::Buffer buffer(64 * 64 * 2);
  runtime::Stream stream;
  CompiledGemm by_tma(g, p), by_threads(odd, p);
  CHECK_THROWS_WITH_AS(by_tma.run(odd, buffer.ptr(), buffer.ptr(), buffer.ptr(), 1, 0, stream),
                       doctest::Contains("compiled for a C that TMA does move"), InvalidArgument);
  CHECK_THROWS_WITH_AS(by_threads.run(g, buffer.ptr(), buffer.ptr(), buffer.ptr(), 1, 0, stream),
                       doctest::Contains("compiled for a C that TMA does not move"), InvalidArgument);
}

TEST_CASE("GEMM TC=2 TMA=1: tile loops, each block computing several tiles, match the float64 reference") {
  const auto limits = device_limits(runtime::device_info(0));
  if (!has_tma(limits)) return;
  const auto cases = make_tile_loop_cases(limits);
  std::set<int> depths;
  int looping = 0;
  for (const Case& c : cases) {
    depths.insert(c.params.st);
    CompiledGemm kernel(c.problem, c.params);
    REQUIRE(kernel.kernel().tile_loop);
    const auto grid = kernel.launch_grids(c.problem).main;
    looping += grid[0] * grid[2] < lower::gemm_grid(c.problem, c.params, c.mode).main[0] * c.problem.batch;
  }
  MESSAGE(cases.size() << " cases; stages " << fmt::format("{}", fmt::join(depths, ", ")) << "; " << looping
                       << " with fewer blocks than tiles in a batch");
  CHECK(depths.size() >= 2);
  CHECK(looping == int(cases.size()));
  compile_and_check(cases);
}

TEST_CASE("GEMM TC=2 TMA=1: ping-pong tile loops, two consumer groups taking tiles in turn, match the float64 reference") {
  const auto limits = device_limits(runtime::device_info(0));
  if (!has_tma(limits)) return;
  const auto cases = make_ping_pong_cases(limits);
  if (cases.empty()) {
    MESSAGE("no ping-pong sets for these shapes");
    return;
  }
  for (const Case& c : cases) {
    CompiledGemm kernel(c.problem, c.params);
    REQUIRE(kernel.kernel().tile_loop);
    CHECK(kernel.kernel().threads == 2 * c.params.threads() + 32);
  }
  MESSAGE(cases.size() << " cases");
  compile_and_check(cases);
}

TEST_CASE("GEMM: KG that are not powers of two spread K evenly and match the float64 reference") {
  const auto cases = make_uneven_split_cases(device_limits(runtime::device_info(0)));
  std::set<int> uneven;
  for (const Case& c : cases)
    if (c.params.kg & (c.params.kg - 1)) uneven.insert(c.params.kg);
  CHECK(uneven.size() >= 4);
  compile_and_check(cases);
}

// A twelfth of the cases (and a sixth of the TC=1, TC=2 and TMA=1 cases), small enough to run under compute-sanitizer:
//   compute-sanitizer --tool memcheck test_gpu_gemm -tc="*sample*"
TEST_CASE("GEMM: a sample of the cases, for the sanitizers") {
  const auto limits = device_limits(runtime::device_info(0));
  auto all = make_cases(limits);
  std::vector<Case> sample;
  for (size_t i = 0; i < all.size(); i += 12)
    if (all[i].problem.k < 10000) sample.push_back(all[i]);
  auto tc = make_tc_cases(limits);
  for (size_t i = 0; i < tc.size(); i += 6)
    if (tc[i].problem.k < 10000) sample.push_back(tc[i]);
  auto wgmma = make_wgmma_cases(limits);
  for (size_t i = 0; i < wgmma.size(); i += 6)
    if (wgmma[i].problem.k < 10000) sample.push_back(wgmma[i]);
  auto tf32 = make_wgmma_cases(limits, false, ir::DType::f32);
  for (size_t i = 1; i < tf32.size(); i += 6)
    if (tf32[i].problem.k < 10000) sample.push_back(tf32[i]);
  auto tma = make_wgmma_cases(limits, true);
  for (size_t i = 3; i < tma.size(); i += 6)
    if (tma[i].problem.k < 10000) sample.push_back(tma[i]);
  auto deep = make_deep_pipeline_cases(limits);
  for (size_t i = 1; i < deep.size(); i += 6)
    if (deep[i].problem.k < 10000) sample.push_back(deep[i]);
  compile_and_check(sample);
}

// The epilogue writes and reduces chunks of consecutive rows at once where M, ldc and C allow it,
// one element at a time where they do not (M = 256 takes the chunks, 250 and 258 do not):
//  - FMA: MS rows, f16 pairs as f16x2 words, on sm_90 up to four words in one vector reduction;
//  - TC=1 f16 with KG > 1: row pairs from movmatrix (M = 256 and 250 take them, 251 does not);
//  - TC=1 f16 with KG = 1: staged in shared memory, then 16-byte vectors (M = 256) or elements.
TEST_CASE("GEMM: stores and KG atomic reductions with and without whole chunks") {
  std::vector<Case> cases;
  auto add = [&](ir::DType t, std::int64_t m, const std::string& params, int acc32, bool tc) {
    auto g = ir::dense_gemm(t, m, 48, 517, false, false);
    auto p = lower::parse_gemm_params(params);
    p.acc32 = acc32;
    p.tc = tc;
    p.va = m % 2 ? 1 : 2;
    p.la = p.ml / p.va;
    for (int kg : {8, 1}) {
      p.kg = kg;
      REQUIRE_MESSAGE(lower::check_gemm(g, p), ir::to_string(g) << " " << p.str());
      for (double beta : {0.0, 0.5}) cases.push_back({g, 1.5, beta, p, lower::SplitMode::atomic});
    }
  };
  for (std::int64_t m : {256, 250, 258}) {
    for (ir::DType t : {ir::DType::f16, ir::DType::f32}) add(t, m, "ML=64,NL=32,MS=8,NS=4,U=16,VB=1,LB=16", 1, false);
    add(ir::DType::f16, m, "ML=64,NL=32,MS=8,NS=4,U=16,VB=1,LB=16", 0, false);
  }
  const auto limits = device_limits(runtime::device_info(0));
  if (limits.sm >= 80)
    for (std::int64_t m : {256, 250, 251}) add(ir::DType::f16, m, "ML=64,NL=32,MS=2,NS=8,U=32,VB=1,LB=32", 1, true);
  compile_and_check(cases);
}

TEST_CASE("GEMM: KG deterministic mode is bit-identical from run to run") {
  auto g = ir::dense_gemm(ir::DType::f32, 96, 80, 4099, false, true);
  lower::GemmParams p = lower::parse_gemm_params("ML=32,NL=32,MS=4,NS=4,U=8,KG=16,VA=4,VB=4,LA=8,LB=8");
  REQUIRE(lower::check_gemm(g, p));
  CompiledGemm kernel(g, p, lower::SplitMode::deterministic);
  auto storage = ir::gemm_storage(g);
  std::mt19937_64 rng(3);
  HostArray a(g.dtype, storage.a), b(g.dtype, storage.b);
  a.fill_random(rng);
  b.fill_random(rng);
  runtime::Buffer da(a.bytes.size()), db(b.bytes.size()), dc(storage.c * 4);
  da.upload(a.bytes.data(), a.bytes.size());
  db.upload(b.bytes.data(), b.bytes.size());
  runtime::Stream stream;
  std::vector<unsigned char> first(storage.c * 4), again(storage.c * 4);
  for (int run = 0; run < 5; ++run) {
    dc.fill_bytes(0xFF);
    kernel.run(g, dc.ptr(), da.ptr(), db.ptr(), 1.0, 0.0, stream);
    stream.synchronize();
    dc.download(run == 0 ? first.data() : again.data(), first.size());
    if (run > 0) CHECK(first == again);
  }
}

TEST_CASE("GEMM: a problem the kernel was not compiled for is refused with the reason") {
  auto g = ir::dense_gemm(ir::DType::f32, 64, 64, 64, false, true);
  lower::GemmParams p = lower::parse_gemm_params("ML=32,NL=32,MS=4,NS=4,U=8,VA=4,VB=4,LA=8,LB=8");
  CompiledGemm kernel(g, p);
  runtime::Buffer buffer(64 * 64 * 4);
  runtime::Stream stream;
  auto odd = ir::dense_gemm(ir::DType::f32, 63, 64, 64, false, true);
  CHECK_THROWS_WITH_AS(kernel.run(odd, buffer.ptr(), buffer.ptr(), buffer.ptr(), 1, 0, stream),
                       doctest::Contains("VA=4 must divide the contiguous extent 63"), InvalidArgument);
  auto other = ir::dense_gemm(ir::DType::f32, 64, 64, 64, true, true);
  CHECK_THROWS_WITH_AS(kernel.run(other, buffer.ptr(), buffer.ptr(), buffer.ptr(), 1, 0, stream),
                       doctest::Contains("differs in dtype or layout"), InvalidArgument);
  // Pointers must have the alignment the problem declares (16 bytes unless it says less).
  CHECK_THROWS_WITH_AS(kernel.run(g, buffer.ptr() + 4, buffer.ptr(), buffer.ptr(), 1, 0, stream),
                       doctest::Contains("is not 16-byte aligned, as the GEMM"), InvalidArgument);
  CHECK_THROWS_WITH_AS(kernel.run(g, buffer.ptr(), buffer.ptr(), buffer.ptr() + 8, 1, 0, stream),
                       doctest::Contains("the B pointer"), InvalidArgument);
}

// On sm_90 the main kernel of a split is launched to overlap its prepare kernel (and the reduce
// kernel to overlap the main one), and waits for it only before its epilogue. A large C and a short
// K make the prepare kernel (which scales all of C) outlast the main loop, so a missing wait would
// show as lost or doubly scaled parts; beta = 0 with NaN in C also catches reductions landing before
// the zeros.
TEST_CASE("GEMM: a split's kernels launched to overlap wait for the kernel before them") {
  std::vector<Case> cases;
  const auto limits = device_limits(runtime::device_info(0));
  auto add = [&](ir::DType t, bool bt, const char* params) {
    auto g = ir::dense_gemm(t, 2048, 2048, 64, false, bt);
    auto p = lower::parse_gemm_params(params);
    REQUIRE_MESSAGE(lower::check_gemm(g, p, limits), ir::to_string(g) << " " << p.str());
    for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
      for (double beta : {0.0, 0.5}) cases.push_back({g, 1.5, beta, p, mode});
  };
  add(ir::DType::f32, true, "ML=64,NL=64,MS=4,NS=4,U=16,KG=4,VA=4,VB=4,LA=16,LB=16");
  if (limits.sm >= 80) add(ir::DType::f16, false, "ML=64,NL=64,MS=4,NS=8,U=16,KG=4,VA=4,VB=4,LA=16,LB=4,TC=1");
  if (limits.sm < 90) MESSAGE("sm_" << limits.sm << ": the kernels are launched in stream order, without overlap");
  for (int round = 0; round < 3; ++round) compile_and_check(cases);
}

// A deterministic split keeps its partial sums in a workspace between its two kernels. Runs of one
// compiled kernel on two streams, launched back to back, and from two threads, must each get their
// own: with different B per stream, a shared workspace would hand one stream's partial sums to the
// other's reduction. Small integers make every sum exact, so each result must equal the reference.
TEST_CASE("GEMM: a deterministic split runs on two streams and two threads at once") {
  auto g = ir::dense_gemm(ir::DType::f32, 300, 200, 2000, false, true);
  lower::GemmParams p = lower::parse_gemm_params("ML=64,NL=32,MS=4,NS=4,U=16,KG=16,VA=4,VB=4,LA=16,LB=8");
  REQUIRE(lower::check_gemm(g, p));
  CompiledGemm kernel(g, p, lower::SplitMode::deterministic);
  auto storage = ir::gemm_storage(g);
  std::mt19937_64 rng(11);
  auto integers = [&](std::size_t size, int range) {
    HostArray x(g.dtype, static_cast<std::int64_t>(size));
    for (std::size_t i = 0; i < size; ++i) x.set(i, double(std::uniform_int_distribution<int>(-range, range)(rng)));
    return x;
  };
  struct Lane {
    HostArray b, c;
    std::vector<double> expected;
    runtime::Buffer db, dc;
    runtime::Stream stream;
  };
  HostArray a = integers(storage.a, 3);
  runtime::Buffer da(a.bytes.size());
  da.upload(a.bytes.data(), a.bytes.size());
  std::vector<Lane> lanes;
  for (int i = 0; i < 2; ++i) {
    Lane lane{integers(storage.b, 3), integers(storage.c, 100), {}, {}, {}, {}};
    lane.expected = lane.c.values;
    ir::reference_gemm(g, 2.0, 0.5, a.values.data(), lane.b.values.data(), lane.expected.data());
    lane.db = runtime::Buffer(lane.b.bytes.size());
    lane.dc = runtime::Buffer(lane.c.bytes.size());
    lane.db.upload(lane.b.bytes.data(), lane.b.bytes.size());
    lanes.push_back(std::move(lane));
  }
  auto launch = [&](Lane& lane) {
    lane.dc.upload(lane.c.bytes.data(), lane.c.bytes.size());
    kernel.run(g, lane.dc.ptr(), da.ptr(), lane.db.ptr(), 2.0, 0.5, lane.stream);
  };
  auto wrong = [&](Lane& lane) {
    lane.stream.synchronize();
    HostArray out(g.dtype, static_cast<std::int64_t>(storage.c));
    lane.dc.download(out.bytes.data(), out.bytes.size());
    int count = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(storage.c); ++i) count += out.get(i) != lane.expected[i];
    return count;
  };
  for (int run = 0; run < 20; ++run) {
    launch(lanes[0]);
    launch(lanes[1]);
    INFO("back to back, run " << run);
    CHECK(wrong(lanes[0]) == 0);
    CHECK(wrong(lanes[1]) == 0);
  }
  std::array<int, 2> wrong_in_thread{};
  auto work = [&](int i) {
    runtime::use_device(0);
    for (int run = 0; run < 20; ++run) {
      launch(lanes[i]);
      wrong_in_thread[i] += wrong(lanes[i]);
    }
  };
  std::thread other(work, 1);
  work(0);
  other.join();
  CHECK(wrong_in_thread[0] == 0);
  CHECK(wrong_in_thread[1] == 0);
}
