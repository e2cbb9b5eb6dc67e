#pragma once
// The re-benchmark's last candidates: the model's best neighbours of the fastest candidate timed (and,
// where the first pass timed two kinds of kernel, of the fastest of the other kind: select_best.hpp).
// The model places the fast region of a space well and ranks badly within it: of the ten GEMM rows
// whose top-10 missed 95% of the brute force on the H100 (0.1.18), four had a brute-force winner one
// step from the fastest candidate (U 64 for 32, KG 6 for 8, a block tile half as wide), which the
// model ranked below its ten tilings. A neighbour differs from the center in one of its tilings'
// groups by at most a factor of two per size, or only in how it loads and orders its work. GEMM and
// CONV both use it (docs/tuning-history.md, round 34).
#include <isaac/tune/spread.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace isaac::tune {

// The groups of a step: the same tiling (a variant: vector widths, layouts, swizzle, buffering,
// in-block splits), the rows of the block and thread tiles, their columns, the depth U, the grid split.
enum class Step { variant, rows, columns, depth, split };

// The step from `from` to `to`; none when they differ in more than one group, by more than a factor
// of two in a size, or in the tensor cores or the Winograd kind (another kernel, not a step).
std::optional<Step> tiling_step(const Tiling& from, const Tiling& to);

// How many of a top-k re-benchmark's candidates are the fastest's neighbours: a fifth. Dropping the
// two last spread tilings of the top 10 (and keeping the hedges) cost 0.1% over the H100's 54 GEMM
// rows in 0.1.18's candidate timings, and no row fell under 95% of the brute force.
inline std::size_t refinements_for(std::size_t top_k) { return top_k / 5; }

// Whether the neighbour step is worth its two candidates where the model's first choice has tiling
// `first`: not for `wgmma` (TC = 2) sets. In three H200 runs over the 45 f16 GEMM rows whose fastest
// first-pass candidate was one, the fastest neighbour beat it by more than 1% once (geometric mean
// 1.0004), where f32 and f64 gained 0.35-0.9% and CONV 0.7-0.9% (docs/tuning-history.md, round 34); those
// spaces hold few neighbours (22-31 for f16 4096^3 and 2560x128x2560). The ten are then spread as
// before the step.
bool neighbours_pay(const Tiling& first);

// `count` of `ranked` (the model's best neighbours of a set whose tiling is `center`, best first), in
// the order to time them: the best, then the best of each kind of step not taken yet, then the rest.
// A first pick that is a variant would otherwise leave the others to more variants of one tiling.
template <class RankedSet>
std::vector<RankedSet> pick_neighbours(const Tiling& center, const std::vector<RankedSet>& ranked, std::size_t count) {
  std::vector<RankedSet> out;
  std::vector<bool> taken(ranked.size(), false), step_taken(5, false);
  for (std::size_t i = 0; i < ranked.size() && out.size() < count; ++i) {
    const std::optional<Step> step = tiling_step(center, tiling_of(ranked[i].params));
    if (!step || step_taken[std::size_t(*step)]) continue;
    step_taken[std::size_t(*step)] = true;
    taken[i] = true;
    out.push_back(ranked[i]);
  }
  for (std::size_t i = 0; i < ranked.size() && out.size() < count; ++i)
    if (!taken[i] && tiling_step(center, tiling_of(ranked[i].params))) out.push_back(ranked[i]);
  return out;
}

}  // namespace isaac::tune
