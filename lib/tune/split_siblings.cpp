#include <isaac/tune/split_siblings.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>

namespace isaac::tune {

std::vector<lower::GemmParams> grid_split_siblings(const ir::Gemm& problem, const lower::GemmParams& best,
                                                   const lower::DeviceLimits& device, int count) {
  // KG = 1, then the space's other splits by their distance from best's on a log scale (the smaller
  // first on a tie).
  std::vector<int> order(std::begin(lower::gemm_kg_values), std::end(lower::gemm_kg_values));
  auto distance = [&](int kg) { return std::abs(std::log(double(kg) / best.kg)); };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if ((a == 1) != (b == 1)) return a == 1;
    return distance(a) < distance(b) - 1e-9;
  });
  const std::int64_t unsplit = lower::gemm_grid_blocks(problem, best) / best.kg;
  std::vector<lower::GemmParams> out;
  for (int kg : order) {
    if (int(out.size()) >= count) break;
    if (kg == best.kg || !lower::gemm_split_in_space(unsplit, kg, device)) continue;
    lower::GemmParams p = best;
    p.kg = kg;
    lower::fit_gemm_pipeline_depth(problem, p, device);  // the grid changed
    if (lower::check_gemm(problem, p, device)) out.push_back(p);
  }
  return out;
}

}  // namespace isaac::tune
