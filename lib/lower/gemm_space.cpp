#include "lower/gemm_layout.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/gemm.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

namespace isaac::lower {

namespace {

// U = 64 is for the tensor-core sets only (TC=1 and 2): four mma steps between barriers, which the
// H100 sweep preferred on several f16 problems; FMA sets would hold too many fragments.
constexpr int u_values[] = {4, 8, 16, 32, 64};
constexpr int sw_values[] = {1, 8};

int u_slot(int u) { return std::countr_zero(static_cast<unsigned>(u)) - 2; }

}  // namespace

const std::vector<GemmSpace::Split>& GemmSpace::splits_of(const GemmParams& base) const {
  const int slot = u_slot(base.u);
  if (slot < 0 || slot >= int(splits.size()))
    throw InvalidArgument("GemmSpace::splits_of: U=" + std::to_string(base.u) + " is not one of 4, 8, 16, 32, 64");
  return splits[slot];
}

std::int64_t gemm_max_uneven_split(std::int64_t unsplit_blocks, const DeviceLimits& device) {
  return std::int64_t(gemm_uneven_split_blocks_per_sm) * device.sm_count / std::max<std::int64_t>(1, unsplit_blocks);
}

bool gemm_split_in_space(std::int64_t unsplit_blocks, int kg, const DeviceLimits& device) {
  return gemm_split_within(kg, gemm_max_uneven_split(unsplit_blocks, device));
}

bool GemmSpace::holds(const GemmParams& base, Split split) const {
  return gemm_split_in_space(gemm_grid_blocks(problem, base), split.kg, device);
}

std::size_t GemmSpace::size() const {
  std::size_t n = 0;
  for (const GemmParams& b : bases) {
    const std::int64_t uneven_max = gemm_max_uneven_split(gemm_grid_blocks(problem, b), device);
    for (Split s : splits_of(b)) n += gemm_split_within(s.kg, uneven_max);
  }
  return n;
}

// The load layouts are not searched: each operand takes the widest legal arrangement along its
// contiguous axis, which is what coalescing wants. TC=2 copies eight rows per group of eight
// threads: at most threads / 8 along the contiguous axis (with TMA=1 no thread copies, and LA and LB
// are only written down).
void fit_gemm_load_layouts(bool a_trans, bool b_trans, GemmParams& p) {
  const int threads = p.tc == 2 ? p.threads() / 8 : p.threads();
  auto widest = [threads](int contiguous, int vector) {
    int along = std::min(threads, std::max(1, contiguous / vector));
    while (along > 1 && (threads % along || contiguous % (along * vector))) along /= 2;
    return along;
  };
  p.la = widest(a_trans ? p.u : p.ml, p.va);
  p.lb = widest(b_trans ? p.nl : p.u, p.vb);
}

std::int64_t gemm_grid_blocks(const ir::Gemm& problem, const GemmParams& p) {
  return gemm_block_tiles(problem, p) * p.kg * problem.batch;
}

bool gemm_grid_fits_at_once(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device) {
  return gemm_grid_blocks(problem, p) <= device.sm_count;
}

int gemm_shallow_stages(const ir::Gemm& problem, const GemmParams& p) {
  if (!p.tma || !p.db) return 0;
  const std::int64_t k_tiles = gemm_k_tiles_per_block(problem, p);
  return k_tiles <= gemm_max_shallow_stages ? int(std::max<std::int64_t>(k_tiles, 1)) : 0;
}

namespace {

// p.st stages of a deep pipeline within gemm_deep_pipeline_bytes and the device's limit.
bool deep_stages_fit(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device) {
  return gemm_shared_bytes(problem.dtype, problem.a_trans, problem.b_trans, p) <=
         std::min(gemm_deep_pipeline_bytes, device.max_shared_per_block);
}

}  // namespace

void fit_gemm_pipeline_depth(const ir::Gemm& problem, GemmParams& p, const DeviceLimits& device) {
  p.st = gemm_shallow_stages(problem, p);
  if (p.st) {
    // A tile loop copies the next tile's operands while this tile's are read: a block of one K tile
    // gets a second buffer, one of two the four of ST=0 (docs/tensor-cores.md, "Tile loops"). A
    // ping-pong loop gets the four of ST=0 in either case, two for each consumer group.
    GemmParams loop = p;
    loop.st = 0;
    if (gemm_ping_pong(problem, loop, device)) {
      p.st = 0;
      return;
    }
    loop.st = p.st == 1 ? 2 : 0;
    if (gemm_tile_loop(problem, loop, device)) p.st = loop.st;
    return;
  }
  if (!gemm_runs_deep_pipeline(problem, p, device)) return;
  // The deepest that fits; gemm_min_deep_stages does.
  p.st = int(std::min<std::int64_t>(gemm_max_stages, gemm_k_tiles_per_block(problem, p)));
  while (!deep_stages_fit(problem, p, device)) --p.st;
}

bool gemm_deep_pipeline_fits(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device) {
  GemmParams shallowest = p;
  shallowest.st = gemm_min_deep_stages;
  return p.tma && p.db && deep_stages_fit(problem, shallowest, device);
}

bool gemm_runs_deep_pipeline(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device) {
  return p.tma && p.db && gemm_k_tiles_per_block(problem, p) >= gemm_min_deep_stages &&
         gemm_grid_fits_at_once(problem, p, device) && gemm_deep_pipeline_fits(problem, p, device);
}

GemmSpace gemm_space_levels(const ir::Gemm& problem, const DeviceLimits& device) {
  GemmSpace space;
  space.problem = problem, space.device = device;
  GemmParams p;
  p.acc32 = 1;
  p.kg = 1, p.sw = 1;
  const bool has_tc = ir::is_16_bit(problem.dtype) || problem.dtype == ir::DType::f64 ||
                      (problem.dtype == ir::DType::f32 && device.f32_tensor_cores);
  const bool wgmma = ir::is_16_bit(problem.dtype) || (problem.dtype == ir::DType::f32 && has_tc);
  const int max_tc = wgmma && device.sm == 90 ? 2 : has_tc && device.sm >= 80 ? 1 : 0;
  for (int ml : {16, 32, 64, 128, 256})
    for (int nl : {16, 32, 64, 128, 256})
      for (int ms : {1, 2, 4, 8, 16})
        for (int ns : {1, 2, 4, 8, 16})
          for (int kl : {1, 2, 4, 8}) {
            p.ml = ml, p.nl = nl, p.ms = ms, p.ns = ns, p.kl = kl;
            int threads = p.threads();
            if (threads % 32 || threads > device.max_threads_per_block) continue;
            for (int u : u_values)
              for (int ks : {1, 2})
                for (int va : {1, 2, 4, 8})
                  for (int vb : {1, 2, 4, 8})
                    for (int db : {0, 1})
                      for (int tc = 0; tc <= max_tc; ++tc) {
                        if (u == 64 && tc == 0) continue;
                        // f16 and bf16 TC=2 sets copy with TMA: on the H100 the sweep's TC=2 winners ran 1.07x as
                        // fast (geometric mean; f16 LINPACK 4096 1.23x) as with cp.async (docs/tensor-cores.md).
                        // f32 ones copy with cp.async alone.
                        p.u = u, p.ks = ks, p.va = va, p.vb = vb, p.db = db, p.tc = tc;
                        p.tma = tc == 2 && ir::is_16_bit(problem.dtype);
                        fit_gemm_load_layouts(problem.a_trans, problem.b_trans, p);
                        if (gemm_legal(problem, p, device)) space.bases.push_back(p);
                      }
          }
  // The splits of a base set with this U: KG and SW only meet the K tiles and the grid limits.
  for (int u : u_values) {
    auto it = std::find_if(space.bases.begin(), space.bases.end(), [&](const GemmParams& b) { return b.u == u; });
    if (it == space.bases.end()) continue;
    GemmParams q = *it;
    for (int kg : gemm_kg_values)
      for (int sw : sw_values) {
        q.kg = kg, q.sw = sw;
        if (gemm_legal(problem, q, device)) space.splits[u_slot(u)].push_back({kg, sw});
      }
  }
  return space;
}

std::vector<GemmParams> gemm_space(const ir::Gemm& problem, const DeviceLimits& device) {
  const GemmSpace space = gemm_space_levels(problem, device);
  std::vector<GemmParams> out;
  out.reserve(space.size());
  for (GemmParams p : space.bases) {
    const std::int64_t blocks = gemm_grid_blocks(problem, p);
    for (auto [kg, sw] : space.splits_of(p)) {
      if (!gemm_split_in_space(blocks, kg, device)) continue;
      p.kg = kg, p.sw = sw;
      fit_gemm_pipeline_depth(problem, p, device);
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace isaac::lower
