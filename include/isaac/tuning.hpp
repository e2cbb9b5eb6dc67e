#pragma once
// How isaac chooses a template's parameters on a device (DESIGN.md, "Tuning"). Three searches behind
// one call:
//   model      (default) the performance model for the device (tune::find_model) ranks the whole
//              legal space; its top_k best (tune/spread.hpp) are compiled in parallel, then timed
//              on scratch operands of the problem's shape (those close to the fastest twice), and
//              the fastest wins. Without a model for the dtype, a fixed heuristic choice is used
//              and a warning says so.
//   annealing  analytic pruning (tune/prune.hpp) keeps the sets with the best data reuse at each
//              occupancy level; simulated annealing (tune/anneal.hpp) walks that list, timing at most
//              anneal_budget kernels. Needs no model.
//   autotune   runtime autotuning: decisions are keyed by a bucket of shapes (tune/bucket.hpp). The
//              first problem of a bucket times the candidates (the model's top_k, or without a model
//              top_k sets spread over the pruned list) on its own shape and keeps them all, fastest
//              first; a later member of the bucket takes the first of them that is legal for it
//              (alignment, say), and the heuristic choice if none is, never an error.
// A decision of the tuning database for the same device, driver, isaac version and problem (or
// bucket) is reused without any of that (when still legal); a new one is recorded there.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/bucket.hpp>
#include <isaac/tune/search.hpp>

#include <string>

namespace isaac {

enum class Search { model, annealing, autotune };
std::string_view name(Search search);  // "model", "annealing", "autotune"
Search parse_search(std::string_view text);  // throws InvalidArgument listing the three

struct TuningOptions {
  Search search = Search::model;
  int top_k = 10;           // model and autotune: candidates timed on the GPU; 0 trusts the model
  int anneal_budget = 40;   // annealing: kernels timed at most
  tune::GemmBuckets gemm_buckets;  // autotune: which GEMM shapes share a decision
  tune::ConvBuckets conv_buckets;
  int ordinal = 0;
  lower::SplitMode mode = lower::SplitMode::atomic;
  bool database = true;  // reuse and record decisions in the tuning database (tune/database.hpp)
  // f32 GEMM, and the products of f32 Winograd CONV (WG=2), may run on the tensor cores as three TF32
  // products per term (TC=1: mma.sync; GEMM on sm_90 also TC=2: wgmma): on the H200, 1.1x to 2.6x
  // cuBLAS's f32 per paper problem, with a rounding error that grows faster with K (relative error
  // 2.9e-5 against cuBLAS's 8.1e-7 at 4096^3; docs/tensor-cores.md). Off by default, as TF32 is in
  // cuBLAS and PyTorch.
  bool f32_tensor_cores = false;
};

template <class Params>
struct TuningDecision {
  Params params;
  std::string how;               // "model (shipped model gemm-f32-h100) + top-10: rank 3", "heuristic: ..."
  double predicted_tflops = 0;   // 0 without a model
  double measured_ms = -1;       // the winner's median on scratch operands; -1 when not timed
  int rank = 0;                  // the model's rank of the winner (0: its first choice)
  int timed = 0;                 // kernels compiled and timed to decide (0 for a decision recalled)
  std::vector<tune::TimedSet<Params>> candidates;  // model search: what the re-benchmark timed
  tune::SearchReport search;
};
using GemmDecision = TuningDecision<lower::GemmParams>;
using ConvDecision = TuningDecision<lower::ConvParams>;

GemmDecision choose_gemm(const ir::Gemm& problem, const TuningOptions& options = {});

// The same for a CONV (without a CONV model, the model search falls back to the first legal set of
// a short list, with a warning).
ConvDecision choose_conv(const ir::Conv& problem, const lower::ConvEpilogue& epilogue = {},
                         const TuningOptions& options = {});

}  // namespace isaac
