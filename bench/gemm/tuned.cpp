// `tuned`: the tuner (issue 6) against the brute-force sweep and cuBLAS, in one process. For each
// problem x dtype of the winners CSV, on the same operands, four adjacent benchmarks:
//   brute/<name>   the sweep's winner (the brute-force best)
//   top1/<name>    the model's first choice over the whole legal space (nothing timed to choose it)
//   topk/<name>    the fastest of the model's k best, re-benchmarked (isaac::choose_gemm)
//   cublas/<name>  the best of cublasGemmEx and cuBLASLt's heuristic list
// Each isaac kernel is checked against the float64 reference before it is timed. Writes a CSV with the
// ratios to the brute-force best and to cuBLAS, and prints the criteria (top-1 >= 85%, top-k
// >= 95% of the brute-force best). With --candidates-csv, every candidate the re-benchmark timed is
// also timed as the contenders are (candidate/<name>/<rank>; ../candidates.hpp).
#include "../candidates.hpp"
#include "compile_pool.hpp"
#include "contenders.hpp"
#include "cublas.hpp"
#include "google_benchmark.hpp"
#include "modes.hpp"
#include "operands.hpp"
#include "problems.hpp"
#include "csv.hpp"
#include "winners.hpp"

#include <isaac/gemm.hpp>
#include <isaac/runtime/timer.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

enum Contender { brute, top1, topk, cublas, contenders };
constexpr const char* contender_names[] = {"brute", "top1", "topk", "cublas"};

struct Row {
  Winner winner;
  ir::Gemm gemm;
  std::string name;
  std::array<std::optional<lower::GemmParams>, 3> params;  // brute, top1, topk
  std::array<std::optional<CompiledGemm>, 3> kernels;
  std::array<std::string, contenders> errors;
  std::array<double, contenders> tflops{};
  TunerChoices tuner;
  std::unique_ptr<Operands> operands;
  std::vector<std::optional<CompiledGemm>> candidate_kernels;  // with --candidates-csv
  std::vector<TimedCandidate> candidates;
};

using Shared = ModeContext<TunedOptions>;

// Times a kernel (checked against the reference first) and returns its TFLOP/s; 0 with `error` set
// when it failed.
double bench_kernel(benchmark::State& state, Row& row, const std::optional<CompiledGemm>& kernel, std::string& error,
                    Shared& s) {
  return bench_contender(state, row.winner.problem.flops(), error, [&] {
    if (!kernel) throw BenchError(error.empty() ? "no kernel" : error);
    return Measured{checked_median_ms(*kernel, operands_of(row, s), s.stream, s.mode, s.options.repeats),
                    kernel->params().str()};
  });
}

void bench_cublas(benchmark::State& state, Row& row, Shared& s) {
  row.tflops[cublas] = bench_contender(state, row.winner.problem.flops(), row.errors[cublas], [&] {
    Operands& ops = operands_of(row, s);
    auto best = s.cublas.best(row.gemm, ops.c(), ops.a(), ops.b(), s.stream,
                              {.warmup = 2, .repeats = s.options.repeats, .flush_l2 = true}, s.options.lt_algorithms);
    return Measured{best.median_ms, best.which};
  });
  row.operands.reset();  // the row is done: free its device memory
}

}  // namespace

