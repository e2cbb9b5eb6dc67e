#include <isaac/tune/prune.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

namespace isaac::tune {

double balance(const Resources& r) { return r.utilisation * std::sqrt(r.shared_reuse * r.register_reuse); }

namespace {

// The tiling of a parameter set seen as a GEMM (for a CONV: pixels x filters, reduced over C*R*S).
struct Tiling {
  int block_m, block_n, thread_m, thread_n, depth, warp_groups, grid_split;
};

struct Extent {
  std::int64_t m, n, k, batch;
};

Resources resources_of(const Tiling& t, const Extent& e, int threads, int registers, int shared_bytes,
                       const Multiprocessors& sms) {
  Resources r;
  r.threads = threads, r.registers = registers, r.shared_bytes = shared_bytes;
  r.blocks_per_sm = resident_blocks(threads, registers, shared_bytes, sms);
  r.warps_per_sm = r.blocks_per_sm * ((threads + 31) / 32);
  r.shared_reuse = double(t.block_m) * t.block_n / (t.block_m + t.block_n);
  r.register_reuse = double(t.thread_m) * t.thread_n / (t.thread_m + t.thread_n);
  r.work_per_thread = double(t.thread_m) * t.thread_n * t.depth / t.warp_groups;
  if (r.blocks_per_sm == 0) return r;
  const std::int64_t tiles_m = (e.m + t.block_m - 1) / t.block_m, tiles_n = (e.n + t.block_n - 1) / t.block_n;
  const std::int64_t k_tiles = (e.k + t.depth - 1) / t.depth;
  const std::int64_t stages = (k_tiles + t.grid_split - 1) / t.grid_split;  // K tiles per block
  const double computed = double(tiles_m * t.block_m) * double(tiles_n * t.block_n) *
                          double(stages * t.grid_split * t.depth);
  const double padding = double(e.m) * double(e.n) * double(e.k) / computed;
  const double blocks_in_grid = double(tiles_m * tiles_n * t.grid_split * e.batch);
  const double wave = wave_fill(blocks_in_grid, r.blocks_per_sm, sms);
  // A block's loop pays one stage of prologue and one of epilogue (and the reduction of its split).
  const double pipeline = double(stages) / double(stages + 1);
  r.utilisation = padding * wave * pipeline;
  return r;
}

// Whether a beats or equals b on all four figures.
bool covers(const Resources& a, const Resources& b) {
  return a.utilisation >= b.utilisation && a.shared_reuse >= b.shared_reuse && a.register_reuse >= b.register_reuse &&
         a.work_per_thread >= b.work_per_thread;
}

// `preferred(a, b)`: among sets with equal figures, which one to keep (the widest loads, say).
template <class Params, class Preferred>
std::vector<PrunedSet<Params>> pareto_by_occupancy(std::vector<PrunedSet<Params>> sets, const Preferred& preferred,
                                                   PruneReport* report) {
  std::erase_if(sets, [](const PrunedSet<Params>& s) { return s.resources.blocks_per_sm == 0; });
  // A set that leaves more than half of what the best one uses of the GPU idle is not a candidate,
  // whatever its reuse (a one-warp block with a big thread tile on a small problem, say).
  double best_utilisation = 0;
  for (const PrunedSet<Params>& s : sets) best_utilisation = std::max(best_utilisation, s.resources.utilisation);
  std::erase_if(sets, [&](const PrunedSet<Params>& s) { return s.resources.utilisation < 0.5 * best_utilisation; });
  // Within a level, a set that covers another sorts before it, so one pass against the front suffices.
  std::sort(sets.begin(), sets.end(), [&](const PrunedSet<Params>& a, const PrunedSet<Params>& b) {
    const Resources &x = a.resources, &y = b.resources;
    auto key = [](const Resources& r) {
      return std::tuple(r.warps_per_sm, -r.utilisation, -r.shared_reuse, -r.register_reuse, -r.work_per_thread);
    };
    if (key(x) != key(y)) return key(x) < key(y);
    return preferred(a.params, b.params);
  });
  std::vector<PrunedSet<Params>> kept;
  std::size_t level_start = 0;
  for (const PrunedSet<Params>& s : sets) {
    if (!kept.empty() && kept.back().resources.warps_per_sm != s.resources.warps_per_sm) level_start = kept.size();
    bool dominated = false;
    for (std::size_t i = level_start; i < kept.size() && !dominated; ++i)
      dominated = covers(kept[i].resources, s.resources);
    if (!dominated) kept.push_back(s);
  }
  // Within each level, the best balanced first.
  for (auto first = kept.begin(); first != kept.end();) {
    auto last = std::find_if(first, kept.end(), [&](const PrunedSet<Params>& s) {
      return s.resources.warps_per_sm != first->resources.warps_per_sm;
    });
    std::stable_sort(first, last, [](const PrunedSet<Params>& a, const PrunedSet<Params>& b) {
      return balance(a.resources) > balance(b.resources);
    });
    if (report) ++report->occupancy_levels;
    first = last;
  }
  if (report) report->kept = kept.size();
  return kept;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

std::vector<PrunedSet<lower::GemmParams>> prune_gemm_space(const ir::Gemm& problem, const lower::DeviceLimits& device,
                                                           const Multiprocessors& sms, PruneReport* report) {
  const auto start = std::chrono::steady_clock::now();
  PruneReport local;
  if (!report) report = &local;
  *report = {};
  const lower::GemmSpace space = lower::gemm_space_levels(problem, device);
  const Extent extent{problem.m, problem.n, problem.k, problem.batch};
  std::vector<PrunedSet<lower::GemmParams>> sets;
  for (const lower::GemmParams& base : space.bases) {
    const int registers = lower::estimate_gemm_registers(problem.dtype, problem.a_trans, problem.b_trans, base);
    for (auto [kg, sw] : space.splits_of(base)) {
      if (!space.holds(base, {kg, sw})) continue;
      ++report->legal_sets;
      if (sw != 1) continue;
      lower::GemmParams p = base;
      p.kg = kg;
      lower::fit_gemm_pipeline_depth(problem, p, device);
      const int shared = lower::gemm_shared_bytes(problem.dtype, problem.a_trans, problem.b_trans, p);
      const Tiling t{p.ml, p.nl, p.ms, p.ns, p.u, p.kl, p.kg};
      sets.push_back({p, resources_of(t, extent, lower::gemm_launch_threads(problem, p), registers, shared, sms)});
    }
  }
  auto preferred = [](const lower::GemmParams& a, const lower::GemmParams& b) {
    return std::tuple(a.va * a.vb, a.va, a.db, -a.ks) > std::tuple(b.va * b.vb, b.va, b.db, -b.ks);
  };
  auto kept = pareto_by_occupancy(std::move(sets), preferred, report);
  report->prune_ms = elapsed_ms(start);
  return kept;
}

std::vector<PrunedSet<lower::ConvParams>> prune_conv_space(const ir::Conv& problem,
                                                           const lower::ConvEpilogue& epilogue,
                                                           const lower::DeviceLimits& device,
                                                           const Multiprocessors& sms, PruneReport* report) {
  const auto start = std::chrono::steady_clock::now();
  PruneReport local;
  if (!report) report = &local;
  *report = {};
  const bool in_red = lower::conv_input_reduction_contiguous(problem);
  const bool f_k = lower::conv_filter_k_contiguous(problem);
  const Extent extent{problem.n * problem.p * problem.q, problem.k, problem.c * problem.r * problem.s, 1};
  std::vector<PrunedSet<lower::ConvParams>> sets;
  for (const lower::ConvParams& p : lower::conv_space(problem, epilogue, device)) {
    ++report->legal_sets;
    const Tiling t{p.pl, p.kl, p.ps, p.ks, p.u, p.cl, p.cg};
    sets.push_back({p, resources_of(t, extent, p.threads(), lower::estimate_conv_registers(problem.dtype, in_red, f_k, p),
                                    lower::conv_shared_bytes(problem.dtype, in_red, f_k, p), sms)});
  }
  auto preferred = [](const lower::ConvParams& a, const lower::ConvParams& b) {
    return std::tuple(a.vi * a.vf, a.vi, a.db, -a.cs) > std::tuple(b.vi * b.vf, b.vi, b.db, -b.cs);
  };
  auto kept = pareto_by_occupancy(std::move(sets), preferred, report);
  report->prune_ms = elapsed_ms(start);
  return kept;
}

}  // namespace isaac::tune
