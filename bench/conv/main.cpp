// isaac-bench-conv: the CONV template against cuDNN (issue 5).
//
//   isaac-bench-conv sweep [--budget 600] [--candidates 150] [--model-seeds 8] [--refine-top 4] [--winograd 60] [--winograd-product 60]
//                          [--dtypes f32,f16] (or bf16, f64)
//                          [--out bench/results/conv-sweep-winners.csv]
//     brute force: per problem of conv_problems.csv and dtype, the earlier winner in --out and the model's
//     best sets per layout, a random sample of legal parameter sets over the three layouts (NCHW/KCRS,
//     CHWN/CRSK, NHWC/KRSC), then hill climbing from the fastest; compiled on all cores, each timed on the
//     GPU (runtime::time_on_stream: warm-up, L2 flushed, median); the fastest is kept.
//   isaac-bench-conv tuned [--winners ...] [--csv bench/results/h100-conv-tuned.csv] [--top-k 10] [--bf16]
//     the tuner (issue 6): model top-1 and top-k re-benchmarked, against the winners and cuDNN; with
//     --bf16, the f16 winners' problems in bf16 against cuDNN's bf16 (no brute force).
//   isaac-bench-conv searches [--winners ...] [--csv bench/results/h100-conv-searches.csv] [--anneal-budget 40]
//     issue 7: model + top-k, pruning + annealing, runtime autotune and the winners, quality and tuning cost.
//   isaac-bench-conv run [--winners bench/results/conv-sweep-winners.csv] [--csv bench/results/h100-conv.csv] [--budget 300]
//     Google Benchmark, isaac and cuDNN interleaved per problem: cuDNN's best algorithm found by
//     cudnnFindConvolutionForwardAlgorithmEx, best of NCHW and NHWC (FP32 in FMA math: no TF32; f16 may use
//     tensor cores). Writes dtype,name,n,p,q,k,c,r,s,isaac_tflops,cudnn_tflops,roofline_tflops,params.
// Roofline: min(peak, minimal bytes / bandwidth measured here with a 1 GiB device-to-device copy), the
// peak being FFMA's (SMs x 128 lanes x 2 x clock) for f32, half of it for f64, and the dense f16
// tensor cores' for f16 (what cuDNN uses). Failures are printed with their reason, never recorded as numbers.
//
// Layout: problems.* (the problem list and operands), cudnn.* (cuDNN's best algorithm), sweep.cpp,
// run.cpp; this file holds the command line.
#include "modes.hpp"
#include "problems.hpp"

#include <isaac/runtime/runtime.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace isaac;
using namespace isaac::bench;

