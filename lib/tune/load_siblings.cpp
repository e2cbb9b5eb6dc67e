#include <isaac/tune/load_siblings.hpp>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <tuple>

namespace isaac::tune {

std::vector<lower::GemmParams> load_width_siblings(const ir::Gemm& problem, const lower::GemmParams& best,
                                                   const lower::DeviceLimits& device, int count) {
  if (best.tma) return {};  // TMA copies the tiles whole: VA and VB name no load of a thread
  auto steps = [](int a, int b) { return std::abs(std::countr_zero(unsigned(a)) - std::countr_zero(unsigned(b))); };
  std::vector<std::tuple<int, int, int, int>> order;  // distance, VA + VB, VA, VB
  for (int va : {1, 2, 4, 8})
    for (int vb : {1, 2, 4, 8})
      if (va != best.va || vb != best.vb) order.emplace_back(steps(va, best.va) + steps(vb, best.vb), va + vb, va, vb);
  std::sort(order.begin(), order.end());
  std::vector<lower::GemmParams> out;
  for (auto [distance, sum, va, vb] : order) {
    if (int(out.size()) >= count) break;
    lower::GemmParams p = best;
    p.va = va, p.vb = vb;
    lower::fit_gemm_load_layouts(problem.a_trans, problem.b_trans, p);
    if (lower::check_gemm(problem, p, device)) out.push_back(p);
  }
  return out;
}

}  // namespace isaac::tune
