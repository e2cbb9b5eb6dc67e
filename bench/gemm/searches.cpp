// `searches`: the four ways of choosing parameters (issue 7) on the paper's problems, in one process:
//   brute/<name>      the sweep's winner (random sample + hill climbing, cached in the winners CSV)
//   model/<name>      isaac::choose_gemm, Search::model: the model ranks the whole space, top-k timed
//   annealing/<name>  Search::annealing: analytic pruning, then simulated annealing over the list
//   autotune/<name>   Search::autotune: bucketed keys; problems are taken in the CSV's order, so a
//                     problem whose bucket an earlier one filled is not tuned again
// Each search runs on the GPU with its tuning time (wall clock, compiling included) and the number of
// kernels it timed recorded; then every chosen kernel is checked against the float64 reference and
// timed with Google Benchmark (median, L2 flushed). Writes a CSV with the quality of each search
// (TFLOP/s over the brute-force best's, measured in this run) and its cost.
#include "compile_pool.hpp"
#include "contenders.hpp"
#include "csv.hpp"
#include "google_benchmark.hpp"
#include "modes.hpp"
#include "operands.hpp"
#include "problems.hpp"
#include "winners.hpp"

#include <isaac/gemm.hpp>
#include <isaac/tuning.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

enum Contender { brute, model, annealing, autotune, contenders };
constexpr const char* contender_names[] = {"brute", "model", "annealing", "autotune"};

