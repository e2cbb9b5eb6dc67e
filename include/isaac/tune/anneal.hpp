#pragma once
// Simulated annealing over an ordered list of candidates (the second step of the MAGMA-style search:
// the pruned list of tune/prune.hpp, ordered by occupancy), timing candidates on the GPU.
//
// The state is a position in the list; a move jumps to a nearby position, within a radius that
// shrinks linearly with the budget spent (a quarter of the list at the start, 1 at the end). A move to a
// slower candidate is accepted with probability exp(-log(t_new / t_now) / T), and T falls
// geometrically from `t_start` to `t_end` over the budget. Each step proposes `batch` positions at
// once so that the caller can compile them in parallel; positions already timed are free. The
// search stops when `budget` candidates have been timed, or when no untimed position is left within
// reach of the current one.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace isaac::tune {

struct AnnealOptions {
  int budget = 40;        // candidates timed at most
  int batch = 8;          // positions proposed (and compiled in parallel) per step
  double t_start = 0.3;   // temperatures, in units of log(time): 0.3 accepts 35% slower with p = 1/e
  double t_end = 0.01;
  std::uint64_t seed = 1;
};

struct AnnealResult {
  std::size_t best = 0;       // position of the fastest candidate timed
  double best_ms = 0;
  int timed = 0;              // candidates timed (failures included)
  int failed = 0;             // candidates that could not run
  int steps = 0;
  std::vector<std::size_t> order;  // positions in the order they were timed
};

// `measure` times the given positions (never one it was already given) and returns their times in
// ms, in the same order; a candidate that cannot run gets +infinity. Throws InvalidArgument for an
// empty list, a start outside it or a budget below 1; Error when every candidate timed failed.
AnnealResult anneal(std::size_t candidates, std::size_t start,
                    const std::function<std::vector<double>(const std::vector<std::size_t>&)>& measure,
                    const AnnealOptions& options = {});

}  // namespace isaac::tune
