// `sets`: parameter sets a researcher names, on one GEMM (batched or not), against cuBLAS in the same
// process. Each set is checked for legality (an illegal one gets its reason, not a figure), compiled,
// checked against the float64 reference of every matrix of the batch, then timed:
//   set<i>/<problem>   the i-th --params set (as given: no pipeline depth or load layout is fitted)
//   cublas/<problem>   the best of cublasGemmEx (strided batched for a batch) and cuBLASLt's heuristic list
// Writes a CSV with each set's TFLOP/s, its ratio to cuBLAS and the resources that bound how many of its
// blocks an SM holds (registers as the driver compiled it, shared memory, threads).
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

#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

struct Contestant {
  lower::GemmParams params;
  std::string text;  // as given
  std::optional<CompiledGemm> kernel;
  std::string error;
  double tflops = 0;
};

}  // namespace

int sets_main(const SetsOptions& o) {
  if (o.repeats < 1) throw BenchError("--repeats must be at least 1");
  if (o.params.empty()) throw BenchError("name at least one parameter set with --params");
  if (o.layout.size() != 2 || (o.layout[0] != 'N' && o.layout[0] != 'T') || (o.layout[1] != 'N' && o.layout[1] != 'T'))
    throw BenchError(fmt::format("--layout {}: use NN, NT, TN or TT", o.layout));
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;
  Problem problem;
  problem.suite = "sets";
  problem.m = o.m, problem.n = o.n, problem.k = o.k, problem.batch = o.batch;
  problem.at = o.layout[0] == 'T', problem.bt = o.layout[1] == 'T';
  if (problem.m < 1 || problem.n < 1 || problem.k < 1 || problem.batch < 1)
    throw BenchError("M, N, K and --batch must be at least 1");
  const ir::DType dtype = ir::parse_dtype(o.dtype);
  const ir::Gemm gemm = to_gemm(problem, dtype);
  const std::string name = problem_name(dtype, problem);
  TimingSession session(o.split_mode);
  auto& [info, limits, stream, cublas_handle, mode] = session;
  fmt::print("sets on {} (sm_{}, {} SMs), driver {}, {}: {}\n", info.name, info.compute_capability(), info.sm_count,
             runtime::driver_version(), cublas_handle.version(), ir::to_string(gemm));

  std::vector<Contestant> sets(o.params.size());
  std::vector<lower::GemmParams> legal;
  std::vector<std::size_t> legal_index;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    sets[i].text = o.params[i];
    try {
      sets[i].params = lower::parse_gemm_params(o.params[i]);
    } catch (const std::exception& e) {
      sets[i].error = e.what();
      continue;
    }
    if (auto l = lower::check_gemm(gemm, sets[i].params, limits); !l) sets[i].error = "illegal: " + l.reason;
    else legal.push_back(sets[i].params), legal_index.push_back(i);
  }
  auto compiled = compile_all(gemm, legal, mode, 0);
  for (std::size_t j = 0; j < compiled.size(); ++j) {
    Contestant& c = sets[legal_index[j]];
    if (compiled[j].gemm) c.kernel = std::move(compiled[j].gemm);
    else c.error = one_line(compiled[j].error);
  }

  std::unique_ptr<Operands> operands;
  auto operands_here = [&]() -> Operands& {
    if (!operands) operands = std::make_unique<Operands>(gemm, hash_name(name, 11), cublas_handle, stream);
    return *operands;
  };
  const double flops = problem.flops();
  for (std::size_t i = 0; i < sets.size(); ++i)
    register_timed(fmt::format("set{}/{}", i, name), [&, i](benchmark::State& state) {
      Contestant& c = sets[i];
      c.tflops = bench_contender(state, flops, c.error, [&] {
        if (!c.kernel) throw BenchError(c.error.empty() ? "no kernel" : c.error);
        return Measured{checked_median_ms(*c.kernel, operands_here(), stream, mode, o.repeats), c.text};
      });
    });
  double cublas_tflops = 0;
  std::string cublas_error, cublas_which;
  register_timed(fmt::format("cublas/{}", name), [&](benchmark::State& state) {
    cublas_tflops = bench_contender(state, flops, cublas_error, [&] {
      Operands& ops = operands_here();
      auto best = cublas_handle.best(gemm, ops.c(), ops.a(), ops.b(), stream,
                                     {.warmup = 2, .repeats = o.repeats, .flush_l2 = true}, o.lt_algorithms);
      cublas_which = best.which;
      return Measured{best.median_ms, best.which};
    });
  });
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::string csv = fmt::format(
      "# isaac-bench-gemm sets on {} (sm_{}), driver {}, {}; median of {} runs, L2 flushed (read of twice its size); "
      "cuBLAS: {} {}\n",
      info.name, info.compute_capability(), runtime::driver_version(), cublas_handle.version(), o.repeats,
      cublas_which, cublas_error);
  csv += "dtype,batch,m,n,k,at,bt,params,tflops,cublas_tflops,vs_cublas,registers,shared_bytes,threads,error\n";
  fmt::print("\n{:>9} {:>9} {:>5} {:>7} {:>7}  {}\n", "TFLOP/s", "/cuBLAS", "regs", "shared", "threads", "set");
  int timed = 0;
  for (const Contestant& c : sets) {
    const bool ran = c.tflops > 0;
    timed += ran;
    const int registers = c.kernel ? c.kernel->attributes().registers : 0;
    const int shared_bytes = c.kernel ? lower::gemm_shared_bytes(dtype, gemm.a_trans, gemm.b_trans, c.params) : 0;
    const int threads = c.kernel ? lower::gemm_launch_threads(gemm, c.params) : 0;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", ir::name(dtype), problem.batch, problem.m,
                       problem.n, problem.k, int(problem.at), int(problem.bt), csv_field(c.text), figure_cell(c.tflops),
                       figure_cell(cublas_tflops), figure_cell(ratio(c.tflops, cublas_tflops)), registers, shared_bytes,
                       threads, csv_field(ran ? "" : c.error));
    fmt::print("{:>9.2f} {:>9.3f} {:>5} {:>7} {:>7}  {}{}\n", c.tflops, ratio(c.tflops, cublas_tflops), registers,
               shared_bytes, threads, c.text, ran ? "" : "\n            " + c.error);
  }
  fmt::print("cuBLAS {:.2f} TFLOP/s ({}{})\n", cublas_tflops, cublas_which, cublas_error);
  write_file(o.csv, csv);
  fmt::print("wrote {} ({} of {} sets timed)\n", o.csv, timed, sets.size());
  return timed == int(sets.size()) && cublas_tflops > 0 ? exit_ok : exit_failed;
}

}  // namespace isaac::bench