struct Row {
  Winner winner;
  ir::Gemm gemm;
  std::string name;
  std::array<std::optional<lower::GemmParams>, contenders> params;
  std::array<std::optional<CompiledGemm>, contenders> kernels;
  std::array<std::string, contenders> errors, how;
  std::array<double, contenders> tflops{}, tuning_s{};
  std::array<double, contenders> scratch_ms{};  // the search's own median for its choice (scratch operands)
  std::array<int, contenders> timed{};
  std::unique_ptr<Operands> operands;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int searches_main(const SearchesOptions& o) {
  if (o.repeats < 1 || o.top_k < 1 || o.anneal_budget < 1)
    throw BenchError("--repeats, --top-k and --anneal-budget must be at least 1");
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;
  const auto dtypes = parse_dtypes(o.dtypes);
  TimingSession session(o.split_mode);
  auto& [info, limits, stream, cublas, mode] = session;
  fmt::print("searches on {} (sm_{}, {} SMs), driver {}; model top-{}, annealing budget {}, autotune top-{}\n",
             info.name, info.compute_capability(), info.sm_count, runtime::driver_version(), o.top_k,
             o.anneal_budget, o.top_k);

  std::vector<std::unique_ptr<Row>> rows;
  for (const Winner& w : read_winners(o.winners)) {
    if (std::find(dtypes.begin(), dtypes.end(), w.dtype) == dtypes.end()) continue;
    auto row = std::make_unique<Row>();
    row->winner = w;
    row->gemm = to_gemm(w.problem, w.dtype);
    row->name = problem_name(w.dtype, w.problem);
    row->timed[brute] = w.candidates;
    row->how[brute] = fmt::format("sweep: {} sets timed", w.candidates);
    try {
      row->params[brute] = lower::parse_gemm_params(w.params);
      if (auto legal = lower::check_gemm(row->gemm, *row->params[brute], limits); !legal)
        throw BenchError("the sweep's winner is no longer legal: " + legal.reason);
    } catch (const std::exception& e) {
      row->params[brute].reset();
      row->errors[brute] = one_line(e.what());
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw BenchError(fmt::format("{} has no problem in the dtypes {}", o.winners, o.dtypes));

  // The searches, one after the other over every problem (autotune's buckets fill in the CSV's order).
  for (Contender who : {model, annealing, autotune}) {
    TuningOptions options;
    options.search = who == model ? Search::model : who == annealing ? Search::annealing : Search::autotune;
    options.top_k = o.top_k;
    options.anneal_budget = o.anneal_budget;
    options.mode = mode;
    options.database = false;
    options.f32_tensor_cores = true;  // as in the brute-force space
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Row* row = rows[i].get();
      const auto start = std::chrono::steady_clock::now();
      try {
        const GemmDecision d = choose_gemm(row->gemm, options);
        row->params[who] = d.params;
        row->timed[who] = d.timed;
        row->how[who] = d.how;
        row->scratch_ms[who] = d.measured_ms;
      } catch (const std::exception& e) {
        row->errors[who] = one_line(e.what());
      }
      row->tuning_s[who] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      fmt::print("[{} {}/{}] {}: {:.2f} s, {} timed, chosen at {:.4f} ms: {}\n", contender_names[who], i + 1,
                 rows.size(), row->name, row->tuning_s[who], row->timed[who], row->scratch_ms[who],
                 row->errors[who].empty() ? row->how[who] : row->errors[who]);
    }
  }

  std::vector<ir::Gemm> gemms;
  std::vector<lower::GemmParams> params;
  std::vector<std::pair<Row*, int>> slots;
  for (auto& row : rows)
    for (int who = 0; who < contenders; ++who)
      if (row->params[who]) gemms.push_back(row->gemm), params.push_back(*row->params[who]), slots.push_back({row.get(), who});
  auto compiled = compile_all(gemms, params, mode, 0);
  for (size_t i = 0; i < slots.size(); ++i) {
    auto [row, who] = slots[i];
    if (compiled[i].gemm) row->kernels[who] = std::move(compiled[i].gemm);
    else row->errors[who] = one_line(compiled[i].error);
  }

  for (auto& row : rows) {
    Row* r = row.get();
    for (int who = 0; who < contenders; ++who)
      register_timed(
          fmt::format("{}/{}", contender_names[who], r->name),
          [r, who, &o, &cublas, &stream, mode](benchmark::State& state) {
            r->tflops[who] = bench_contender(state, r->winner.problem.flops(), r->errors[who], [&] {
              if (!r->kernels[who]) throw BenchError(r->errors[who].empty() ? "no kernel" : r->errors[who]);
              if (!r->operands)
                r->operands = std::make_unique<Operands>(r->gemm, hash_name(r->name, 11), cublas, stream);
              return Measured{checked_median_ms(*r->kernels[who], *r->operands, stream, mode, o.repeats),
                              r->kernels[who]->params().str()};
            });
            if (who == contenders - 1) r->operands.reset();  // the row is done: free its device memory
          });
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // What one timed kernel costs a search here (compile + JIT + timing), to put a time on the sweep's count.
  double annealing_s = 0;
  int annealing_timed = 0;
  for (const auto& r : rows) annealing_s += r->tuning_s[annealing], annealing_timed += r->timed[annealing];
  const double per_kernel_s = annealing_timed > 0 ? annealing_s / annealing_timed : 0;
  for (auto& r : rows) r->tuning_s[brute] = r->timed[brute] * per_kernel_s;

  std::string csv = fmt::format(
      "# isaac-bench-gemm searches on {} (sm_{}), driver {}; median of {} runs, L2 flushed (read of twice its size); model top-{}, annealing "
      "budget {}, autotune top-{} over buckets; brute = the sweep's winner ({}), its tuning time estimated as its "
      "kernels x {:.3f} s (annealing's cost per timed kernel in this run)\n",
      info.name, info.compute_capability(), runtime::driver_version(), o.repeats, o.top_k, o.anneal_budget, o.top_k,
      o.winners, per_kernel_s);
  csv += "dtype,suite,m,n,k,at,bt";
  for (const char* c : contender_names) csv += fmt::format(",{}_tflops", c);
  for (int who = 1; who < contenders; ++who) csv += fmt::format(",{}_vs_brute", contender_names[who]);
  for (const char* c : contender_names) csv += fmt::format(",{}_timed,{}_tuning_s,{}_scratch_ms", c, c, c);
  for (const char* c : contender_names) csv += fmt::format(",{}_params", c);
  csv += ",autotune_how,annealing_how,errors\n";

  std::array<std::vector<double>, contenders> quality, tuning, timed;
  std::array<int, contenders> at_95{};
  fmt::print("\n{:<44} {:>8} {:>8} {:>8} {:>8}   {:>6} {:>6} {:>6}\n", "problem (TFLOP/s; kernels timed)", "brute",
             "model", "anneal", "autotune", "model", "anneal", "auto");
  for (const auto& r : rows) {
    std::string errors;
    for (int who = 0; who < contenders; ++who)
      if (!r->errors[who].empty())
        errors += fmt::format("{}{}: {}", errors.empty() ? "" : "; ", contender_names[who], r->errors[who]);
    const Problem& p = r->winner.problem;
    csv += fmt::format("{},{},{},{},{},{},{}", ir::name(r->gemm.dtype), p.suite, p.m, p.n, p.k, int(p.at), int(p.bt));
    for (int who = 0; who < contenders; ++who) csv += fmt::format(",{}", figure_cell(r->tflops[who]));
    for (int who = 1; who < contenders; ++who) {
      const double q = ratio(r->tflops[who], r->tflops[brute]);
      csv += fmt::format(",{}", figure_cell(q));
      if (q > 0) quality[who].push_back(q), at_95[who] += q >= 0.95;
    }
    for (int who = 0; who < contenders; ++who) {
      csv += fmt::format(",{},{:.2f},{}", r->timed[who], r->tuning_s[who],
                         r->scratch_ms[who] > 0 ? fmt::format("{:.5f}", r->scratch_ms[who]) : "");
      tuning[who].push_back(r->tuning_s[who]);
      timed[who].push_back(r->timed[who]);
    }
    for (int who = 0; who < contenders; ++who) csv += fmt::format(",\"{}\"", r->params[who] ? r->params[who]->str() : "");
    csv += fmt::format(",\"{}\",\"{}\",\"{}\"\n", r->how[autotune], r->how[annealing], errors);
    fmt::print("{:<44} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f}   {:>6} {:>6} {:>6}{}\n", r->name, r->tflops[brute],
               r->tflops[model], r->tflops[annealing], r->tflops[autotune], r->timed[model], r->timed[annealing],
               r->timed[autotune], errors.empty() ? "" : "  " + errors);
  }
  fmt::print("\n{:<10} {:>22} {:>12} {:>16} {:>16} {:>14}\n", "search", "geomean vs brute force", ">= 95% rows",
             "tuning s (total)", "kernels timed", "median s/row");
  for (int who = 0; who < contenders; ++who) {
    double total_s = 0, total_timed = 0;
    for (double t : tuning[who]) total_s += t;
    for (double t : timed[who]) total_timed += t;
    fmt::print("{:<10} {:>22} {:>12} {:>16.1f} {:>16.0f} {:>14.2f}{}\n", contender_names[who],
               who == brute ? "1 (reference)" : fmt::format("{:.3f}", geometric_mean(quality[who])),
               who == brute ? "" : fmt::format("{}/{}", at_95[who], quality[who].size()), total_s, total_timed,
               median(tuning[who]), who == brute ? "  (estimated)" : "");
  }
  write_file(o.csv, csv);
  fmt::print("wrote {}\n", o.csv);
  return exit_ok;
}

}  // namespace isaac::bench
