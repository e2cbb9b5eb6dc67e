#pragma once
// What `tuned` and `batched` share: the tuner's two choices for a GEMM (the model's first choice, and
// isaac::choose_gemm's top-k re-benchmark), what a contender's benchmark needs and the body that times
// it, and the figures of their CSVs and summaries.
#include "cublas.hpp"
#include "operands.hpp"

#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/tuning.hpp>

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace isaac::bench {

struct TunerChoices {
  std::optional<lower::GemmParams> top1, topk;  // empty when there is none (the error says why)
  std::string top1_error, topk_error;
  GemmDecision decision;        // the top-k re-benchmark's
  double tuning_seconds = 0;    // choose_gemm's wall time: search, compiling and timing the top k
  std::string model_source;     // the model that ranked
  std::string summary() const;  // how the top-k choice was made, in how long, and what the search saw
};

// top-1: the device's GEMM model ranks the whole legal space under `limits`, its first choice is taken
// (nothing timed). top-k: choose_gemm with `top_k` candidates re-benchmarked, without the tuning
// database, f32 on the tensor cores allowed (as `limits` allows them, and the brute-force space holds
// them). Without a model for the dtype, neither (the errors say so).
TunerChoices tuner_choices(const ir::Gemm& g, const runtime::DeviceInfo& info, const lower::DeviceLimits& limits,
                           int top_k, lower::SplitMode mode);

// What the modes that time kernels against cuBLAS open first: device 0 (its description and the limits
// that legality takes), a stream, cuBLAS and the KG > 1 split mode.
struct TimingSession {
  explicit TimingSession(const std::string& split_mode);
  runtime::DeviceInfo info;
  lower::DeviceLimits limits;
  runtime::Stream stream;
  Cublas cublas;
  lower::SplitMode mode;
};

// What every contender's benchmark of a mode uses: its options, cuBLAS, the stream and the split mode.
template <class Options>
struct ModeContext {
  const Options& options;
  Cublas& cublas;
  runtime::Stream& stream;
  lower::SplitMode mode;
};

// A row's operands, made when its first contender is timed (the row's `gemm`, seeded by its `name`)
// and kept for the others; the mode frees them after the row's last.
template <class Row, class Options>
Operands& operands_of(Row& row, ModeContext<Options>& s) {
  if (!row.operands)
    row.operands = std::make_unique<Operands>(row.gemm, hash_name(row.name, 11), s.cublas, s.stream);
  return *row.operands;
}

// A contender's median time and what ran (its parameters, or cuBLAS's algorithm).
struct Measured {
  double median_ms = 0;
  std::string label;
};

// The body of a contender's benchmark (one iteration, manual time): `measure` times it. When that
// throws, the benchmark is skipped with the message, which `error` keeps. Returns the contender's
// TFLOP/s for `flops` (also its counter), 0 when it failed.
double bench_contender(benchmark::State& state, double flops, std::string& error,
                       const std::function<Measured()>& measure);

double ratio(double a, double b);                          // a / b; 0 unless both are figures (positive)
std::string figure_cell(double v);                         // "12.345"; empty for 0 (no figure)
double geometric_mean(const std::vector<double>& values);  // 0 for none

}  // namespace isaac::bench
