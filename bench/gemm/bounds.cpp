// `bounds`: what the bounds checks cost (issue 4: "a tile-aligned shape against one a little larger").
// f32 NT, the sweep's winner for LINPACK size^3 (or --params). The template runs an unpredicated main
// loop and predicates only the K tail and the edge stores, so size+1 should cost about one extra tile row
// and column; this measures it. A shape of size+1 in M (N) needs VA=1 (VB=1): the leading dimension is
// odd. So the comparison uses the winner with VA=VB=1 on every shape ("scalar" below), and the winner
// itself where it is legal ("winner"):
//   bounds/f32/NT/<m>x<n>x<k>/<winner|scalar>
// Each runs once, checked against the float64 reference, then timed (median of --repeats, L2 flushed).
// The table gives time per flop relative to the aligned shape with the same parameters.
#include "compile_pool.hpp"
#include "csv.hpp"
#include "cublas.hpp"
#include "google_benchmark.hpp"
#include "modes.hpp"
#include "operands.hpp"
#include "problems.hpp"
#include "winners.hpp"

#include <isaac/gemm.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/runtime/timer.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

struct Case {
  std::string tag;  // "winner" or "scalar"
  Problem problem;
  const CompiledGemm* kernel = nullptr;
  std::string error;
  double median_ms = 0;
  double rel_error = -1;
};

// f32 NT, size + dm by size + dn by size + dk.
Problem bounds_problem(std::int64_t size, std::int64_t dm, std::int64_t dn, std::int64_t dk) {
  return Problem{.suite = "bounds", .m = size + dm, .n = size + dn, .k = size + dk, .at = false, .bt = true};
}

// The widest legal thread arrangement along a tile's contiguous axis (as gemm_space picks it).
int widest(int contiguous, int vector, int threads) {
  int along = std::min(threads, std::max(1, contiguous / vector));
  while (along > 1 && (threads % along || contiguous % (along * vector))) along /= 2;
  return along;
}

}  // namespace

