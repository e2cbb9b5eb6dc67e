#pragma once
// The re-benchmark step shared by every template's selection: time the model's best, spread over
// tilings and hedged against its biases (tune/spread.hpp), in order, skipping those that fail; then,
// where the template lists neighbours, the model's best neighbours of the fastest so far, and of the
// fastest of another kind of kernel where one was timed (tune/neighbours.hpp); then the template's
// own hedges; time those close to the fastest again; race the closest where their kernels are short;
// keep the fastest.
#include <isaac/error.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/spread.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
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

// The middle value (the mean of the middle two of an even count).
inline double median(std::vector<double> values) {
  std::ranges::sort(values);
  const std::size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : (values[half - 1] + values[half]) / 2;
}

// Short kernels are raced. A timing is the median of runs_per_timing runs: 140 us of GPU time for a
// 20 us kernel, and medians that short left the choice to chance: on f64 DeepBench-F 2560x16 (H200,
// round 65) the re-benchmark put one set 0.3% ahead of another that 30-run medians then put 5% ahead
// of it. The finalists take turns, each turn in the reverse order of the one before, so that they see
// the same clocks and a drift favours none; a finalist's time is the median of its turns' medians, and
// one that is clearly slower after three turns stops being timed. Returns the fastest finalist, or the
// fastest of all where no race ran (kernels long enough, or a single finalist); finalists that fail a
// turn get an infinite time, which the caller drops.
template <class Params>
TimedSet<Params> race_finalists(std::vector<TimedSet<Params>>& timed, const Benchmark<Params>& benchmark,
                                std::vector<std::string>& failures) {
  const double fastest = std::ranges::min(timed, {}, &TimedSet<Params>::ms).ms;
  const int rounds = int(std::min<double>(race_rounds, std::ceil(race_ms / (runs_per_timing * fastest))));
  std::vector<std::size_t> finalists;  // indices into timed, fastest first
  for (std::size_t i = 0; i < timed.size(); ++i)
    if (timed[i].ms <= race_margin * fastest) finalists.push_back(i);
  std::ranges::stable_sort(finalists, {}, [&](std::size_t i) { return timed[i].ms; });
  finalists.resize(std::min(finalists.size(), race_finalists_max));
  if (rounds < 2 || finalists.size() < 2) return std::ranges::min(timed, {}, &TimedSet<Params>::ms);
  std::map<std::size_t, std::vector<double>> turns;
  auto time_of = [&](std::size_t i) { return median(turns[i]); };
  for (int round = 0; round < rounds && finalists.size() > 1; ++round) {
    std::vector<std::size_t> order = finalists;
    if (round % 2) std::ranges::reverse(order);
    for (std::size_t i : order) try {
        turns[i].push_back(benchmark(timed[i].params));
      } catch (const std::exception& e) {
        failures.push_back(fmt::format("{} (race): {}", timed[i].params.str(), e.what()));
        timed[i].ms = INFINITY;
        turns.erase(i);
        std::erase(finalists, i);
      }
    if (round < 2 || finalists.empty()) continue;
    const double best = time_of(std::ranges::min(finalists, {}, time_of));
    std::erase_if(finalists, [&](std::size_t i) { return time_of(i) > clearly_slower * best; });
  }
  for (const auto& [i, t] : turns) timed[i].ms = median(t);
  if (finalists.empty()) return std::ranges::min(timed, {}, &TimedSet<Params>::ms);
  return timed[std::ranges::min(finalists, {}, [&](std::size_t i) { return timed[i].ms; })];
}

template <class Params, class Rank>
Choice<Params> select_best(int top_k, const std::string& problem, const Rank& rank, const Benchmark<Params>& benchmark,
                           const std::function<void(const std::vector<RankedSet<Params>>&)>& candidates,
                           const Neighbours<Params>& neighbours = {}, const std::vector<Params>& hedges = {}) {
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
  // The template's hedges that the model's candidates do not hold already, ranked after the listed.
  for (std::size_t i = 0; i < hedges.size(); ++i) try {
      if (std::ranges::any_of(choice.timed, [&](const TimedSet<Params>& t) { return t.params == hedges[i]; }))
        continue;
      choice.timed.push_back({hedges[i], choice.listed + int(i), benchmark(hedges[i])});
    } catch (const std::exception& e) {
      choice.failures.push_back(fmt::format("{}: {}", hedges[i].str(), e.what()));
    }
  if (choice.timed.empty())
    throw Error(fmt::format("none of the {} parameter sets tried for {} could run; first failure: {}",
                            ranked.size() + hedges.size(), problem, choice.failures.front()));
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
      choice.failures.push_back(fmt::format("{} (second timing): {}", t.params.str(), e.what()));
      t.ms = INFINITY;
    }
  }
  // A kernel that failed a second time or in the race is not a candidate.
  auto drop_failed = [&] {
    std::erase_if(choice.timed, [](const TimedSet<Params>& t) { return !std::isfinite(t.ms); });
    if (choice.timed.empty())
      throw Error(fmt::format(
          "none of the {} parameter sets tried for {} ran every time it was timed; first failure: {}",
          ranked.size() + hedges.size(), problem, choice.failures.front()));
  };
  drop_failed();
  const TimedSet<Params> best = race_finalists(choice.timed, benchmark, choice.failures);
  drop_failed();
  choice.benchmarked = int(choice.timed.size());
  choice.params = best.params;
  choice.measured_ms = best.ms;
  choice.rank = best.rank;
  choice.predicted_tflops = best.rank < choice.listed ? ranked[std::size_t(best.rank)].predicted_tflops : 0;
  return choice;
}

}  // namespace isaac::tune