int tuned_main(const TunedOptions& o) {
  if (o.repeats < 1 || o.top_k < 1) throw BenchError("--repeats and --top-k must be at least 1");
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;
  const auto dtypes = parse_dtypes(o.dtypes);
  TimingSession session(o.split_mode);
  auto& [info, limits, stream, cublas_handle, mode] = session;
  fmt::print("tuned on {} (sm_{}, {} SMs), driver {}, {}; top-k = {}\n", info.name, info.compute_capability(),
             info.sm_count, runtime::driver_version(), cublas_handle.version(), o.top_k);

  std::vector<std::unique_ptr<Row>> rows;
  for (const Winner& w : read_winners(o.winners)) {
    if (std::find(dtypes.begin(), dtypes.end(), w.dtype) == dtypes.end()) continue;
    auto row = std::make_unique<Row>();
    row->winner = w;
    row->gemm = to_gemm(w.problem, w.dtype);
    row->name = problem_name(w.dtype, w.problem);
    try {
      row->params[brute] = lower::parse_gemm_params(w.params);
      if (auto legal = lower::check_gemm(row->gemm, *row->params[brute], limits); !legal)
        throw BenchError("the sweep's winner is no longer legal: " + legal.reason);
    } catch (const std::exception& e) {
      row->params[brute].reset();
      row->errors[brute] = one_line(e.what());
    }
    row->tuner = tuner_choices(row->gemm, info, limits, o.top_k, mode);
    row->params[top1] = row->tuner.top1;
    row->params[topk] = row->tuner.topk;
    row->errors[top1] = row->tuner.top1_error;
    row->errors[topk] = row->tuner.topk_error;
    if (row->tuner.topk && !o.candidates_csv.empty()) row->candidates = candidates_of(row->tuner.decision.candidates);
    fmt::print("{}: {}\n", row->name, row->tuner.summary());
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw BenchError(fmt::format("{} has no problem in the dtypes {}", o.winners, o.dtypes));

  // Every kernel compiled on all cores before anything is timed.
  std::vector<ir::Gemm> gemms;
  std::vector<lower::GemmParams> params;
  struct Slot {
    Row* row;
    int who;        // a contender, or -1 for a candidate
    int candidate;  // its index in row->candidates
  };
  std::vector<Slot> slots;
  for (auto& row : rows) {
    for (int who : {brute, top1, topk})
      if (row->params[who])
        gemms.push_back(row->gemm), params.push_back(*row->params[who]), slots.push_back({row.get(), who, -1});
    row->candidate_kernels.resize(row->candidates.size());
    for (size_t i = 0; i < row->candidates.size(); ++i)
      gemms.push_back(row->gemm), params.push_back(lower::parse_gemm_params(row->candidates[i].params)),
          slots.push_back({row.get(), -1, int(i)});
  }
  auto compiled = compile_all(gemms, params, mode, 0);
  for (size_t i = 0; i < slots.size(); ++i) {
    auto [row, who, candidate] = slots[i];
    if (who < 0) {
      if (compiled[i].gemm) row->candidate_kernels[candidate] = std::move(compiled[i].gemm);
      else row->candidates[candidate].error = one_line(compiled[i].error);
    } else if (compiled[i].gemm) {
      row->kernels[who] = std::move(compiled[i].gemm);
    } else {
      row->errors[who] = one_line(compiled[i].error);
    }
  }

  Shared shared{o, cublas_handle, stream, mode};
  for (auto& row : rows) {
    Row* r = row.get();
    for (int who : {brute, top1, topk})
      register_timed(fmt::format("{}/{}", contender_names[who], r->name), [r, who, &shared](benchmark::State& st) {
        r->tflops[who] = bench_kernel(st, *r, r->kernels[who], r->errors[who], shared);
      });
    for (size_t i = 0; i < r->candidates.size(); ++i)
      register_timed(fmt::format("candidate/{}/{}", r->name, r->candidates[i].rank),
                     [r, i, &shared](benchmark::State& st) {
                       TimedCandidate& c = r->candidates[i];
                       c.tflops = bench_kernel(st, *r, r->candidate_kernels[i], c.error, shared);
                     });
    register_timed(fmt::format("cublas/{}", r->name),
                   [r, &shared](benchmark::State& st) { bench_cublas(st, *r, shared); });
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::string csv = fmt::format(
      "# isaac-bench-gemm tuned on {} (sm_{}), driver {}, {}; median of {} runs, L2 flushed (read of twice its size); top-k = {}; brute = the "
      "sweep's winner ({}); ratios of TFLOP/s measured in this run\n",
      info.name, info.compute_capability(), runtime::driver_version(), cublas_handle.version(), o.repeats, o.top_k,
      o.winners);
  csv += "dtype,suite,m,n,k,at,bt,brute_tflops,top1_tflops,topk_tflops,cublas_tflops,top1_vs_brute,topk_vs_brute,"
         "topk_vs_cublas,topk_rank,legal_sets,enumerate_ms,evaluate_ms,tuning_s,model,brute_params,top1_params,"
         "topk_params,errors\n";
  std::map<ir::DType, std::vector<double>> vs_cublas;
  int rows_ok = 0, top1_ok = 0, topk_ok = 0;
  fmt::print("\n{:<44} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "problem", "brute", "top1", "top-k", "cuBLAS",
             "top1/bf", "top-k/bf");
  for (const auto& r : rows) {
    std::string errors;
    for (int who = 0; who < contenders; ++who)
      if (!r->errors[who].empty()) errors += fmt::format("{}{}: {}", errors.empty() ? "" : "; ", contender_names[who], r->errors[who]);
    const double r1 = ratio(r->tflops[top1], r->tflops[brute]), rk = ratio(r->tflops[topk], r->tflops[brute]);
    const double rc = ratio(r->tflops[topk], r->tflops[cublas]);
    if (r1 > 0 && rk > 0) {
      ++rows_ok;
      top1_ok += r1 >= 0.85;
      topk_ok += rk >= 0.95;
    }
    if (rc > 0) vs_cublas[r->gemm.dtype].push_back(rc);
    const Problem& p = r->winner.problem;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.1f},{:.1f},{:.2f},\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"\n",
                       ir::name(r->gemm.dtype), p.suite, p.m, p.n, p.k, int(p.at), int(p.bt), figure_cell(r->tflops[brute]),
                       figure_cell(r->tflops[top1]), figure_cell(r->tflops[topk]), figure_cell(r->tflops[cublas]),
                       figure_cell(r1), figure_cell(rk), figure_cell(rc),
                       r->params[topk] ? std::to_string(r->tuner.decision.rank) : "", r->tuner.decision.search.legal_sets,
                       r->tuner.decision.search.enumerate_ms, r->tuner.decision.search.evaluate_ms,
                       r->tuner.tuning_seconds, r->tuner.model_source, r->params[brute] ? r->params[brute]->str() : "",
                       r->params[top1] ? r->params[top1]->str() : "", r->params[topk] ? r->params[topk]->str() : "",
                       errors);
    fmt::print("{:<44} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.3f} {:>8.3f}{}\n", r->name, r->tflops[brute],
               r->tflops[top1], r->tflops[topk], r->tflops[cublas], r1, rk, errors.empty() ? "" : "  " + errors);
  }
  fmt::print("\ntop-1 >= 85% of the brute-force best: {}/{} rows; top-{} >= 95%: {}/{} rows\n", top1_ok, rows_ok,
             o.top_k, topk_ok, rows_ok);
  for (const auto& [d, v] : vs_cublas)
    fmt::print("tuned isaac / cuBLAS, {}: geometric mean {:.3f} over {} rows\n", ir::name(d), geometric_mean(v),
               v.size());
  write_file(o.csv, csv);
  fmt::print("wrote {}\n", o.csv);
  if (!o.candidates_csv.empty()) {
    std::vector<CandidatesOfRow> listed;
    for (const auto& r : rows) {
      const Problem& p = r->winner.problem;
      listed.push_back({fmt::format("{},{},{},{},{},{},{}", ir::name(r->gemm.dtype), p.suite, p.m, p.n, p.k, int(p.at),
                                    int(p.bt)),
                        r->name, r->tflops[brute], r->params[topk] ? r->params[topk]->str() : "", r->candidates});
    }
    write_candidates(o.candidates_csv,
                     fmt::format("isaac-bench-gemm tuned --candidates-csv on {} (sm_{}): each candidate of the top-{} "
                                 "re-benchmark, timed again as the contenders (median of {} runs, L2 flushed)",
                                 info.name, info.compute_capability(), o.top_k, o.repeats),
                     "dtype,suite,m,n,k,at,bt", listed);
  }
  return rows_ok == int(rows.size()) ? exit_ok : exit_failed;
}

}  // namespace isaac::bench