int bounds_main(const BoundsOptions& o) {
  if (o.repeats < 1) throw BenchError("--repeats must be at least 1");
  if (!init_google_benchmark(o.benchmark_args)) return exit_failed;

  const std::int64_t s = o.size;
  Problem aligned = bounds_problem(s, 0, 0, 0);
  std::string params_text = o.params, source = "--params";
  if (params_text.empty()) {
    std::error_code ec;
    if (std::filesystem::exists(o.winners, ec))
      for (const auto& w : read_winners(o.winners))
        if (w.dtype == ir::DType::f32 && w.problem.same_shape(aligned)) {
          params_text = w.params;
          source = fmt::format("the winner of {} in {}", problem_name(w.dtype, w.problem), o.winners);
        }
  }
  if (params_text.empty()) {
    params_text = lower::GemmParams{}.str();
    source = "the default parameters (no f32 NT winner of this size, no --params)";
  }
  lower::GemmParams winner = lower::parse_gemm_params(params_text);
  lower::GemmParams scalar = winner;
  scalar.va = scalar.vb = 1;
  ir::Gemm probe = to_gemm(aligned, ir::DType::f32);
  if (!lower::check_gemm(probe, scalar)) {  // the arrangement of the loads may need to change with the width
    scalar.la = widest(scalar.ml, 1, scalar.threads());
    scalar.lb = widest(scalar.nl, 1, scalar.threads());
  }
  // Scalar loads need more registers than the winner's vectors; when that makes the set illegal,
  // the comparison takes the heuristic's choice for the odd shape, which has scalar loads.
  if (!lower::check_gemm(probe, scalar)) {
    ir::Gemm odd = to_gemm(aligned, ir::DType::f32);
    odd.m += 1, odd.n += 1, odd.k += 1;
    odd.lda = odd.a_trans ? odd.k : odd.m, odd.ldb = odd.b_trans ? odd.n : odd.k, odd.ldc = odd.m;
    scalar = tune::heuristic_gemm(odd, {});
  }

  runtime::use_device(0);
  runtime::DeviceInfo info = runtime::device_info(0);
  lower::DeviceLimits limits = device_limits(info);
  lower::SplitMode mode = parse_split_mode(o.split_mode);
  runtime::Stream stream;
  Cublas cublas;
  fmt::print("bounds on {}: f32 NT, {} (from {}); scalar variant {}\n", info.name, winner.str(), source, scalar.str());

  // The cases, and the two kernels they need (one kernel serves every shape its parameters are legal for).
  auto grow = [&](std::int64_t dm, std::int64_t dn, std::int64_t dk) { return bounds_problem(s, dm, dn, dk); };
  auto make = [](std::string tag, Problem p) {
    Case c;
    c.tag = std::move(tag);
    c.problem = p;
    return c;
  };
  std::vector<Case> cases = {make("winner", aligned),       make("winner", grow(0, 0, 1)),
                             make("scalar", aligned),       make("scalar", grow(1, 0, 0)),
                             make("scalar", grow(0, 1, 0)), make("scalar", grow(0, 0, 1)),
                             make("scalar", grow(1, 1, 1))};
  auto compiled = compile_all(probe, {winner, scalar}, mode, 0);
  for (auto& c : cases) {
    const Compiled& k = compiled[c.tag == "winner" ? 0 : 1];
    const lower::GemmParams& p = c.tag == "winner" ? winner : scalar;
    if (!k.gemm) {
      c.error = "did not compile: " + k.error;
    } else if (auto legal = lower::check_gemm(to_gemm(c.problem, ir::DType::f32), p, limits); !legal) {
      c.error = "not legal for this shape: " + legal.reason;
    } else {
      c.kernel = &*k.gemm;
    }
  }

  for (auto& c : cases) {
    Case* cp = &c;
    std::string name = fmt::format("bounds/f32/NT/{}/{}", c.problem.shape(), c.tag);
    benchmark::RegisterBenchmark(
        name.c_str(),
        [cp, &cublas, &stream, &o](benchmark::State& state) {
          Case& c = *cp;
          try {
            if (!c.kernel) throw BenchError(c.error);
            ir::Gemm g = to_gemm(c.problem, ir::DType::f32);
            Operands ops(g, hash_name(c.problem.shape(), 13), cublas, stream);
            auto enqueue = [&](const runtime::Stream& st) {
              c.kernel->run(g, ops.c(), ops.a(), ops.b(), 1.0, 0.0, st);
            };
            ops.poison_c(stream);
            enqueue(stream);
            auto check =
                ops.check_c(tolerance_for(ir::DType::f32, g.k, true,
                                          output_roundings(c.kernel->params().kg,
                                                           parse_split_mode(o.split_mode) == lower::SplitMode::atomic)),
                            stream);
            c.rel_error = check.rel_error;
            if (!check.ok) throw BenchError("wrong result: " + check.str());
            c.median_ms =
                runtime::time_on_stream(enqueue, stream, {.warmup = 2, .repeats = o.repeats, .flush_l2 = true})
                    .median_ms;
          } catch (const std::exception& e) {
            c.error = one_line(e.what());
            c.median_ms = 0;
            state.SkipWithError(c.error.c_str());
            return;
          }
          for ([[maybe_unused]] auto _ : state) state.SetIterationTime(c.median_ms * 1e-3);
          state.counters["TFLOP/s"] = c.problem.flops() / (c.median_ms * 1e-3) / 1e12;
          state.counters["rel_err"] = c.rel_error;
        })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // Time per flop against the aligned shape with the same parameters.
  auto per_flop = [](const Case& c) { return c.median_ms / c.problem.flops(); };
  auto base_of = [&](const Case& c) -> const Case* {
    for (const auto& b : cases)
      if (b.tag == c.tag && b.problem.same_shape(aligned)) return &b;
    return nullptr;
  };
  std::string csv = "tag,m,n,k,params,median_ms,tflops,time_per_flop_vs_aligned,rel_error\n";
  fmt::print("\n{:<7} {:>17} {:>10} {:>9} {:>16}  {}\n", "params", "m x n x k", "ms", "TFLOP/s", "time/flop ratio",
             "vs aligned, same params");
  int failures = 0;
  for (const auto& c : cases) {
    const Case* b = base_of(c);
    bool ok = c.median_ms > 0;
    failures += !ok;
    double ratio = ok && b && b->median_ms > 0 ? per_flop(c) / per_flop(*b) : 0;
    double tflops = ok ? c.problem.flops() / (c.median_ms * 1e-3) / 1e12 : 0;
    fmt::print("{:<7} {:>17} {:>10} {:>9} {:>16}  {}\n", c.tag, c.problem.shape(),
               ok ? fmt::format("{:.4f}", c.median_ms) : "FAILED", ok ? fmt::format("{:.2f}", tflops) : "-",
               ratio > 0 ? fmt::format("{:.3f}", ratio) : "-", ok ? "" : c.error);
    csv += fmt::format("{},{},{},{},{},{},{},{},{}\n", c.tag, c.problem.m, c.problem.n, c.problem.k,
                       csv_field(c.tag == "winner" ? winner.str() : scalar.str()),
                       ok ? fmt::format("{:.6f}", c.median_ms) : "", ok ? fmt::format("{:.3f}", tflops) : "",
                       ratio > 0 ? fmt::format("{:.4f}", ratio) : "",
                       c.rel_error >= 0 ? fmt::format("{:.3e}", c.rel_error) : "");
  }
  write_file(o.csv, csv);
  fmt::print("bounds: time per flop of {}^3 over {}^3, same parameters (scalar): see the row {}x{}x{}; wrote {}\n",
             s + 1, s, s + 1, s + 1, s + 1, o.csv);
  return failures ? exit_failed : exit_ok;
}

}  // namespace isaac::bench
