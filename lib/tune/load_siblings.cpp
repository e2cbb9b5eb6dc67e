#include <isaac/tune/load_siblings.hpp>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <tuple>
#include <utility>
#include <vector>

namespace isaac::tune {

namespace {

// The width pairs other than (first, second), the nearest first: by the sum of the steps of a factor
// of two, the narrower first on a tie.
std::vector<std::pair<int, int>> other_widths(int first, int second) {
  auto steps = [](int a, int b) { return std::abs(std::countr_zero(unsigned(a)) - std::countr_zero(unsigned(b))); };
  std::vector<std::tuple<int, int, int, int>> order;  // distance, sum, first, second
  for (int x : {1, 2, 4, 8})
    for (int y : {1, 2, 4, 8})
      if (x != first || y != second) order.emplace_back(steps(x, first) + steps(y, second), x + y, x, y);
  std::sort(order.begin(), order.end());
  std::vector<std::pair<int, int>> out;
  for (auto [distance, sum, x, y] : order) out.emplace_back(x, y);
  return out;
}

}  // namespace

std::vector<lower::GemmParams> load_width_siblings(const ir::Gemm& problem, const lower::GemmParams& best,
                                                   const lower::DeviceLimits& device, int count) {
  if (best.tma) return {};  // TMA copies the tiles whole: VA and VB name no load of a thread
  std::vector<lower::GemmParams> out;
  for (auto [va, vb] : other_widths(best.va, best.vb)) {
    if (int(out.size()) >= count) break;
    lower::GemmParams p = best;
    p.va = va, p.vb = vb;
    lower::fit_gemm_load_layouts(problem.a_trans, problem.b_trans, p);
    if (lower::check_gemm(problem, p, device)) out.push_back(p);
  }
  return out;
}

std::vector<lower::ConvParams> load_width_siblings(const ir::Conv& problem, const lower::ConvParams& best,
                                                   const lower::DeviceLimits& device, int count) {
  if (best.wg || lower::conv_tma(problem, best)) return {};
  std::vector<lower::ConvParams> out;
  for (auto [vi, vf] : other_widths(best.vi, best.vf)) {
    if (int(out.size()) >= count) break;
    lower::ConvParams p = best;
    p.vi = vi, p.vf = vf;
    lower::fit_conv_load_layouts(problem, p);
    if (!lower::outside_conv_space(problem, p, {}, device)) out.push_back(p);
  }
  return out;
}

}  // namespace isaac::tune
