// `ranking`: the model's pass over the whole legal space of every paper problem (issue 6: "Model
// evaluation over the whole legal GEMM space: under 50 ms on one core"), as isaac::choose_gemm runs
// it, on the calling thread, with the shipped model of the device named. No GPU is needed.
//   ranking/<dtype>/<suite>/<m>x<n>x<k>/<op>
// The model's time is the search's own (SearchReport::evaluate_ms, wall time): Google Benchmark
// repeats each search and the summary takes each problem's median, which a busy moment of the
// machine does not move. The enumeration of the space is timed apart; it is not the model's time.
#include "compile_pool.hpp"
#include "csv.hpp"
#include "google_benchmark.hpp"
#include "modes.hpp"
#include "problems.hpp"

#include <isaac/lower/gemm.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/search.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

namespace isaac::bench {

namespace {

// What select_gemm asks of the ranking with its default top_k = 10 (select_best.hpp).
constexpr int ranked_pool = 32 * (10 + 8);

struct Ranking {
  ir::DType dtype;
  Problem problem;
  std::vector<double> evaluate_ms, enumerate_ms;
  tune::SearchReport last;
  std::string error;
};

// "model name" of /proc/cpuinfo, where there is one.
std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name")) {
      const auto colon = line.find(':');
      const auto name = colon == std::string::npos ? colon : line.find_first_not_of(' ', colon + 1);
      if (name != std::string::npos) return line.substr(name);
    }
  return "an unnamed CPU";
}

double median(std::vector<double> v) {
  std::ranges::sort(v);
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int ranking_main(const RankingOptions& o) {
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;
  lower::DeviceLimits limits;
  limits.sm = o.compute_capability;
  std::map<ir::DType, tune::Model> models;
  for (ir::DType dtype : parse_dtypes(o.dtypes)) {
    auto choice = tune::find_model("gemm", dtype, o.device, o.compute_capability);
    if (!choice) throw BenchError(fmt::format("no GEMM {} model for {} (sm_{})", ir::name(dtype), o.device, o.compute_capability));
    if (!choice->warning.empty()) fmt::print(stderr, "{}\n", choice->warning);
    fmt::print("{}: {}\n", ir::name(dtype), choice->source);
    models.emplace(dtype, std::move(choice->model));
  }
  std::vector<Ranking> cases;
  for (const auto& [dtype, model] : models)
    for (const Problem& p : load_problems(o.problems)) cases.push_back({dtype, p, {}, {}, {}, {}});

  for (Ranking& c : cases) {
    Ranking* cp = &c;
    const tune::Model* model = &models.at(c.dtype);
    benchmark::RegisterBenchmark(("ranking/" + problem_name(c.dtype, c.problem)).c_str(),
                                 [cp, model, &limits](benchmark::State& state) {
                                   Ranking& c = *cp;
                                   const ir::Gemm g = to_gemm(c.problem, c.dtype);
                                   c.evaluate_ms.clear(), c.enumerate_ms.clear();
                                   try {
                                     for (auto _ : state) {
                                       tune::rank_gemm_space(g, limits, *model, ranked_pool, &c.last,
                                                             tune::per_split_pool);
                                       c.evaluate_ms.push_back(c.last.evaluate_ms);
                                       c.enumerate_ms.push_back(c.last.enumerate_ms);
                                       state.SetIterationTime(c.last.evaluate_ms * 1e-3);
                                     }
                                   } catch (const std::exception& e) {
                                     c.error = one_line(e.what());
                                     state.SkipWithError(c.error.c_str());
                                     return;
                                   }
                                   state.counters["legal_sets"] = double(c.last.legal_sets);
                                   state.counters["enumerate_ms"] = median(c.enumerate_ms);
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::string csv = fmt::format(
      "# isaac-bench-gemm ranking on {}: the shipped GEMM models of {} (sm_{}) over each problem's whole legal "
      "space, one thread; milliseconds over `runs` searches\n"
      "dtype,suite,m,n,k,at,bt,legal_sets,evaluate_ms_median,evaluate_ms_min,enumerate_ms_median,runs\n",
      cpu_name(), o.device, o.compute_capability);
  std::vector<double> medians;
  int failures = 0;
  for (const Ranking& c : cases) {
    const Problem& p = c.problem;
    if (!c.error.empty()) {
      ++failures;
      fmt::print(stderr, "{}: {}\n", problem_name(c.dtype, p), c.error);
      continue;
    }
    if (c.evaluate_ms.empty()) continue;  // left out by --benchmark_filter
    medians.push_back(median(c.evaluate_ms));
    csv += fmt::format("{},{},{},{},{},{:d},{:d},{},{:.2f},{:.2f},{:.2f},{}\n", ir::name(c.dtype), p.suite, p.m, p.n,
                       p.k, p.at, p.bt, c.last.legal_sets, medians.back(), *std::ranges::min_element(c.evaluate_ms), median(c.enumerate_ms), c.evaluate_ms.size());
  }
  if (!medians.empty()) {
    write_file(o.csv, csv);
    const auto under = std::ranges::count_if(medians, [&](double ms) { return ms < o.aim_ms; });
    fmt::print("\nthe model over the whole legal space (one thread, sm_{}), median per problem over {} problems: "
               "median {:.1f} ms, slowest {:.1f} ms, {} under {:.0f} ms; wrote {}\n",
               o.compute_capability, medians.size(), median(medians), *std::ranges::max_element(medians), under,
               o.aim_ms, o.csv);
  }
  return failures ? exit_failed : exit_ok;
}

}  // namespace isaac::bench
