// `emission`: LLVM's time per GEMM kernel (issue 4: "well under 20 ms per kernel on one core"), for
// every sweep winner: IR building, LLVM's pipeline and the NVPTX backend, as lower::emit_gemm runs
// them, on the calling thread. No GPU is needed.
//   emission/<dtype>/<suite>/<m>x<n>x<k>/<op>
// Google Benchmark repeats each emission until its time is stable. The first emission of a process
// also initialises LLVM's NVPTX target; it falls in Google Benchmark's estimation run, not in the figures.
// The CSV has both the wall time and the thread's CPU time of an emission: on a busy machine only
// the second says what one core needs.
#include "compile_pool.hpp"
#include "csv.hpp"
#include "google_benchmark.hpp"
#include "modes.hpp"
#include "problems.hpp"
#include "winners.hpp"

#include <isaac/lower/gemm.hpp>
#include <isaac/lower/target.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>

namespace isaac::bench {

namespace {

struct Emission {
  Winner winner;
  lower::GemmParams params;
  double mean_ms = 0, cpu_ms = 0, min_ms = std::numeric_limits<double>::infinity();
  std::int64_t iterations = 0;
  std::size_t ptx_bytes = 0;
  std::string error;
};

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

}  // namespace

int emission_main(const EmissionOptions& o) {
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;
  const lower::Target target = lower::target_for_compute_capability(o.compute_capability);
  const lower::SplitMode mode = lower::parse_split_mode(o.split_mode);
  const auto dtypes = parse_dtypes(o.dtypes);

  std::vector<Emission> cases;
  for (const auto& w : read_winners(o.winners))
    if (std::find(dtypes.begin(), dtypes.end(), w.dtype) != dtypes.end())
      cases.push_back(Emission{.winner = w, .params = lower::parse_gemm_params(w.params), .error = {}});
  if (cases.empty()) throw BenchError(fmt::format("{} has no winner in the dtypes '{}'", o.winners, o.dtypes));

  for (auto& c : cases) {
    Emission* cp = &c;
    std::string name = "emission/" + problem_name(c.winner.dtype, c.winner.problem);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [cp, &target, mode](benchmark::State& state) {
                                   Emission& c = *cp;
                                   const ir::Gemm g = to_gemm(c.winner.problem, c.winner.dtype);
                                   double total_ms = 0, cpu_start = thread_cpu_ms();
                                   try {
                                     for (auto _ : state) {
                                       auto t0 = std::chrono::steady_clock::now();
                                       auto kernel = lower::emit_gemm(g, c.params, target, mode);
                                       double ms = std::chrono::duration<double, std::milli>(
                                                       std::chrono::steady_clock::now() - t0)
                                                       .count();
                                       total_ms += ms;
                                       c.min_ms = std::min(c.min_ms, ms);
                                       c.ptx_bytes = kernel.ptx.size();
                                     }
                                   } catch (const std::exception& e) {
                                     c.error = one_line(e.what());
                                     state.SkipWithError(c.error.c_str());
                                     return;
                                   }
                                   // The last call is the measured run: its mean replaces the estimation's.
                                   c.iterations = state.iterations();
                                   c.mean_ms = total_ms / static_cast<double>(state.iterations());
                                   c.cpu_ms = (thread_cpu_ms() - cpu_start) / static_cast<double>(state.iterations());
                                   state.counters["PTX_kB"] = static_cast<double>(c.ptx_bytes) / 1024.0;
                                 })
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::string csv = "dtype,suite,m,n,k,at,bt,params,mean_ms,cpu_ms,min_ms,iterations,ptx_bytes\n";
  double log_sum = 0, sum = 0, cpu_sum = 0;
  int emitted = 0, under = 0, failures = 0;
  double slowest = 0;
  for (const auto& c : cases) {
    const Problem& p = c.winner.problem;
    if (!c.error.empty()) {
      ++failures;
      fmt::print(stderr, "{}: {}\n", problem_name(c.winner.dtype, p), c.error);
      continue;
    }
    if (c.iterations == 0) continue;  // left out by --benchmark_filter
    ++emitted;
    sum += c.mean_ms;
    cpu_sum += c.cpu_ms;
    log_sum += std::log(c.cpu_ms);
    under += c.cpu_ms < o.aim_ms;
    slowest = std::max(slowest, c.cpu_ms);
    csv += fmt::format("{},{},{},{},{},{:d},{:d},{},{:.3f},{:.3f},{:.3f},{},{}\n", ir::name(c.winner.dtype), p.suite,
                       p.m, p.n, p.k, p.at, p.bt, csv_field(c.winner.params), c.mean_ms, c.cpu_ms, c.min_ms,
                       c.iterations, c.ptx_bytes);
  }
  if (emitted) {
    write_file(o.csv, csv);
    fmt::print("\nemission ({}, one thread), CPU time per kernel over {} winners: mean {:.1f} ms, geometric mean "
               "{:.1f} ms, slowest {:.1f} ms, {} under {:.0f} ms (wall time: mean {:.1f} ms); wrote {}\n",
               target.name(), emitted, cpu_sum / emitted, std::exp(log_sum / emitted), slowest, under, o.aim_ms,
               sum / emitted, o.csv);
  }
  return failures ? exit_failed : exit_ok;
}

}  // namespace isaac::bench
