// isaac-bench-gemm: isaac's GEMM template against cuBLAS on the ISAAC paper's problems.
//
//   isaac-bench-gemm sweep  [options]                 random sample + hill climbing; writes the winners CSV
//   isaac-bench-gemm [run]  [options] [-- GB flags]   winners vs cuBLAS (Google Benchmark); writes h100-gemm.csv
//   isaac-bench-gemm tuned  [options] [-- GB flags]   the tuner (model top-1, top-k) against the winners and cuBLAS
//   isaac-bench-gemm batched [options] [-- GB flags]  the tuner on batched GEMMs against cuBLAS's batched GEMM
//   isaac-bench-gemm sets M N K --params P... [-- GB flags]  parameter sets you name on one GEMM against cuBLAS
//   isaac-bench-gemm searches [options] [-- GB flags] model, annealing, autotune and brute force compared
//   isaac-bench-gemm program [options]                the problems through isaac::compile, with the caches' counts
//   isaac-bench-gemm bounds [options] [-- GB flags]   what bounds checks cost (f32 NT, aligned vs +1)
//   isaac-bench-gemm emission [options] [-- GB flags] LLVM's time per winner's kernel (no GPU needed)
//   isaac-bench-gemm ranking [options] [-- GB flags]  the model's pass over each problem's legal space (no GPU needed)
//   isaac-bench-gemm selftest                         checks of the CPU-side pieces (no GPU needed)
//
// Without a CUDA driver or device, the modes that time kernels (sweep, run, tuned, batched, sets, searches,
// program, bounds) print why and exit 77 (sweep --dry-run needs none).
#include "modes.hpp"
#include "problems.hpp"

#include <isaac/error.hpp>
#include <isaac/runtime/runtime.hpp>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace isaac::bench;

