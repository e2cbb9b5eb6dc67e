#pragma once
// The two modes of isaac-bench-conv (main.cpp has their command lines).
#include "problems.hpp"

#include <string>
#include <vector>

namespace isaac::bench {

// Brute force: per problem and dtype, seeds (the earlier winners in `out_path`, the model's best
// sets) and legal parameter sets sampled over the three layouts, then hill climbing from the fastest;
// compiled on all cores, timed on the GPU; the fastest per problem and dtype go to `out_path`.
struct SweepOptions {
  int candidates = 150;  // the random sample per problem and dtype, spread over the layouts
  int model_seeds = 8;   // the model's best sets per layout
  int refine_top = 4;    // the fastest sets whose neighbours each hill-climbing round tries
  int winograd = 60;     // WG=1 sets sampled per problem and dtype besides, where Winograd applies
  int winograd_product = 60;  // WG=2 sets likewise
  int wgmma = 60;             // TC=2 sets likewise, where the device has wgmma (f16 and bf16 on sm_90)
  double budget_s = 600;
};
int sweep(const std::vector<Problem>& problems, const std::vector<std::string>& dtypes, const SweepOptions& options,
          const std::string& out_path);

// The winners against cuDNN under Google Benchmark (argc/argv: its flags); rows go to `csv_path`.
int run(const std::vector<Problem>& problems, const std::string& winners_path, const std::string& csv_path,
        double budget_s, int argc, char** argv);

// The tuner against the winners and cuDNN: the model's top-1 and its best of top_k re-benchmarked.
// A non-empty `candidates_csv` also times every candidate the re-benchmark timed (../candidates.hpp).
// `bf16`: the f16 winners' problems and layouts in bf16, without a brute-force column.
int tuned(const std::vector<Problem>& problems, const std::string& winners_path, const std::string& csv_path,
          int top_k, const std::string& candidates_csv, bool bf16, int argc, char** argv);

// Model + top-k, pruning + annealing, runtime autotune and the sweep's winners: quality and tuning cost.
struct SearchOptions {
  int top_k = 10;
  int anneal_budget = 40;
  int sweep_candidates = 150;  // what the sweep sampled per problem and dtype (its winners CSV does not say)
};
int searches(const std::vector<Problem>& problems, const std::string& winners_path, const std::string& csv_path,
             const SearchOptions& options, int argc, char** argv);
}  // namespace isaac::bench
