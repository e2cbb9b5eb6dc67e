#pragma once
// The re-benchmark step shared by every template's selection: time the model's best, spread over
// tilings (tune/spread.hpp), in order, skipping those that fail, and keep the fastest.
#include <isaac/error.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/spread.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace isaac::tune {

template <class Params, class Rank>
Choice<Params> select_best(int top_k, const std::string& problem, const Rank& rank, const Benchmark<Params>& benchmark,
                           const std::function<void(const std::vector<RankedSet<Params>>&)>& candidates) {
  if (top_k < 0) throw InvalidArgument(fmt::format("top_k={} must be 0 (trust the model) or more", top_k));
  Choice<Params> choice;
  // Spare candidates stand in for those that fail to compile or run. The pool they are spread from
  // is 32 sets per candidate: room for the many variants of each of the model's favourite tilings.
  const int wanted = std::max(top_k, 1) + 8;
  const std::vector<RankedSet<Params>> ranked =
      spread_ranked_sets(rank(top_k == 0 ? 1 : 32 * wanted, &choice.search), std::size_t(wanted));
  if (ranked.empty()) throw Error(fmt::format("no legal parameter set for {}", problem));
  if (top_k == 0) {
    choice.params = ranked.front().params;
    choice.predicted_tflops = ranked.front().predicted_tflops;
    return choice;
  }
  if (candidates) candidates(ranked);
  for (size_t i = 0; i < ranked.size() && choice.benchmarked < top_k; ++i) {
    double ms;
    try {
      ms = benchmark(ranked[i].params);
    } catch (const std::exception& e) {
      choice.failures.push_back(fmt::format("{}: {}", ranked[i].params.str(), e.what()));
      continue;
    }
    ++choice.benchmarked;
    if (choice.measured_ms < 0 || ms < choice.measured_ms) {
      choice.measured_ms = ms;
      choice.params = ranked[i].params;
      choice.predicted_tflops = ranked[i].predicted_tflops;
      choice.rank = int(i);  // in the spread order
    }
  }
  if (choice.benchmarked == 0)
    throw Error(fmt::format("none of the model's {} best parameter sets for {} could run; first failure: {}",
                            ranked.size(), problem, choice.failures.front()));
  return choice;
}

}  // namespace isaac::tune
