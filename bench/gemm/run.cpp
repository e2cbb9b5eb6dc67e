// `run` (the default): isaac's sweep winners against cuBLAS in one process, with Google Benchmark.
// For each problem x dtype of the winners CSV two adjacent benchmarks, on the same operands:
//   isaac/<dtype>/<suite>/<m>x<n>x<k>/<layout>    the winner's kernel, checked against the float64
//                                                  reference first (a wrong result fails the row)
//   cublas/<dtype>/<suite>/<m>x<n>x<k>/<layout>   the best of cublasGemmEx and cuBLASLt's heuristic list
// Each benchmark runs once (Iterations(1)) and reports as its manual time the median of --repeats timed
// runs (CUDA events, L2 flushed before each), with the counter TFLOP/s. Before them, the two ceilings
// are measured in the same process (ceilings.hpp). A third benchmark per row,
//   floor/<dtype>/<suite>/<m>x<n>x<k>/<layout>    one kernel that reads A and B and writes C once
// times the row's memory floor (memory_floor.hpp). Then the CSVs and the table of report.hpp.
#include "ceilings.hpp"
#include "compile_pool.hpp"
#include "csv.hpp"
#include "cublas.hpp"
#include "google_benchmark.hpp"
#include "memory_floor.hpp"
#include "modes.hpp"
#include "operands.hpp"
#include "problems.hpp"
#include "report.hpp"
#include "winners.hpp"

#include <isaac/gemm.hpp>
#include <isaac/runtime/timer.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

struct Row {
  Winner winner;
  ir::Gemm gemm;
  std::optional<CompiledGemm> kernel;
  std::string compile_error;
  std::unique_ptr<Operands> operands;
  ReportRow report;
};

struct Shared {
  const RunOptions& options;
  Cublas& cublas;
  runtime::Stream& stream;
  const MemoryFloor* floor;  // null where it could not be loaded
};

Operands& operands_of(Row& row, Shared& s) {
  if (!row.operands)
    row.operands = std::make_unique<Operands>(
        row.gemm, hash_name(problem_name(row.winner.dtype, row.winner.problem), 11), s.cublas, s.stream);
  return *row.operands;
}

void bench_isaac(benchmark::State& state, Row& row, Shared& s) {
  double ms = 0, rel_error = -1;
  try {
    if (!row.kernel) throw BenchError("did not compile: " + row.compile_error);
    Operands& ops = operands_of(row, s);
    lower::GemmParams p = row.kernel->params();
    auto enqueue = [&](const runtime::Stream& st) {
      row.kernel->run(row.gemm, ops.c(), ops.a(), ops.b(), 1.0, 0.0, st);
    };
    ops.poison_c(s.stream);
    enqueue(s.stream);
    auto check = ops.check_c(
        tolerance_for(row.gemm.dtype, row.gemm.k, p.acc32 != 0,
                      output_roundings(p.kg, parse_split_mode(s.options.split_mode) == lower::SplitMode::atomic)),
        s.stream);
    rel_error = check.rel_error;
    row.report.rel_error = rel_error;
    if (!check.ok) throw BenchError("wrong result: " + check.str());
    ms = runtime::time_on_stream(enqueue, s.stream, {.warmup = 2, .repeats = s.options.repeats, .flush_l2 = true})
             .median_ms;
  } catch (const std::exception& e) {
    row.report.isaac_error = one_line(e.what());
    state.SkipWithError(row.report.isaac_error.c_str());
    return;
  }
  for ([[maybe_unused]] auto _ : state) state.SetIterationTime(ms * 1e-3);
  row.report.isaac_tflops = row.winner.problem.flops() / (ms * 1e-3) / 1e12;
  row.report.isaac_error.clear();
  state.counters["TFLOP/s"] = row.report.isaac_tflops;
  state.counters["roofline"] = row.report.roofline_tflops;
  state.counters["rel_err"] = rel_error;
  state.SetLabel(row.winner.params);
}

void bench_cublas(benchmark::State& state, Row& row, Shared& s) {
  double ms = 0;
  try {
    Operands& ops = operands_of(row, s);
    // cuBLAS's own result against the same reference and tolerance: a check of the harness itself.
    ops.poison_c(s.stream);
    s.cublas.gemm_ex(row.gemm, ops.c(), ops.a(), ops.b(), s.stream);
    auto check = ops.check_c(tolerance_for(row.gemm.dtype, row.gemm.k, true), s.stream);
    row.report.cublas_rel_error = check.rel_error;
    if (!check.ok)
      row.report.cublas_warning =
          "cublasGemmEx's own result fails the check (" + check.str() + "): the reference or the tolerance is suspect";
    auto best = s.cublas.best(row.gemm, ops.c(), ops.a(), ops.b(), s.stream,
                              {.warmup = 2, .repeats = s.options.repeats, .flush_l2 = true}, s.options.lt_algorithms);
    ms = best.median_ms;
    row.report.cublas_which = best.which;
  } catch (const std::exception& e) {
    row.report.cublas_error = one_line(e.what());
    state.SkipWithError(row.report.cublas_error.c_str());
    row.operands.reset();
    return;
  }
  row.operands.reset();  // the pair is done: free the device memory
  for ([[maybe_unused]] auto _ : state) state.SetIterationTime(ms * 1e-3);
  row.report.cublas_tflops = row.winner.problem.flops() / (ms * 1e-3) / 1e12;
  row.report.cublas_error.clear();
  state.counters["TFLOP/s"] = row.report.cublas_tflops;
  state.counters["roofline"] = row.report.roofline_tflops;
  state.counters["rel_err"] = row.report.cublas_rel_error;
  state.SetLabel(row.report.cublas_which);
}

