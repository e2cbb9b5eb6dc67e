#include <isaac/tune/spread.hpp>

#include <algorithm>
#include <set>

namespace isaac::tune {

Tiling tiling_of(const lower::GemmParams& p) { return {p.ml, p.nl, p.ms, p.ns, p.u, p.kg, p.tc, 0, 0}; }

Tiling tiling_of(const lower::ConvParams& p) {
  return {p.pl, p.kl, p.ps, p.ks, p.u, p.cg, p.tc, p.wg, p.wg ? p.cl : 0};
}

int grid_split(const Tiling& t) { return t[5]; }

int kernel_kind(const Tiling& t) { return t[6]; }

std::vector<std::size_t> spread_over_tilings(std::span<const Tiling> ranked, std::size_t count) {
  count = std::min(count, ranked.size());
  std::vector<std::size_t> chosen;
  std::vector<bool> taken(ranked.size(), false);
  std::set<Tiling> seen;
  for (std::size_t i = 0; i < ranked.size() && chosen.size() < count; ++i)
    if (seen.insert(ranked[i]).second) chosen.push_back(i), taken[i] = true;
  for (std::size_t i = 0; i < ranked.size() && chosen.size() < count; ++i)
    if (!taken[i]) chosen.push_back(i);
  return chosen;
}

}  // namespace isaac::tune
