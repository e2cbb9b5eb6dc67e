#pragma once
// What the top-k re-benchmark had to choose from (`tuned --candidates-csv`, GEMM and CONV): every
// candidate it timed, timed again the way the benchmark times the contenders. The best of them
// against the brute-force best says whether the model's list held a kernel good enough; the chosen
// one against the best of them says whether the re-benchmark's short timing found it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace isaac::bench {

struct TimedCandidate {
  int rank = 0;            // place among the candidates spread over tilings
  std::string params;
  double select_ms = 0;    // the re-benchmark's own time
  double tflops = 0;       // the benchmark's; 0 when it failed
  std::string error;
};

struct CandidatesOfRow {
  std::string key;  // the row's leading CSV cells (the problem), without a trailing comma
  std::string name;
  double brute_tflops = 0;
  std::string chosen;  // the re-benchmark's choice
  std::vector<TimedCandidate> candidates;
};

// What a decision's re-benchmark timed (TuningDecision::candidates), not timed again yet.
template <class TimedSets>
std::vector<TimedCandidate> candidates_of(const TimedSets& timed) {
  std::vector<TimedCandidate> out;
  for (const auto& t : timed)
    out.push_back({.rank = t.rank, .params = t.params.str(), .select_ms = t.ms, .tflops = 0, .error = {}});
  return out;
}

// Writes one CSV line per candidate and prints how often the list held a kernel within 95% of the
// brute-force best, and how often the re-benchmark chose one within 2% of the list's best.
inline void write_candidates(const std::string& path, const std::string& comment, const std::string& key_columns,
                             const std::vector<CandidatesOfRow>& rows) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "# " << comment << "\n";
  out << key_columns << ",rank,chosen,select_ms,bench_tflops,vs_brute,vs_best_candidate,params,error\n";
  int measured = 0, list_ok = 0, found = 0;
  double log_found = 0;
  for (const CandidatesOfRow& r : rows) {
    double best = 0;
    for (const TimedCandidate& c : r.candidates) best = std::max(best, c.tflops);
    double chosen_tflops = 0;
    for (const TimedCandidate& c : r.candidates) {
      const bool chosen = c.params == r.chosen;
      if (chosen) chosen_tflops = c.tflops;
      auto ratio = [](double a, double b) { return a > 0 && b > 0 ? fmt::format("{:.3f}", a / b) : std::string(); };
      out << fmt::format("{},{},{},{:.5f},{},{},{},\"{}\",\"{}\"\n", r.key, c.rank, int(chosen), c.select_ms,
                         c.tflops > 0 ? fmt::format("{:.3f}", c.tflops) : "", ratio(c.tflops, r.brute_tflops),
                         ratio(c.tflops, best), c.params, c.error);
    }
    if (best <= 0 || chosen_tflops <= 0 || r.brute_tflops <= 0) continue;
    ++measured;
    list_ok += best >= 0.95 * r.brute_tflops;
    found += chosen_tflops >= 0.98 * best;
    log_found += std::log(chosen_tflops / best);
    fmt::print("{:<44} best candidate / brute force {:.3f}, chosen / best candidate {:.3f}\n", r.name,
               best / r.brute_tflops, chosen_tflops / best);
  }
  if (measured > 0)
    fmt::print("candidates: the list held one >= 95% of the brute-force best on {}/{} rows; the re-benchmark chose "
               "one within 2% of the list's best on {}/{} (geometric mean chosen / best {:.3f})\n",
               list_ok, measured, found, measured, std::exp(log_found / measured));
  fmt::print("wrote {}\n", path);
}

}  // namespace isaac::bench