void bench_floor(benchmark::State& state, Row& row, Shared& s) {
  const Problem& p = row.winner.problem;
  const double element = double(ir::size_of(row.winner.dtype));
  double ms = 0;
  try {
    if (!s.floor) throw BenchError("the memory floor's kernel did not load (see above)");
    ms = s.floor->median_ms(std::size_t(element * double(p.m * p.k + p.k * p.n)), std::size_t(element * double(p.m * p.n)),
                            s.stream, s.options.repeats);
  } catch (const std::exception& e) {
    state.SkipWithError(one_line(e.what()).c_str());
    return;
  }
  for ([[maybe_unused]] auto _ : state) state.SetIterationTime(ms * 1e-3);
  row.report.floor_tflops = p.flops() / (ms * 1e-3) / 1e12;
  state.counters["TFLOP/s"] = row.report.floor_tflops;
  state.counters["roofline"] = row.report.roofline_tflops;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

int run_main(const RunOptions& o) {
  if (o.repeats < 1) throw BenchError("--repeats must be at least 1");
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;
  auto dtypes = parse_dtypes(o.dtypes);
  std::vector<Winner> winners;
  for (auto& w : read_winners(o.winners))
    if (std::find(dtypes.begin(), dtypes.end(), w.dtype) != dtypes.end()) winners.push_back(std::move(w));
  if (winners.empty())
    throw BenchError(fmt::format("{} has no winner for the dtypes {}: run the sweep first", o.winners, o.dtypes));

  runtime::use_device(0);
  runtime::DeviceInfo info = runtime::device_info(0);
  lower::DeviceLimits limits = device_limits(info);
  runtime::Stream stream;
  Cublas cublas;
  lower::SplitMode mode = parse_split_mode(o.split_mode);
  fmt::print("run on {} (sm_{}, {} SMs), driver {}, {}: {} problems from {}\n", info.name, info.compute_capability(),
             info.sm_count, runtime::driver_version(), cublas.version(), winners.size(), o.winners);

  // Every winner's kernel, compiled on all cores before anything is timed. A winner that is no longer
  // legal (the legality rules changed since the sweep) or unreadable is skipped, with a message: its row
  // is left out of the benchmarks and of the CSV, and the run goes on (rerun the sweep for it).
  std::vector<std::unique_ptr<Row>> rows;
  std::vector<ir::Gemm> gemms;
  std::vector<lower::GemmParams> params;
  std::vector<std::string> skipped;
  for (const auto& w : winners) {
    auto row = std::make_unique<Row>();
    row->winner = w;
    row->gemm = to_gemm(w.problem, w.dtype);
    row->report.dtype = w.dtype;
    row->report.problem = w.problem;
    row->report.params = w.params;
    std::string name = problem_name(w.dtype, w.problem);
    lower::GemmParams p;
    try {
      p = lower::parse_gemm_params(w.params);
    } catch (const std::exception& e) {
      skipped.push_back(fmt::format("{}: unreadable parameters '{}': {}", name, w.params, one_line(e.what())));
      fmt::print("SKIPPED {}\n", skipped.back());
      continue;
    }
    if (auto legal = lower::check_gemm(row->gemm, p, limits); !legal) {
      skipped.push_back(fmt::format("{}: the winner {} is no longer legal: {}", name, w.params, legal.reason));
      fmt::print("SKIPPED {} (rerun the sweep for it, e.g. sweep --merge --only {})\n", skipped.back(), name);
      continue;
    }
    params.push_back(p);
    gemms.push_back(row->gemm);
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw BenchError(fmt::format("{}: none of its {} winners can run (all skipped above)", o.winners, winners.size()));
  auto t0 = std::chrono::steady_clock::now();
  auto compiled = compile_all(gemms, params, mode, 0);
  int compile_failures = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (compiled[i].gemm) {
      rows[i]->kernel = std::move(compiled[i].gemm);
    } else {
      rows[i]->compile_error = compiled[i].error;
      ++compile_failures;
    }
  }
  fmt::print("compiled {} kernels in {:.1f} s ({} failed)\n", rows.size(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), compile_failures);

  // The ceilings, measured here and now.
  // A ceiling that cannot be measured leaves the rooflines it sets empty; the benchmarks still run.
  Ceilings ceilings;
  int ceiling_failures = 0;
  try {
    ceilings.bandwidth_tbs = measure_bandwidth_tbs(stream);
    fmt::print("bandwidth: {:.3f} TB/s (device-to-device copy of 1 GiB, read + write)\n", ceilings.bandwidth_tbs);
  } catch (const std::exception& e) {
    ++ceiling_failures;
    fmt::print("bandwidth: FAILED: {}\n", e.what());
  }
  for (ir::DType d : dtypes) {
    bool used = std::any_of(winners.begin(), winners.end(), [&](const Winner& w) { return w.dtype == d; });
    if (!used) continue;
    try {
      std::string how;
      double peak = measure_peak_tflops(cublas, d, stream, &how, o.peak_size);
      ceilings.peak_tflops[d] = peak;
      ceilings.peak_how[d] = how;
      fmt::print("peak {}: {:.1f} TFLOP/s (cuBLAS {}^3 NN, {})\n", ir::name(d), peak, o.peak_size, how);
    } catch (const std::exception& e) {
      ++ceiling_failures;
      fmt::print("peak {}: FAILED: {}\n", ir::name(d), e.what());
    }
  }
  std::fflush(stdout);
  for (auto& row : rows) {
    double bytes = minimal_bytes(row->winner.problem, row->winner.dtype);
    double flops = row->winner.problem.flops();
    row->report.roofline_tflops = ceilings.roofline_tflops(row->winner.dtype, flops, bytes);
    row->report.bandwidth_bound = ceilings.bandwidth_bound(row->winner.dtype, flops, bytes);
  }

  std::optional<MemoryFloor> floor;
  try {
    floor.emplace(info.sm_count);
  } catch (const std::exception& e) {
    ++ceiling_failures;
    fmt::print("memory floor: FAILED: {}\n", e.what());
  }
  Shared shared{o, cublas, stream, floor ? &*floor : nullptr};
  for (auto& row : rows) {
    std::string name = problem_name(row->winner.dtype, row->winner.problem);
    Row* r = row.get();
    register_timed("isaac/" + name, [r, &shared](benchmark::State& st) { bench_isaac(st, *r, shared); });
    register_timed("cublas/" + name, [r, &shared](benchmark::State& st) { bench_cublas(st, *r, shared); });
    register_timed("floor/" + name, [r, &shared](benchmark::State& st) { bench_floor(st, *r, shared); });
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::string comment = fmt::format(
      "isaac-bench-gemm run on {} (sm_{}, {} SMs), driver {}, {}, {}; ceilings measured in this run: bandwidth {:.3f} "
      "TB/s (device-to-device copy, read + write)",
      info.name, info.compute_capability(), info.sm_count, runtime::driver_version(), cublas.version(), utc_now(),
      ceilings.bandwidth_tbs);
  for (auto [d, v] : ceilings.peak_tflops)
    comment +=
        fmt::format(", peak {} {:.1f} TFLOP/s (cuBLAS {}^3, {})", ir::name(d), v, o.peak_size, ceilings.peak_how[d]);
  comment += fmt::format(
      "; median of {} runs each, L2 flushed (read of twice its size), alpha 1 beta 0, split mode {}; cuBLAS = best of "
      "cublasGemmEx and {} cuBLASLt heuristic algorithms, f32 without TF32",
      o.repeats, o.split_mode, o.lt_algorithms);
  if (!skipped.empty())
    comment += fmt::format("; {} winners of {} skipped (no longer legal or unreadable)", skipped.size(), o.winners);
  std::vector<ReportRow> report;
  for (const auto& row : rows) report.push_back(row->report);
  write_file(o.csv, format_report_csv(comment, report));
  write_file(o.floor_csv,
             format_floor_csv(comment + "; floor = one kernel reading A and B and writing C once (the fastest of 2, 4 "
                                        "and 8 blocks of 256 threads per SM), timed like the GEMMs",
                              report));
  int missing = print_report(report, ceilings);
  fmt::print("wrote {} and {}\n", o.csv, o.floor_csv);
  if (!skipped.empty()) {
    fmt::print("{} winners skipped (left out of the CSV; not counted as failures):\n", skipped.size());
    for (const auto& s : skipped) fmt::print("  {}\n", s);
  }
  if (missing || ceiling_failures) {
    fmt::print("{} rows lack a figure, {} ceilings could not be measured (see the errors above)\n", missing,
               ceiling_failures);
    return exit_failed;
  }
  return exit_ok;
}

}  // namespace isaac::bench
