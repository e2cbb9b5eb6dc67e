#pragma once
// The re-benchmark step shared by every template's selection: time the model's best, spread over
// tilings and hedged against its biases (tune/spread.hpp), in order, skipping those that fail; then,
// where the template lists neighbours, the model's best neighbours of the fastest so far, and of the
// fastest of another kind of kernel where one was timed (tune/neighbours.hpp); time those close to
// the fastest again; keep the fastest.
#include <isaac/error.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/spread.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace isaac::tune {

// Candidates whose first time is within this factor of the fastest are timed a second time.
inline constexpr double close_to_fastest = 1.1;

// The model's best neighbours of a set, best first (neighbours.hpp); the set itself not among them.
template <class Params>
using Neighbours = std::function<std::vector<RankedSet<Params>>(const Params& center)>;

// The sets whose neighbours fill the re-benchmark's last `refinements` places, and how many each: the
// fastest timed set; and, where the first pass timed another kind of kernel (the kind hedge), one of
// the places goes to the fastest set of that kind. The model ranks sets within a kind better than the
// kinds against each other, so its first guess at the other kind can be one step from a fast set of
// it: on f16 CONV Conv1 and Conv3 (CHWN) the retrained model's best `wgmma` set ran at 0.82 of the
// brute force, whose `wgmma` winner is one block tile away, while its `mma.sync` sets reached 0.88
// (docs/tuning-history.md, round 55).
template <class Params>
std::vector<std::pair<Params, std::size_t>> neighbour_centers(const std::vector<TimedSet<Params>>& timed,
                                                              std::size_t refinements) {
  const TimedSet<Params>& fastest = std::ranges::min(timed, {}, &TimedSet<Params>::ms);
  const int kind = kernel_kind(tiling_of(fastest.params));
  const TimedSet<Params>* other = nullptr;
  for (const TimedSet<Params>& t : timed)
    if (kernel_kind(tiling_of(t.params)) != kind && (!other || t.ms < other->ms)) other = &t;
  if (refinements < 2 || !other) return {{fastest.params, refinements}};
  return {{fastest.params, refinements - 1}, {other->params, 1}};
}

template <class Params, class Rank>
Choice<Params> select_best(int top_k, const std::string& problem, const Rank& rank, const Benchmark<Params>& benchmark,
                           const std::function<void(const std::vector<RankedSet<Params>>&)>& candidates,
                           const Neighbours<Params>& neighbours = {}) {
  if (top_k < 0) throw InvalidArgument(fmt::format("top_k={} must be 0 (trust the model) or more", top_k));
  Choice<Params> choice;
  // Spare candidates stand in for those that fail to compile or run. The pool they are spread from
  // is 32 sets per candidate: room for the many variants of each of the model's favourite tilings.
  const int wanted = std::max(top_k, 1) + 8;
  const std::vector<RankedSet<Params>> pool = rank(top_k == 0 ? 1 : 32 * wanted, &choice.search);
  const bool refine = neighbours && !pool.empty() && neighbours_pay(tiling_of(pool.front().params));
  const std::size_t refinements = refine ? refinements_for(std::size_t(top_k)) : 0;
  std::vector<RankedSet<Params>> ranked = candidate_sets(pool, std::size_t(top_k), std::size_t(wanted), refinements);
  if (ranked.empty()) throw Error(fmt::format("no legal parameter set for {}", problem));
  if (top_k == 0) {
    choice.params = ranked.front().params;
    choice.predicted_tflops = ranked.front().predicted_tflops;
    return choice;
  }
  // The sets about to be timed, announced so that they compile in parallel: the first pass, then the
  // neighbours. The spares compile when they are needed.
  auto announce = [&](const std::vector<RankedSet<Params>>& sets, std::size_t count) {
    count = std::min(count, sets.size());
    if (candidates && count > 0) candidates({sets.begin(), sets.begin() + std::ptrdiff_t(count)});
  };
  announce(ranked, std::size_t(top_k) - refinements);
  // Times ranked[next...] in order until `until` candidates have run.
  auto time_until = [&](std::size_t& next, std::size_t end, int until) {
    for (; next < end && int(choice.timed.size()) < until; ++next) try {
        choice.timed.push_back({ranked[next].params, int(next), benchmark(ranked[next].params)});
      } catch (const std::exception& e) {
        choice.failures.push_back(fmt::format("{}: {}", ranked[next].params.str(), e.what()));
      }
  };
  std::size_t next = 0;
  const std::size_t listed = ranked.size();
  time_until(next, listed, top_k - int(refinements));
  if (refinements > 0 && !choice.timed.empty()) {
    int until = top_k - int(refinements);
    for (const auto& [center, count] : neighbour_centers(choice.timed, refinements)) {
      std::vector<RankedSet<Params>> unlisted;
      for (const RankedSet<Params>& r : neighbours(center))
        if (std::ranges::none_of(ranked, [&](const RankedSet<Params>& c) { return c.params == r.params; }))
          unlisted.push_back(r);
      const std::vector<RankedSet<Params>> near = pick_neighbours(tiling_of(center), unlisted, count + 4);
      announce(near, count);
      // Each center's neighbours, then its spares where one fails; not the spares of the one before.
      std::size_t next_near = ranked.size();
      ranked.insert(ranked.end(), near.begin(), near.end());
      until += int(count);
      time_until(next_near, ranked.size(), until);
    }
  }
  time_until(next, listed, top_k);  // spares, where candidates failed or no neighbour was left
  choice.listed = int(ranked.size());
  if (choice.timed.empty())
    throw Error(fmt::format("none of the model's {} best parameter sets for {} could run; first failure: {}",
                            ranked.size(), problem, choice.failures.front()));
  // The candidates close to the fastest are timed again, in the reverse order, and keep the lower of
  // their two medians: what disturbs a timing (a host thread descheduled between the events, clocks
  // still rising) only ever adds time, and the order undoes a drift along the first pass.
  const double fastest = std::ranges::min(choice.timed, {}, &TimedSet<Params>::ms).ms;
  for (std::size_t i = choice.timed.size(); i-- > 0;) {
    TimedSet<Params>& t = choice.timed[i];
    if (t.ms > close_to_fastest * fastest) continue;
    try {
      t.ms = std::min(t.ms, benchmark(t.params));
    } catch (const std::exception& e) {
      // A kernel that fails once in two runs is not a candidate.
      choice.failures.push_back(fmt::format("{} (second timing): {}", t.params.str(), e.what()));
      choice.timed.erase(choice.timed.begin() + std::ptrdiff_t(i));
    }
  }
  if (choice.timed.empty())
    throw Error(fmt::format("none of the model's {} best parameter sets for {} ran twice; first failure: {}",
                            ranked.size(), problem, choice.failures.front()));
  choice.benchmarked = int(choice.timed.size());
  const TimedSet<Params>& best = *std::ranges::min_element(choice.timed, {}, &TimedSet<Params>::ms);
  choice.params = best.params;
  choice.measured_ms = best.ms;
  choice.rank = best.rank;
  choice.predicted_tflops = ranked[std::size_t(best.rank)].predicted_tflops;
  return choice;
}

}  // namespace isaac::tune
