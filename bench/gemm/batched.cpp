// `batched`: the tuner on batched GEMMs (C[b] = op(A[b]) op(B[b]) for every b of the batch, one grid
// dimension over it) against cuBLAS's batched GEMM, in one process. For each problem x dtype of
// bench/problems/gemm_batched_problems.csv, on the same operands (the whole batch), three adjacent
// benchmarks:
//   top1/<name>    the model's first choice over the whole legal space (nothing timed to choose it)
//   topk/<name>    the fastest of the model's k best, re-benchmarked (isaac::choose_gemm)
//   cublas/<name>  the best of cublasGemmStridedBatchedEx and cuBLASLt's heuristic list (strided batch)
// Each isaac kernel is checked against the float64 reference of every matrix of the batch before it is
// timed. Writes a CSV (a failure as its reason, never as a figure) and prints per dtype the geometric
// means of top-k / cuBLAS and top-1 / top-k.
#include "compile_pool.hpp"
#include "contenders.hpp"
#include "csv.hpp"
#include "cublas.hpp"
#include "google_benchmark.hpp"
#include "modes.hpp"
#include "operands.hpp"
#include "problems.hpp"

#include <isaac/gemm.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

enum Contender { top1, topk, cublas, contenders };
constexpr const char* contender_names[] = {"top1", "topk", "cublas"};

struct Row {
  ir::DType dtype = ir::DType::f32;
  Problem problem;
  ir::Gemm gemm;
  std::string name;
  TunerChoices tuner;
  std::array<std::optional<CompiledGemm>, 2> kernels;  // top1, topk
  std::array<std::string, contenders> errors;
  std::array<double, contenders> tflops{};
  std::string cublas_which;
  std::unique_ptr<Operands> operands;

  const std::optional<lower::GemmParams>& params(Contender who) const { return who == top1 ? tuner.top1 : tuner.topk; }
};

using Shared = ModeContext<BatchedOptions>;

void bench_kernel(benchmark::State& state, Row& row, Contender who, Shared& s) {
  row.tflops[who] = bench_contender(state, row.problem.flops(), row.errors[who], [&] {
    const auto& kernel = row.kernels[who];
    if (!kernel) throw BenchError(row.errors[who].empty() ? "no kernel" : row.errors[who]);
    return Measured{checked_median_ms(*kernel, operands_of(row, s), s.stream, s.mode, s.options.repeats),
                    kernel->params().str()};
  });
}

void bench_cublas(benchmark::State& state, Row& row, Shared& s) {
  row.tflops[cublas] = bench_contender(state, row.problem.flops(), row.errors[cublas], [&] {
    Operands& ops = operands_of(row, s);
    auto best = s.cublas.best(row.gemm, ops.c(), ops.a(), ops.b(), s.stream,
                              {.warmup = 2, .repeats = s.options.repeats, .flush_l2 = true}, s.options.lt_algorithms);
    row.cublas_which = best.which;
    return Measured{best.median_ms, best.which};
  });
  row.operands.reset();  // the row is done: free its device memory
}

// Why each contender of the row has no figure ("top1: ...; cublas: ..."); empty when all have one.
std::string failures_of(const Row& r) {
  std::string out;
  for (int who = 0; who < contenders; ++who) {
    if (r.tflops[who] > 0) continue;
    const std::string why = r.errors[who].empty() ? "not run (left out by --benchmark_filter?)" : r.errors[who];
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", contender_names[who], why);
  }
  return out;
}

}  // namespace

