#include <isaac/tune/split_siblings.hpp>

#include <algorithm>

namespace isaac::tune {

std::vector<lower::GemmParams> grid_split_siblings(const ir::Gemm& problem, const lower::GemmParams& best,
                                                   const lower::DeviceLimits& device, int count) {
  std::vector<int> order{1};
  for (int step = 2; step <= 256; step *= 2) order.insert(order.end(), {best.kg / step, best.kg * step});
  std::vector<lower::GemmParams> out;
  for (int kg : order) {
    if (int(out.size()) >= count) break;
    if (kg < 1 || kg > 256 || kg == best.kg) continue;
    if (std::any_of(out.begin(), out.end(), [&](const lower::GemmParams& o) { return o.kg == kg; })) continue;
    lower::GemmParams p = best;
    p.kg = kg;
    lower::fit_gemm_pipeline_depth(problem, p, device);  // the grid changed
    if (lower::check_gemm(problem, p, device)) out.push_back(p);
  }
  return out;
}

}  // namespace isaac::tune
