#include <isaac/tune/neighbours.hpp>

#include <array>
#include <initializer_list>

namespace isaac::tune {

namespace {

// Tiling positions (spread.hpp): the block and thread tiles' rows and columns, U, the grid split,
// then the kind of kernel (tensor cores, Winograd and its thread groups).
constexpr std::array<std::initializer_list<int>, 4> step_groups = {{{0, 2}, {1, 3}, {4}, {5}}};
constexpr Step group_step[] = {Step::rows, Step::columns, Step::depth, Step::split};
constexpr int kind_positions[] = {6, 7, 8};

bool within_a_factor_of_two(int a, int b) { return a <= 2 * b && b <= 2 * a; }

}  // namespace

std::optional<Step> tiling_step(const Tiling& from, const Tiling& to) {
  for (int i : kind_positions)
    if (from[i] != to[i]) return std::nullopt;
  std::optional<Step> step = Step::variant;
  for (std::size_t g = 0; g < step_groups.size(); ++g) {
    bool differs = false;
    for (int i : step_groups[g]) {
      if (from[i] == to[i]) continue;
      if (!within_a_factor_of_two(from[i], to[i])) return std::nullopt;
      differs = true;
    }
    if (!differs) continue;
    if (*step != Step::variant) return std::nullopt;
    step = group_step[g];
  }
  return step;
}

bool neighbours_pay(const Tiling& first) { return first[6] != 2; }

}  // namespace isaac::tune
