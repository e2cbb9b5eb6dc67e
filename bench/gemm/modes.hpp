#pragma once
// The executable's subcommands (main.cpp parses their options and calls these).
#include <cstdint>
#include <string>
#include <vector>

namespace isaac::bench {

// Exit codes shared by the modes.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;        // something failed; the output says what
inline constexpr int exit_partial = 2;       // sweep: some jobs ended without a verified winner
inline constexpr int exit_context_lost = 3;  // sweep: a kernel broke the CUDA context; rerun with --resume
inline constexpr int exit_no_gpu = 77;       // no CUDA driver or device (ctest's "skipped")

struct SweepOptions {
  std::string problems;  // empty: the compiled-in list
  std::string dtypes = "f32,f16,f64";
  std::string only;  // run only jobs whose name contains this
  int candidates = 96;       // the random sample per job (the refinement adds its neighbours)
  double random_share = 0.4;  // of each job's time: the random sample, then the refinement (hill climbing)
  int refine_top = 4;         // the fastest sets whose neighbours each refinement round tries
  int refine_rounds = 4;      // at most; the refinement stops earlier when a round finds nothing faster
  std::uint64_t seed = 1;
  double acc16_fraction = 0.25;
  double tc_fraction = 0.5;  // f16 and f64 on sm_80+: share of the sample from the tensor-core (TC > 0) sets
  int only_tc = -1;          // >= 0: sample only the sets with this TC (the refinement may still change it)
  std::string out = "bench/results/gemm-sweep-winners.csv";
  std::string all = "bench/results/gemm-sweep-all.csv";
  double budget_seconds = 420;
  int threads = 0;  // compile threads; 0: all cores
  int warmup = 2, repeats = 10;
  double prune = 3.0;        // candidates whose first run is this much slower than the best are not timed further
  int verify = 8;            // the fastest candidates checked, in order, until one is correct
  double hang_seconds = 30;  // a candidate running longer is taken as hung: recorded as crashed, exit 3
  std::string split_mode = "atomic";
  bool merge = false;    // keep --out's winners: other jobs' as they are, a job's own unless the new one is faster
  bool resume = false;   // --merge, and skip the jobs an earlier run finished (listed in <all>.done)
  bool dry_run = false;  // no GPU: enumerate, sample and emit PTX with LLVM only
};

struct RunOptions {
  std::string winners = "bench/results/gemm-sweep-winners.csv";
  std::string csv = "bench/results/h100-gemm.csv";
  std::string floor_csv = "bench/results/h100-gemm-floor.csv";
  std::string dtypes = "f32,f16,f64";
  int repeats = 30;
  int lt_algorithms = 8;
  std::int64_t peak_size = 8192;
  std::string split_mode = "atomic";
  std::vector<std::string> benchmark_args;  // after "--", for Google Benchmark
};

struct BoundsOptions {
  std::string winners = "bench/results/gemm-sweep-winners.csv";
  std::string params;  // overrides the winner's
  std::int64_t size = 4096;
  int repeats = 30;
  std::string csv = "bench/results/h100-gemm-bounds.csv";
  std::string split_mode = "atomic";
  std::vector<std::string> benchmark_args;
};

struct TunedOptions {
  std::string winners = "bench/results/gemm-sweep-winners.csv";
  std::string csv = "bench/results/h100-gemm-tuned.csv";
  std::string dtypes = "f32,f16,f64";
  int top_k = 10;
  int repeats = 30;
  int lt_algorithms = 8;
  std::string split_mode = "atomic";
  std::string candidates_csv;  // non-empty: also time every candidate of the re-benchmark, write them here
  std::vector<std::string> benchmark_args;
};

int tuned_main(const TunedOptions& options);

struct BatchedOptions {
  std::string problems;  // empty: the compiled-in bench/problems/gemm_batched_problems.csv
  std::string csv = "bench/results/h100-gemm-batched.csv";
  std::string dtypes = "f32,f16,f64";
  int top_k = 10;
  int repeats = 30;
  int lt_algorithms = 8;
  std::string split_mode = "atomic";
  std::vector<std::string> benchmark_args;
};

int batched_main(const BatchedOptions& options);

struct SetsOptions {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string layout = "NN";
  std::string dtype = "f32";
  std::vector<std::string> params;  // the sets to time, as text
  std::string csv = "bench/results/gemm-sets.csv";
  int repeats = 30;
  int lt_algorithms = 8;
  std::string split_mode = "atomic";
  std::vector<std::string> benchmark_args;
};

int sets_main(const SetsOptions& options);

struct SearchesOptions {
  std::string winners = "bench/results/gemm-sweep-winners-acc32.csv";
  std::string csv = "bench/results/h100-gemm-searches.csv";
  std::string dtypes = "f32,f16,f64";
  int top_k = 10;
  int anneal_budget = 40;
  int repeats = 20;
  std::string split_mode = "atomic";
  std::vector<std::string> benchmark_args;
};

int searches_main(const SearchesOptions& options);

struct ProgramOptions {
  std::string problems;  // empty: the compiled-in list
  std::string dtypes = "f32,f16,f64";
  int top_k = 10;
};

int program_main(const ProgramOptions& options);

struct EmissionOptions {
  std::string winners = "bench/results/gemm-sweep-winners.csv";
  std::string csv = "bench/results/gemm-emission.csv";
  std::string dtypes = "f32,f16,f64";
  int compute_capability = 90;
  double aim_ms = 20;  // issue 4's aim, counted in the summary
  std::string split_mode = "atomic";
  std::vector<std::string> benchmark_args;
};

struct RankingOptions {
  std::string problems;  // empty: the compiled-in list
  std::string dtypes = "f32,f16,f64";
  std::string device = "NVIDIA H100 80GB HBM3";  // whose shipped models rank
  int compute_capability = 90;
  std::string csv = "bench/results/gemm-ranking.csv";
  double aim_ms = 50;  // issue 6's aim, counted in the summary
  std::vector<std::string> benchmark_args;
};

int emission_main(const EmissionOptions& options);
int ranking_main(const RankingOptions& options);
int sweep_main(const SweepOptions& options);
int run_main(const RunOptions& options);
int bounds_main(const BoundsOptions& options);
int selftest_main();

}  // namespace isaac::bench
