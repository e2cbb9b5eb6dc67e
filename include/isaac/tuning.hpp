#pragma once
// How isaac chooses GEMM parameters on a device (DESIGN.md, "Tuning"): the performance model for
// the device (tune::find_model) ranks the whole legal space, then the model's top_k best are
// compiled in parallel and timed on scratch operands of the problem's shape, and the fastest wins.
// Without a model for the dtype, heuristic_gemm's choice is used and a warning says so.
// A decision of the tuning database for the same device, driver, isaac version and problem is reused
// without any of that (when still legal); a new decision made with a model is recorded there.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/search.hpp>

#include <string>

namespace isaac {

struct TuningOptions {
  int top_k = 10;  // candidates timed on the GPU; 0 trusts the model
  int ordinal = 0;
  lower::SplitMode mode = lower::SplitMode::atomic;
  bool database = true;  // reuse and record decisions in the tuning database (tune/database.hpp)
};

struct GemmDecision {
  lower::GemmParams params;
  std::string how;               // "model (shipped model gemm-f32-h100) + top-10: rank 3", "heuristic: ..."
  double predicted_tflops = 0;   // 0 without a model
  double measured_ms = -1;       // the winner's median on scratch operands; -1 when not timed
  int rank = 0;                  // the model's rank of the winner (0: its first choice)
  tune::SearchReport search;
};

GemmDecision choose_gemm(const ir::Gemm& problem, const TuningOptions& options = {});

// The same for a CONV (without a CONV model: the first legal set of a short list, with a warning).
struct ConvDecision {
  lower::ConvParams params;
  std::string how;
  double predicted_tflops = 0;
  double measured_ms = -1;
  int rank = 0;
  tune::SearchReport search;
};

ConvDecision choose_conv(const ir::Conv& problem, const lower::ConvEpilogue& epilogue = {},
                         const TuningOptions& options = {});

}  // namespace isaac