int main(int argc, char** argv) {
  CLI::App app{"isaac-bench-conv: the CONV template against cuDNN.\n"
               "Google Benchmark flags (run) are passed through."};
  app.require_subcommand(1, 1);
  std::string problems_path = ISAAC_CONV_PROBLEMS, dtypes = "f32,f16", out = "bench/results/conv-sweep-winners.csv";
  std::string winners = "bench/results/conv-sweep-winners.csv", csv = "bench/results/h100-conv.csv";
  SweepOptions sweep_options;
  double run_budget = 300;

  auto* sweep_cmd = app.add_subcommand("sweep", "brute force over sampled legal parameter sets; writes the winners CSV");
  sweep_cmd->add_option("--problems", problems_path, "the problem list (name,n,p,q,k,c,r,s)");
  sweep_cmd->add_option("--dtypes", dtypes, "comma-separated: f32, f16, bf16, f64");
  sweep_cmd->add_option("--candidates", sweep_options.candidates, "parameter sets sampled per problem and dtype");
  sweep_cmd->add_option("--model-seeds", sweep_options.model_seeds, "the model's best sets per layout tried first");
  sweep_cmd->add_option("--winograd", sweep_options.winograd,
                        "WG=1 (Winograd) sets sampled per problem and dtype besides, where it applies");
  sweep_cmd->add_option("--winograd-product", sweep_options.winograd_product,
                        "WG=2 (Winograd F(4x4) with a batched GEMM) sets sampled per problem and dtype besides, where "
                        "it applies");
  sweep_cmd->add_option("--wgmma", sweep_options.wgmma,
                        "TC=2 (wgmma) sets sampled per problem and dtype besides, where they apply (f16 and bf16 on sm_90): "
                        "a small share of conv_space, which the random sample seldom reaches");
  sweep_cmd->add_option("--refine-top", sweep_options.refine_top,
                        "hill climbing: the fastest sets whose neighbours each round tries");
  sweep_cmd->add_option("--budget", sweep_options.budget_s, "seconds");
  sweep_cmd->add_option("--out", out, "the winners CSV written");

  auto* run_cmd = app.add_subcommand("run", "the winners against cuDNN under Google Benchmark");
  run_cmd->add_option("--problems", problems_path, "the problem list (name,n,p,q,k,c,r,s)");
  run_cmd->add_option("--winners", winners, "the winners CSV read");
  run_cmd->add_option("--csv", csv, "the results CSV written");
  run_cmd->add_option("--budget", run_budget, "seconds");
  run_cmd->allow_extras();  // Google Benchmark's flags

  std::string tuned_csv = "bench/results/h100-conv-tuned.csv";
  int top_k = 10;
  auto* tuned_cmd = app.add_subcommand("tuned", "the tuner (model top-1 and top-k) against the winners and cuDNN");
  tuned_cmd->add_option("--problems", problems_path, "the problem list (name,n,p,q,k,c,r,s)");
  tuned_cmd->add_option("--winners", winners, "the winners CSV read (the brute-force best)");
  tuned_cmd->add_option("--csv", tuned_csv, "the results CSV written");
  tuned_cmd->add_option("--top-k", top_k, "the model's best sets re-benchmarked");
  bool tuned_bf16 = false;
  tuned_cmd->add_flag("--bf16", tuned_bf16,
                      "the f16 winners' problems and layouts in bf16 (bf16 has no sweep: no brute-force column)");
  std::string candidates_csv;
  tuned_cmd->add_option("--candidates-csv", candidates_csv,
                        "also time every candidate the re-benchmark timed, as the contenders are, and write them here");
  tuned_cmd->allow_extras();
  std::string searches_csv = "bench/results/h100-conv-searches.csv";
  SearchOptions search_options;
  auto* searches_cmd = app.add_subcommand(
      "searches", "model + top-k, pruning + annealing, runtime autotune and brute force: quality and tuning cost");
  searches_cmd->add_option("--problems", problems_path, "the problem list (name,n,p,q,k,c,r,s)");
  searches_cmd->add_option("--winners", winners, "the winners CSV read (the brute-force best)");
  searches_cmd->add_option("--csv", searches_csv, "the results CSV written");
  searches_cmd->add_option("--top-k", search_options.top_k, "candidates timed by the model search and by autotune");
  searches_cmd->add_option("--anneal-budget", search_options.anneal_budget, "kernels timed at most by annealing");
  searches_cmd->add_option("--sweep-candidates", search_options.sweep_candidates,
                           "sets the sweep sampled per problem and dtype (for the cost column)");
  searches_cmd->allow_extras();
  CLI11_PARSE(app, argc, argv);

  try {
    std::string why;
    if (!runtime::driver_available(&why)) {
      fmt::print(stderr, "isaac-bench-conv needs a CUDA device: {}\n", why);
      return 77;
    }
    if (!std::ifstream(problems_path)) problems_path = "bench/problems/conv_problems.csv";  // run from the repo root
    for (const std::string& path : {out, csv, tuned_csv, searches_csv, candidates_csv}) {
      auto dir = std::filesystem::path(path).parent_path();
      if (!dir.empty()) std::filesystem::create_directories(dir);
    }
    auto problems = read_problems(problems_path);
    fmt::print("{} problems from {}; device {}\n", problems.size(), problems_path, runtime::device_info(0).name);
    if (sweep_cmd->parsed()) return sweep(problems, split(dtypes, ','), sweep_options, out);
    std::vector<std::string> extras = tuned_cmd->parsed()      ? tuned_cmd->remaining()
                                      : searches_cmd->parsed() ? searches_cmd->remaining()
                                                               : run_cmd->remaining();
    std::vector<char*> rest{argv[0]};
    for (auto& a : extras) rest.push_back(a.data());
    int rargc = static_cast<int>(rest.size());
    if (tuned_cmd->parsed()) return tuned(problems, winners, tuned_csv, top_k, candidates_csv, tuned_bf16, rargc, rest.data());
    if (searches_cmd->parsed())
      return searches(problems, winners, searches_csv, search_options, rargc, rest.data());
    return run(problems, winners, csv, run_budget, rargc, rest.data());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
