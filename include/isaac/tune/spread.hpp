#pragma once
// Candidates for the re-benchmark spread over tilings. The model's errors are shared by sets that
// differ only in how they load and order their work (vector widths, load layouts, swizzle, double
// buffering): when it overrates one tiling, its ten best sets are often ten variants of that tiling,
// and the re-benchmark learns nothing that the first of them did not tell it.
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace isaac::tune {

// Block tile, thread tile, depth, grid split and tensor cores: what decides the work of a block.
using Tiling = std::array<int, 7>;
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

}  // namespace isaac::tune
