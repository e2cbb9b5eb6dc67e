#include "refine.hpp"

#include <isaac/lower/gemm.hpp>
#include <isaac/tune/heuristic.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>

namespace isaac::bench {

namespace {

// The value next to `v` in `list` (step -1 or +1), if any.
std::optional<int> adjacent(const std::vector<int>& list, int v, int step) {
  auto it = std::find(list.begin(), list.end(), v);
  if (it == list.end()) return std::nullopt;
  auto i = static_cast<std::ptrdiff_t>(it - list.begin()) + step;
  if (i < 0 || i >= static_cast<std::ptrdiff_t>(list.size())) return std::nullopt;
  return list[static_cast<std::size_t>(i)];
}

const std::vector<int> tiles{16, 32, 64, 128, 256}, thread_tiles{1, 2, 4, 8, 16}, depths{4, 8, 16, 32, 64},
    k_steps{1, 2}, k_local{1, 2, 4, 8},
    k_global(std::begin(lower::gemm_kg_values), std::end(lower::gemm_kg_values)), vectors{1, 2, 4, 8},
    buffers{0, 1}, swizzles{1, 8}, accumulators{0, 1}, tensor_cores{0, 1, 2};

}  // namespace

std::optional<std::string> outside_space(const ir::Gemm& g, const lower::GemmParams& p,
                                         const lower::DeviceLimits& limits) {
  auto in = [](const std::vector<int>& list, int v) { return std::find(list.begin(), list.end(), v) != list.end(); };
  if (!in(tiles, p.ml) || !in(tiles, p.nl) || !in(thread_tiles, p.ms) || !in(thread_tiles, p.ns) || !in(depths, p.u) ||
      !in(k_steps, p.ks) || !in(k_local, p.kl) || !in(k_global, p.kg) || !in(vectors, p.va) || !in(vectors, p.vb) ||
      !in(buffers, p.db) || !in(swizzles, p.sw) || !in(accumulators, p.acc32) || !in(tensor_cores, p.tc))
    return fmt::format("{}: a value outside gemm_space's lists", p.str());
  int threads = p.threads();
  if (threads % 32 || threads > limits.max_threads_per_block)
    return fmt::format("{} threads: not a multiple of 32 or above the device's {}", threads,
                       limits.max_threads_per_block);
  if (p.sw != 1 && !((g.m + p.ml - 1) / p.ml > 1 && (g.n + p.nl - 1) / p.nl > 1))
    return std::string("SW > 1 on a grid one tile wide");
  if (p.acc32 == 0 && g.dtype != ir::DType::f16) return std::string("ACC=16 outside f16");
  if (auto legal = lower::check_gemm(g, p, limits); !legal) return legal.reason;
  if (!lower::gemm_split_in_space(lower::gemm_grid_blocks(g, p) / p.kg, p.kg, limits))
    return fmt::format("KG={} on a grid of {} blocks: gemm_space holds a KG that is not a power of two only up to {} "
                       "blocks per SM",
                       p.kg, lower::gemm_grid_blocks(g, p), lower::gemm_uneven_split_blocks_per_sm);
  lower::GemmParams fitted = p;
  lower::fit_gemm_pipeline_depth(g, fitted, limits);
  if (fitted.st != p.st) return fmt::format("ST={} where fit_gemm_pipeline_depth picks ST={}", p.st, fitted.st);
  return std::nullopt;
}

std::vector<lower::GemmParams> neighbours(const ir::Gemm& g, const lower::GemmParams& p,
                                          const lower::DeviceLimits& limits) {
  std::vector<lower::GemmParams> out;
  std::set<std::string> seen{p.str()};
  auto keep = [&](lower::GemmParams q) {
    q.tma = q.tc == 2 && g.dtype == ir::DType::f16;  // gemm_space's f16 TC=2 sets copy with TMA, f32's do not
    tune::fit_load_layouts(g, q);
    lower::fit_gemm_pipeline_depth(g, q, limits);
    if (outside_space(g, q, limits)) return;
    if (seen.insert(q.str()).second) out.push_back(q);
  };
  // One parameter to the adjacent value of its list.
  auto one = [&](int lower::GemmParams::*field, const std::vector<int>& list) {
    for (int step : {-1, +1})
      if (auto v = adjacent(list, p.*field, step)) {
        lower::GemmParams q = p;
        q.*field = *v;
        keep(q);
      }
  };
  one(&lower::GemmParams::ml, tiles);
  one(&lower::GemmParams::nl, tiles);
  one(&lower::GemmParams::ms, thread_tiles);
  one(&lower::GemmParams::ns, thread_tiles);
  one(&lower::GemmParams::u, depths);
  one(&lower::GemmParams::ks, k_steps);
  one(&lower::GemmParams::kl, k_local);
  one(&lower::GemmParams::kg, k_global);
  one(&lower::GemmParams::va, vectors);
  one(&lower::GemmParams::vb, vectors);
  one(&lower::GemmParams::db, buffers);
  one(&lower::GemmParams::sw, swizzles);
  if (g.dtype == ir::DType::f16) one(&lower::GemmParams::acc32, accumulators);
  if (g.dtype == ir::DType::f16 || g.dtype == ir::DType::f64) one(&lower::GemmParams::tc, tensor_cores);
  // Two parameters at once, the thread count unchanged.
  auto two = [&](int lower::GemmParams::*f1, const std::vector<int>& l1, int s1, int lower::GemmParams::*f2,
                 const std::vector<int>& l2, int s2) {
    auto a = adjacent(l1, p.*f1, s1), b = adjacent(l2, p.*f2, s2);
    if (!a || !b) return;
    lower::GemmParams q = p;
    q.*f1 = *a;
    q.*f2 = *b;
    keep(q);
  };
  for (int s : {+1, -1}) {
    two(&lower::GemmParams::ml, tiles, s, &lower::GemmParams::ms, thread_tiles, s);   // block and thread tile in M
    two(&lower::GemmParams::nl, tiles, s, &lower::GemmParams::ns, thread_tiles, s);   // the same in N
    two(&lower::GemmParams::ml, tiles, s, &lower::GemmParams::nl, tiles, -s);         // the block tile's shape
    two(&lower::GemmParams::ms, thread_tiles, s, &lower::GemmParams::ns, thread_tiles, -s);  // the thread tile's
  }
  return out;
}

std::vector<lower::GemmParams> search_seeds(const ir::Gemm& g, const lower::DeviceLimits& limits,
                                            const std::string& earlier_winner, std::string* dropped) {
  std::vector<lower::GemmParams> seeds;
  auto note = [&](const std::string& what) {
    if (dropped) *dropped += (dropped->empty() ? "" : "; ") + what;
  };
  if (!earlier_winner.empty()) {
    try {
      lower::GemmParams w = lower::parse_gemm_params(earlier_winner);
      lower::fit_gemm_pipeline_depth(g, w, limits);  // the depth follows the device and the grid
      if (auto why = outside_space(g, w, limits))
        note(fmt::format("the earlier winner {} is no longer legal ({})", earlier_winner, *why));
      else
        seeds.push_back(w);
    } catch (const std::exception& e) {
      note(fmt::format("the earlier winner '{}' is unreadable ({})", earlier_winner, e.what()));
    }
  }
  try {
    lower::GemmParams h = tune::heuristic_gemm(g, limits);
    if (h.kg > k_global.back()) {  // the heuristic splits K further than gemm_space goes
      h.kg = k_global.back();
      tune::fit_load_layouts(g, h);
    }
    if (auto why = outside_space(g, h, limits))
      note(fmt::format("the heuristic's {} is outside the space ({})", h.str(), *why));
    else if (std::find(seeds.begin(), seeds.end(), h) == seeds.end())
      seeds.push_back(h);
  } catch (const std::exception& e) {
    note(fmt::format("no heuristic set ({})", e.what()));
  }
  return seeds;
}

}  // namespace isaac::bench