int batched_main(const BatchedOptions& o) {
  if (o.repeats < 1 || o.top_k < 1) throw BenchError("--repeats and --top-k must be at least 1");
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;
  const auto dtypes = parse_dtypes(o.dtypes);
  const auto problems = load_problems(o.problems, CompiledInProblems::batched);
  TimingSession session(o.split_mode);
  auto& [info, limits, stream, cublas_handle, mode] = session;
  fmt::print("batched on {} (sm_{}, {} SMs), driver {}, {}; top-k = {}\n", info.name, info.compute_capability(),
             info.sm_count, runtime::driver_version(), cublas_handle.version(), o.top_k);

  std::vector<std::unique_ptr<Row>> rows;
  for (ir::DType dtype : dtypes)
    for (const Problem& p : problems) {
      auto row = std::make_unique<Row>();
      row->dtype = dtype;
      row->problem = p;
      row->gemm = to_gemm(p, dtype);
      row->name = problem_name(dtype, p);
      row->tuner = tuner_choices(row->gemm, info, limits, o.top_k, mode);
      row->errors[top1] = row->tuner.top1_error;
      row->errors[topk] = row->tuner.topk_error;
      fmt::print("{}: {}\n", row->name, row->tuner.summary());
      rows.push_back(std::move(row));
    }

  // Every kernel compiled on all cores before anything is timed.
  std::vector<ir::Gemm> gemms;
  std::vector<lower::GemmParams> params;
  std::vector<std::pair<Row*, Contender>> slots;
  for (auto& row : rows)
    for (Contender who : {top1, topk})
      if (const auto& p = row->params(who))
        gemms.push_back(row->gemm), params.push_back(*p), slots.emplace_back(row.get(), who);
  auto compiled = compile_all(gemms, params, mode, 0);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    auto [row, who] = slots[i];
    if (compiled[i].gemm) row->kernels[who] = std::move(compiled[i].gemm);
    else row->errors[who] = one_line(compiled[i].error);
  }

  Shared shared{o, cublas_handle, stream, mode};
  for (auto& row : rows) {
    Row* r = row.get();
    for (Contender who : {top1, topk})
      register_timed(fmt::format("{}/{}", contender_names[who], r->name),
                     [r, who, &shared](benchmark::State& st) { bench_kernel(st, *r, who, shared); });
    register_timed(fmt::format("cublas/{}", r->name),
                   [r, &shared](benchmark::State& st) { bench_cublas(st, *r, shared); });
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::string csv = fmt::format(
      "# isaac-bench-gemm batched on {} (sm_{}), driver {}, {}; median of {} runs, L2 flushed (read of twice its "
      "size); top-k = {}; cuBLAS f32 without TF32, isaac f32 allowed the tensor cores (3xTF32) as in `tuned`\n",
      info.name, info.compute_capability(), runtime::driver_version(), cublas_handle.version(), o.repeats, o.top_k);
  csv += "dtype,suite,batch,m,n,k,at,bt,top1_tflops,topk_tflops,cublas_tflops,top1_params,topk_params,cublas_which,"
         "error\n";
  std::map<ir::DType, std::vector<double>> topk_vs_cublas, top1_vs_topk;
  int complete = 0;
  fmt::print("\n{:<44} {:>8} {:>8} {:>8} {:>10} {:>12}\n", "problem", "top1", "top-k", "cuBLAS", "top1/topk",
             "topk/cuBLAS");
  for (const auto& r : rows) {
    const std::string failures = failures_of(*r);
    complete += failures.empty();
    const double r1k = ratio(r->tflops[top1], r->tflops[topk]), rkc = ratio(r->tflops[topk], r->tflops[cublas]);
    if (r1k > 0) top1_vs_topk[r->dtype].push_back(r1k);
    if (rkc > 0) topk_vs_cublas[r->dtype].push_back(rkc);
    const Problem& p = r->problem;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", ir::name(r->dtype), csv_field(p.suite), p.batch,
                       p.m, p.n, p.k, int(p.at), int(p.bt), figure_cell(r->tflops[top1]), figure_cell(r->tflops[topk]),
                       figure_cell(r->tflops[cublas]), csv_field(r->tuner.top1 ? r->tuner.top1->str() : ""),
                       csv_field(r->tuner.topk ? r->tuner.topk->str() : ""), csv_field(r->cublas_which),
                       csv_field(failures));
    fmt::print("{:<44} {:>8.2f} {:>8.2f} {:>8.2f} {:>10.3f} {:>12.3f}{}\n", r->name, r->tflops[top1], r->tflops[topk],
               r->tflops[cublas], r1k, rkc, failures.empty() ? "" : "  " + failures);
  }
  fmt::print("\n");
  for (ir::DType d : dtypes)
    fmt::print("{}: top-k / cuBLAS geometric mean {:.3f} over {} rows; top-1 / top-k {:.3f} over {} rows\n",
               ir::name(d), geometric_mean(topk_vs_cublas[d]), topk_vs_cublas[d].size(),
               geometric_mean(top1_vs_topk[d]), top1_vs_topk[d].size());
  write_file(o.csv, csv);
  fmt::print("wrote {} ({} of {} rows with all three figures)\n", o.csv, complete, rows.size());
  return complete == int(rows.size()) ? exit_ok : exit_failed;
}

}  // namespace isaac::bench
