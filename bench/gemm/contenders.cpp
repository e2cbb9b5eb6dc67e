#include "contenders.hpp"

#include "compile_pool.hpp"
#include "problems.hpp"

#include <isaac/gemm.hpp>
#include <isaac/tune/models.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cmath>

namespace isaac::bench {

namespace {

runtime::DeviceInfo open_device() {
  runtime::use_device(0);
  return runtime::device_info(0);
}

}  // namespace

TimingSession::TimingSession(const std::string& split_mode)
    : info(open_device()), limits(device_limits(info)), mode(parse_split_mode(split_mode)) {}

std::string TunerChoices::summary() const {
  return fmt::format("{} in {:.2f} s (search: {} legal sets, enumerated in {:.1f} ms, model over all of them {:.1f} ms)",
                     decision.how, tuning_seconds, decision.search.legal_sets, decision.search.enumerate_ms,
                     decision.search.evaluate_ms);
}

TunerChoices tuner_choices(const ir::Gemm& g, const runtime::DeviceInfo& info, const lower::DeviceLimits& limits,
                           int top_k, lower::SplitMode mode) {
  TunerChoices c;
  const auto model = tune::find_model("gemm", g.dtype, info.name, info.compute_capability());
  if (!model) {
    c.top1_error = c.topk_error = fmt::format("no GEMM {} model", ir::name(g.dtype));
    return c;
  }
  c.model_source = model->source;
  try {
    const auto ranked = tune::rank_gemm_space(g, limits, model->model, 1);
    if (ranked.empty()) throw BenchError("no legal parameter set");
    c.top1 = ranked.front().params;
  } catch (const std::exception& e) {
    c.top1_error = one_line(e.what());
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    TuningOptions options;
    options.top_k = top_k;
    options.mode = mode;
    options.database = false;
    options.f32_tensor_cores = true;
    c.decision = choose_gemm(g, options);
    c.topk = c.decision.params;
  } catch (const std::exception& e) {
    c.topk_error = one_line(e.what());
  }
  c.tuning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

double bench_contender(benchmark::State& state, double flops, std::string& error,
                       const std::function<Measured()>& measure) {
  Measured measured;
  try {
    measured = measure();
  } catch (const std::exception& e) {
    error = one_line(e.what());
    state.SkipWithError(error.c_str());
    return 0;
  }
  for ([[maybe_unused]] auto _ : state) state.SetIterationTime(measured.median_ms * 1e-3);
  const double tflops = flops / (measured.median_ms * 1e-3) / 1e12;
  state.counters["TFLOP/s"] = tflops;
  state.SetLabel(measured.label);
  return tflops;
}

double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0; }

std::string figure_cell(double v) { return v > 0 ? fmt::format("{:.3f}", v) : ""; }

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / double(values.size()));
}

}  // namespace isaac::bench
