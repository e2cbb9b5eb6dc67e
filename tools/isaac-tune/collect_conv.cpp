// The CONV side of `isaac-tune collect --template conv`: the plan of collect_conv_plan.hpp (random
// DeepBench-like inputs, parameter sets uniform over the legal space), emission then ptxas to a
// cubin on the workers (without ptxas, or where it fails on a GPU run, the driver's JIT loads the
// PTX), ConvGpuRunner on the GPU thread.
#include "collect_conv_gpu.hpp"
#include "planned_collector.hpp"

#include <isaac/error.hpp>

#include <fmt/format.h>

#include <chrono>

namespace isaac::tune::cli {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

class ConvJob : public Job {
 public:
  ConvJob(ConvPlanRow plan, ConvGpuRunner* gpu, std::atomic<std::uint64_t>& ptxas_fallbacks)
      : plan_(std::move(plan)), gpu_(gpu), ptxas_fallbacks_(ptxas_fallbacks) {
    row.index = plan_.index;
    row.problem = problem_columns(plan_.problem);
    row.params = plan_.params ? plan_.params->str() : std::string{};
    row.flops = lower::conv_flops(plan_.problem);
    row.phase = "uniform";
    shape = plan_.shape;
    params_planned = plan_.params_planned;
  }

  void compile(const CompileSettings& settings) override {
    const ir::Conv& v = plan_.problem;
    if (!params_planned) throw Error("collect: a CONV row skipped on --resume was compiled");
    if (!plan_.params) {
      row.status = "illegal";
      row.reason = fmt::format("no parameter set of the CONV template's space is legal for {}", ir::to_string(v));
      return;
    }
    const lower::ConvParams& p = *plan_.params;
    row.threads = p.threads();
    const lower::ConvGrid grid = lower::conv_grid(v, p);
    row.blocks = std::int64_t(grid.main[0]) * grid.main[1] * grid.main[2];
    const auto start = Clock::now();
    try {
      kernel_ = lower::emit_conv(v, p, settings.target);
      row.emit_ms = kernel_.emit_ms;
      row.shared_bytes = kernel_.shared_bytes;
    } catch (const std::exception& e) {
      row.status = "compile";
      row.reason = std::string("emission: ") + e.what();
    }
    if (row.status.empty()) assemble_on_worker(kernel_.ptx, kernel_.main_name, settings, kernel_.cubin, row, ptxas_fallbacks_);
    if (!row.status.empty() || settings.compile_only) kernel_ = {};
    row.compile_ms = ms_since(start);
  }

  void run(bool check) override {
    if (!gpu_) throw Error("collect: a CONV job ran without a GPU runner");
    gpu_->process(plan_.problem, *plan_.params, std::move(kernel_), shape, check, row);
  }

 private:
  ConvPlanRow plan_;
  ConvGpuRunner* gpu_;
  std::atomic<std::uint64_t>& ptxas_fallbacks_;
  lower::ConvKernel kernel_;
};

class ConvCollector : public PlannedCollector<ConvPlan, ConvGpuRunner> {
 public:
  using PlannedCollector::PlannedCollector;
  const char* header() const override { return collect_conv_header; }
  std::unique_ptr<Job> next(bool stored) override {
    return std::make_unique<ConvJob>(plan_.next(!stored), gpu_.get(), ptxas_fallbacks_);
  }
};

}  // namespace

std::unique_ptr<Collector> make_conv_collector(const ConvPlanOptions& options) {
  return std::make_unique<ConvCollector>(options);
}

}  // namespace isaac::tune::cli