namespace {

// Returns 0 when a GPU is there, else prints why and returns exit_no_gpu.
int require_gpu() {
  std::string why;
  try {
    if (!isaac::runtime::driver_available(&why)) {
      fmt::print(stderr, "isaac-bench-gemm: {}\n", why.empty() ? "no CUDA driver found" : why);
      return exit_no_gpu;
    }
    if (isaac::runtime::device_count() == 0) {
      fmt::print(stderr, "isaac-bench-gemm: no CUDA device found (the driver sees none)\n");
      return exit_no_gpu;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "isaac-bench-gemm: no usable CUDA device: {}\n", e.what());
    return exit_no_gpu;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Line by line into logs (stdout through tee would otherwise be block-buffered, out of step with stderr).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // No TF32 anywhere in cuBLAS, whatever the environment says.
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);

  // Everything after the first "--" belongs to Google Benchmark.
  std::vector<std::string> ours, gb;
  bool after = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!after && a == "--") {
      after = true;
    } else {
      (after ? gb : ours).push_back(a);
    }
  }
  // `run` is the default subcommand.
  static const std::vector<std::string> subcommands = {"sweep", "run", "tuned", "batched", "sets", "searches", "program", "bounds", "emission", "ranking", "selftest"};
  bool has_subcommand = false;
  for (const auto& a : ours)
    if (std::find(subcommands.begin(), subcommands.end(), a) != subcommands.end()) has_subcommand = true;
  bool wants_help = !ours.empty() && (ours[0] == "-h" || ours[0] == "--help");
  if (!has_subcommand && !wants_help) ours.insert(ours.begin(), "run");

  CLI::App app{
      "isaac-bench-gemm: isaac's GEMM template against cuBLAS/cuBLASLt on the ISAAC paper's problems.\n"
      "Google Benchmark flags (run, tuned, batched, sets, searches, bounds, emission, ranking) go after '--'."};
  app.require_subcommand(1, 1);

  SweepOptions so;
  auto* sweep = app.add_subcommand("sweep", "brute-force search over gemm_space; writes the winners CSV");
  sweep->add_option("--problems", so.problems,
                    "problems CSV (default: the compiled-in bench/problems/gemm_problems.csv)");
  sweep->add_option("--dtypes", so.dtypes, "comma-separated dtypes")->capture_default_str();
  sweep->add_option("--only", so.only, "only jobs whose name (e.g. f32/ICA/32x32x60000/NT) contains this");
  sweep->add_option("--candidates", so.candidates, "parameter sets sampled at random per problem and dtype")
      ->capture_default_str();
  sweep->add_option("--random-share", so.random_share,
                    "share of each job's time for the random sample; the rest refines its best (0..1)")
      ->capture_default_str();
  sweep->add_option("--refine-top", so.refine_top, "refinement: the fastest sets whose neighbours each round tries")
      ->capture_default_str();
  sweep->add_option("--refine-rounds", so.refine_rounds,
                    "refinement: at most this many rounds (0: none); stops when a round finds nothing faster")
      ->capture_default_str();
  sweep->add_option("--seed", so.seed, "seed of the sample")->capture_default_str();
  sweep->add_option("--tc-fraction", so.tc_fraction,
                    "f16 and f64 on sm_80+: share of the sample from the tensor-core (TC=1 and TC=2) sets")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sweep->add_option("--tc", so.only_tc, "sample only the sets with this TC (0, 1 or 2; -1: all)")
      ->check(CLI::Range(-1, 2))
      ->capture_default_str();
  sweep->add_option("--acc16-fraction", so.acc16_fraction, "f16: share of the sample with ACC=16")
      ->capture_default_str();
  sweep->add_option("--out", so.out, "winners CSV")->capture_default_str();
  sweep->add_option("--all", so.all, "CSV of every trial (for model training)")->capture_default_str();
  sweep->add_option("--budget-seconds", so.budget_seconds, "stop within this many seconds")->capture_default_str();
  sweep->add_option("--threads", so.threads, "compile threads (0: all cores)")->capture_default_str();
  sweep->add_option("--warmup", so.warmup, "untimed runs before timing")->capture_default_str();
  sweep->add_option("--repeats", so.repeats, "timed runs per candidate (median)")->capture_default_str();
  sweep->add_option("--prune", so.prune, "time only once a candidate this many times slower than the best")
      ->capture_default_str();
  sweep->add_option("--verify", so.verify, "check at most this many of the fastest, in order")->capture_default_str();
  sweep->add_option("--hang-seconds", so.hang_seconds, "a candidate running longer is taken as hung (exit 3)")
      ->capture_default_str();
  sweep->add_option("--split-mode", so.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();
  sweep->add_flag("--merge", so.merge,
                  "keep the winners already in --out (a problem's own unless this run finds a faster one) and skip "
                  "candidates that broke the context before");
  sweep->add_flag("--resume", so.resume,
                  "--merge, and skip the problems an earlier run finished (listed in <--all>.done)");
  sweep->add_flag("--dry-run", so.dry_run, "no GPU: sample, and emit the sample's PTX with LLVM (sm_90)");

  RunOptions ro;
  auto* run = app.add_subcommand("run", "the winners against cuBLAS (Google Benchmark); writes the results CSV");
  run->add_option("--winners", ro.winners, "winners CSV of the sweep")->capture_default_str();
  run->add_option("--csv", ro.csv, "results CSV")->capture_default_str();
  run->add_option("--floor-csv", ro.floor_csv, "CSV of each row's memory floor, beside isaac and cuBLAS")
      ->capture_default_str();
  run->add_option("--dtypes", ro.dtypes, "comma-separated dtypes")->capture_default_str();
  run->add_option("--repeats", ro.repeats, "timed runs per benchmark (median)")->capture_default_str();
  run->add_option("--lt-algorithms", ro.lt_algorithms, "cuBLASLt heuristic algorithms to time")->capture_default_str();
  run->add_option("--peak-size", ro.peak_size, "size of the cuBLAS GEMM that measures the peak")->capture_default_str();
  run->add_option("--split-mode", ro.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();

  TunedOptions to;
  auto* tuned = app.add_subcommand("tuned", "the tuner against the brute-force winners and cuBLAS; writes a CSV");
  tuned->add_option("--winners", to.winners, "winners CSV of the sweep (the brute-force best)")->capture_default_str();
  tuned->add_option("--csv", to.csv, "results CSV")->capture_default_str();
  tuned->add_option("--dtypes", to.dtypes, "comma-separated dtypes")->capture_default_str();
  tuned->add_option("--top-k", to.top_k, "the model's best sets re-benchmarked")->capture_default_str();
  tuned->add_option("--repeats", to.repeats, "timed runs per benchmark (median)")->capture_default_str();
  tuned->add_option("--lt-algorithms", to.lt_algorithms, "cuBLASLt heuristic algorithms to time")->capture_default_str();
  tuned->add_option("--split-mode", to.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();
  tuned->add_option("--candidates-csv", to.candidates_csv,
                    "also time every candidate the re-benchmark timed, as the contenders are, and write them here");

  BatchedOptions ba;
  auto* batched = app.add_subcommand("batched", "the tuner on batched GEMMs against cuBLAS's batched GEMM; writes a CSV");
  batched->add_option("--problems", ba.problems,
                      "problems CSV with a batch column (default: the compiled-in bench/problems/gemm_batched_problems.csv)");
  batched->add_option("--csv", ba.csv, "results CSV")->capture_default_str();
  batched->add_option("--dtypes", ba.dtypes, "comma-separated dtypes")->capture_default_str();
  batched->add_option("--top-k", ba.top_k, "the model's best sets re-benchmarked")->capture_default_str();
  batched->add_option("--repeats", ba.repeats, "timed runs per benchmark (median)")->capture_default_str();
  batched->add_option("--lt-algorithms", ba.lt_algorithms, "cuBLASLt heuristic algorithms to time")->capture_default_str();
  batched->add_option("--split-mode", ba.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();

  SetsOptions st;
  std::vector<std::int64_t> st_sizes;
  auto* sets = app.add_subcommand("sets", "parameter sets you name on one GEMM (batched or not) against cuBLAS; writes a CSV");
  sets->add_option("sizes", st_sizes, "M N K")->required()->expected(3);
  sets->add_option("--layout", st.layout, "NN, NT, TN or TT (BLAS column-major)")->capture_default_str();
  sets->add_option("--dtype", st.dtype, "f16, bf16, f32 or f64")->capture_default_str();
  sets->add_option("--batch", st.batch, "how many GEMMs of these sizes, one grid")->capture_default_str();
  sets->add_option("--params", st.params, "a parameter set, e.g. ML=64,NL=128,...,TC=2,TMA=1,ST=1 (repeatable)")
      ->required();
  sets->add_option("--csv", st.csv, "results CSV")->capture_default_str();
  sets->add_option("--repeats", st.repeats, "timed runs per benchmark (median)")->capture_default_str();
  sets->add_option("--lt-algorithms", st.lt_algorithms, "cuBLASLt heuristic algorithms to time")->capture_default_str();
  sets->add_option("--split-mode", st.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();

  SearchesOptions se;
  auto* searches = app.add_subcommand(
      "searches", "model + top-k, pruning + annealing, runtime autotune and brute force: quality and tuning cost");
  searches->add_option("--winners", se.winners, "winners CSV of the sweep (the brute-force best)")->capture_default_str();
  searches->add_option("--csv", se.csv, "results CSV")->capture_default_str();
  searches->add_option("--dtypes", se.dtypes, "comma-separated dtypes")->capture_default_str();
  searches->add_option("--top-k", se.top_k, "candidates timed by the model search and by autotune")->capture_default_str();
  searches->add_option("--anneal-budget", se.anneal_budget, "kernels timed at most by annealing")->capture_default_str();
  searches->add_option("--repeats", se.repeats, "timed runs per benchmark (median)")->capture_default_str();
  searches->add_option("--split-mode", se.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();

  ProgramOptions po;
  auto* program = app.add_subcommand("program", "every problem once through isaac::compile; what the caches saved");
  program->add_option("--problems", po.problems, "problems CSV (default: the compiled-in list)");
  program->add_option("--dtypes", po.dtypes, "comma-separated dtypes")->capture_default_str();
  program->add_option("--top-k", po.top_k, "candidates timed on first sight of a shape")->capture_default_str();

  BoundsOptions bo;
  auto* bounds = app.add_subcommand("bounds", "what bounds checks cost: f32 NT, aligned against +1 in M, N, K");
  bounds->add_option("--winners", bo.winners, "winners CSV (the f32 NT winner of size^3)")->capture_default_str();
  bounds->add_option("--params", bo.params, "parameters to use instead of the winner's");
  bounds->add_option("--size", bo.size, "the aligned size")->capture_default_str();
  bounds->add_option("--repeats", bo.repeats, "timed runs per benchmark (median)")->capture_default_str();
  bounds->add_option("--csv", bo.csv, "results CSV")->capture_default_str();
  bounds->add_option("--split-mode", bo.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();

  EmissionOptions eo;
  auto* emission = app.add_subcommand("emission", "LLVM's time per kernel for every sweep winner, one thread (no GPU needed)");
  emission->add_option("--winners", eo.winners, "winners CSV of the sweep")->capture_default_str();
  emission->add_option("--csv", eo.csv, "results CSV")->capture_default_str();
  emission->add_option("--dtypes", eo.dtypes, "comma-separated dtypes")->capture_default_str();
  emission->add_option("--sm", eo.compute_capability, "target compute capability (70, 80 or 90)")
      ->check(CLI::IsMember({70, 80, 90}))
      ->capture_default_str();
  emission->add_option("--aim-ms", eo.aim_ms, "the summary counts the kernels under this")->capture_default_str();
  emission->add_option("--split-mode", eo.split_mode, "KG>1 reduction: atomic or deterministic")->capture_default_str();

  RankingOptions ko;
  auto* ranking = app.add_subcommand("ranking", "the model's pass over each problem's whole legal space, one thread (no GPU needed)");
  ranking->add_option("--problems", ko.problems, "problems CSV (default: the compiled-in paper problems)");
  ranking->add_option("--dtypes", ko.dtypes, "comma-separated dtypes")->capture_default_str();
  ranking->add_option("--device", ko.device, "the device whose shipped models rank")->capture_default_str();
  ranking->add_option("--sm", ko.compute_capability, "its compute capability (70, 80 or 90)")
      ->check(CLI::IsMember({70, 80, 90}))
      ->capture_default_str();
  ranking->add_option("--csv", ko.csv, "results CSV")->capture_default_str();
  ranking->add_option("--aim-ms", ko.aim_ms, "the summary counts the problems under this")->capture_default_str();

  auto* selftest = app.add_subcommand("selftest", "checks of the CPU-side pieces (no GPU needed)");

  std::vector<const char*> cli_argv{argv[0]};
  for (const auto& a : ours) cli_argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cli_argv.size()), cli_argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!gb.empty() && !(run->parsed() || tuned->parsed() || batched->parsed() || sets->parsed() || searches->parsed() || bounds->parsed() || emission->parsed() || ranking->parsed())) {
    fmt::print(stderr,
               "isaac-bench-gemm: only run, tuned, batched, sets, searches, bounds, emission and ranking take Google Benchmark flags (after '--')\n");
    return exit_failed;
  }

  const char* mode = run->parsed() ? "run" : tuned->parsed() ? "tuned" : batched->parsed() ? "batched" : sets->parsed() ? "sets" : searches->parsed() ? "searches" : program->parsed() ? "program" : sweep->parsed() ? "sweep" : bounds->parsed() ? "bounds" : emission->parsed() ? "emission" : ranking->parsed() ? "ranking" : "selftest";
  try {
    if (selftest->parsed()) return selftest_main();
    if (emission->parsed()) {
      eo.benchmark_args = gb;
      return emission_main(eo);
    }
    if (ranking->parsed()) {
      ko.benchmark_args = gb;
      return ranking_main(ko);
    }
    if (sweep->parsed() && so.dry_run) return sweep_main(so);
    // Options that need no GPU first: a mistyped dtype is reported as such on any machine.
    for (const std::string* dtypes : {&so.dtypes, &ro.dtypes, &to.dtypes, &ba.dtypes, &se.dtypes, &po.dtypes})
      parse_dtypes(*dtypes);
    parse_dtypes(st.dtype);
    if (int code = require_gpu()) return code;
    if (sweep->parsed()) return sweep_main(so);
    if (program->parsed()) return program_main(po);
    if (tuned->parsed()) {
      to.benchmark_args = gb;
      return tuned_main(to);
    }
    if (batched->parsed()) {
      ba.benchmark_args = gb;
      return batched_main(ba);
    }
    if (sets->parsed()) {
      st.m = st_sizes[0], st.n = st_sizes[1], st.k = st_sizes[2];
      st.benchmark_args = gb;
      return sets_main(st);
    }
    if (searches->parsed()) {
      se.benchmark_args = gb;
      return searches_main(se);
    }
    if (bounds->parsed()) {
      bo.benchmark_args = gb;
      return bounds_main(bo);
    }
    ro.benchmark_args = gb;
    return run_main(ro);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "isaac-bench-gemm {}: error: {}\n", mode, e.what());
    return exit_failed;
  }
}
