#pragma once
// Candidates for the re-benchmark spread over tilings. The model's errors are shared by sets that
// differ only in how they load and order their work (vector widths, load layouts, swizzle, double
// buffering): when it overrates one tiling, its ten best sets are often ten variants of that tiling,
// and the re-benchmark learns nothing that the first of them did not tell it.
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

namespace isaac::tune {

// Block tile, thread tile, depth, grid split, tensor cores and, for the Winograd CONV kernels, which
// of them (WG) and their thread groups (0 for the direct kernels): what decides the work of a block.
using Tiling = std::array<int, 9>;
Tiling tiling_of(const lower::GemmParams& p);
Tiling tiling_of(const lower::ConvParams& p);

// Positions of `count` candidates among `ranked` (tilings of sets, best first): each next position is
// the best set whose tiling is not taken yet, and once every tiling is taken, the best sets left.
std::vector<std::size_t> spread_over_tilings(std::span<const Tiling> ranked, std::size_t count);

// The same over ranked sets (anything with a `params` member), in the spread order.
template <class RankedSet>
std::vector<RankedSet> spread_ranked_sets(const std::vector<RankedSet>& ranked, std::size_t count) {
  std::vector<Tiling> tilings;
  for (const RankedSet& r : ranked) tilings.push_back(tiling_of(r.params));
  std::vector<RankedSet> out;
  for (std::size_t i : spread_over_tilings(tilings, count)) out.push_back(ranked[i]);
  return out;
}

// How many of the top k candidates hedge against the model's known bias where its first choice
// splits the reduction across blocks: it overrates the split (docs/tuning-history.md, "The proof, round by round"). Those
// candidates are its best sets with at most half, a quarter, an eighth... of the first one's split
// (and no split at all, once halving reaches 1).
inline std::size_t hedges_for(std::size_t top_k) { return std::min<std::size_t>(3, top_k / 3); }
int grid_split(const Tiling& t);

// The model ranks sets of one kind of kernel (Tiling position 6: FMA, mma.sync or wgmma) against each
// other better than it ranks the kinds. Its best f32 Winograd products on the tensor cores, which it
// rated within 15% of its first choice and left out of the spread, ran 7-17% faster than the CONV
// rows' winners on the H200, and its ten f16 LAPACK candidates were mma.sync sets where the brute
// force's winners are wgmma sets (docs/tuning-history.md, round 35). So where the spread holds no set of a
// kind that the model predicts at least this share of its first choice's speed, the best such set is
// timed too.
inline constexpr double kind_hedge_share = 0.85;
int kernel_kind(const Tiling& t);

// The best `per_kind` tilings of `ranked` (any order; each tiling's best set) of each kind of kernel
// other than that of the best of all, by predicted speed: the data a focus round needs on the bias
// the kind hedge works around.
template <class RankedSet>
std::vector<RankedSet> best_of_other_kinds(std::vector<RankedSet> ranked, std::size_t per_kind) {
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedSet& a, const RankedSet& b) { return a.predicted_tflops > b.predicted_tflops; });
  std::vector<RankedSet> out;
  if (ranked.empty()) return out;
  const int first = kernel_kind(tiling_of(ranked.front().params));
  std::map<int, std::size_t> taken;
  std::set<Tiling> seen;
  for (const RankedSet& r : ranked) {
    const Tiling t = tiling_of(r.params);
    if (kernel_kind(t) != first && taken[kernel_kind(t)] < per_kind && seen.insert(t).second) {
      ++taken[kernel_kind(t)];
      out.push_back(r);
    }
  }
  return out;
}

// The candidates for a top-k re-benchmark, `count` in all (the first pass and spares), from `pool`
// (the model's best sets, best first) spread over tilings: the first top_k - neighbours - hedges, the
// last of them the kind hedge where there is one (the first set of the spread of a kind that the
// places before lack, if rated within kind_hedge_share of the first); then, where the first splits
// the reduction, per depth j = 1, 2, ... the first set whose split is at most the first's / 2^j, or 1
// (hedges_for(top_k) of them); then the rest in order. The last `neighbours` of the top k are chosen
// after the others are timed (neighbours.hpp). The pool should hold the model's best sets of each
// split and each kind (rank_*_space's per_split), or there may be none to hedge with.
template <class RankedSet>
std::vector<RankedSet> candidate_sets(const std::vector<RankedSet>& pool, std::size_t top_k, std::size_t count,
                                      std::size_t neighbours = 0) {
  const std::vector<RankedSet> spread = spread_ranked_sets(pool, pool.size());
  count = std::min(count, spread.size());
  if (spread.empty()) return {};
  std::vector<bool> taken(spread.size(), false);
  std::vector<RankedSet> out;
  auto take = [&](std::size_t i) { taken[i] = true, out.push_back(spread[i]); };
  const int first_split = grid_split(tiling_of(spread.front().params));
  const std::size_t hedges = first_split > 1 ? hedges_for(top_k) : 0;
  const std::size_t first_pass = top_k - std::min(top_k, neighbours);
  std::size_t plain = first_pass - std::min(first_pass, hedges);
  // The kind hedge: in the last plain place, the first set of the spread whose kind the places before
  // lack, where the model rates it close enough to its first choice.
  std::optional<std::size_t> kind_hedge;
  if (plain > 1) {
    std::set<int> kinds;
    for (std::size_t i = 0; i + 1 < std::min(plain, spread.size()); ++i)
      kinds.insert(kernel_kind(tiling_of(spread[i].params)));
    for (std::size_t i = plain - 1; i < spread.size() && !kind_hedge; ++i)
      if (!kinds.contains(kernel_kind(tiling_of(spread[i].params))) &&
          spread[i].predicted_tflops >= kind_hedge_share * spread.front().predicted_tflops)
        kind_hedge = i;
    if (kind_hedge) --plain;
  }
  for (std::size_t i = 0; i < spread.size() && out.size() < std::min(plain, count); ++i) take(i);
  if (kind_hedge && out.size() < count) take(*kind_hedge);
  for (int j = 1; j <= int(hedges) && out.size() < count; ++j)
    for (std::size_t i = 0; i < spread.size(); ++i)
      if (!taken[i] && grid_split(tiling_of(spread[i].params)) <= std::max(1, first_split >> j)) {
        take(i);
        break;
      }
  for (std::size_t i = 0; i < spread.size() && out.size() < count; ++i)
    if (!taken[i]) take(i);
  return out;
}

}  // namespace isaac::tune
