// The CONV side of `isaac-tune collect --template conv`: the plan of collect_conv_plan.hpp (random
// DeepBench-like inputs, parameter sets uniform over the legal space), emission on the workers
// (plus ptxas for the resource columns with --compile-only: CompiledConv loads PTX through the
// driver's JIT, so a GPU run assembles on the GPU thread), ConvGpuRunner on the GPU thread.
#include "collect_conv_gpu.hpp"
#include "collect_template.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/ptxas.hpp>

#include <fmt/format.h>

#include <chrono>

namespace isaac::tune::cli {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

class ConvJob : public Job {
 public:
  ConvJob(ConvPlanRow plan, ConvGpuRunner* gpu) : plan_(std::move(plan)), gpu_(gpu) {
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
    // The resources without a GPU; a GPU run reads them from the module the driver loads.
    if (row.status.empty() && settings.compile_only && settings.ptxas) {
      try {
        const auto report = lower::run_ptxas(kernel_.ptx, settings.target, kernel_.main_name);
        if (!report.ok) {
          row.status = "compile";
          row.reason = "ptxas: " + report.log;
        } else {
          row.registers = report.registers;
          row.local_bytes = report.stack_bytes;
        }
      } catch (const std::exception& e) {
        row.status = "compile";
        row.reason = std::string("ptxas: ") + e.what();
      }
    }
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
  lower::ConvKernel kernel_;
};

class ConvCollector : public Collector {
 public:
  explicit ConvCollector(const ConvPlanOptions& options) : plan_(options) {}  // ConvPlan validates the options
  const char* header() const override { return collect_conv_header; }
  std::string signature() const override { return plan_.options().signature(); }
  std::uint64_t next_index() const override { return plan_.next_index(); }
  std::unique_ptr<Job> next(bool stored) override {
    return std::make_unique<ConvJob>(plan_.next(!stored), gpu_.get());
  }
  void open_gpu(const GpuOptions& options, RowWriter& writer) override {
    gpu_ = std::make_unique<ConvGpuRunner>(options, writer);
  }
  std::uint64_t checks() const override { return gpu_ ? gpu_->checks() : 0; }
  std::string compile_steps(const CompileSettings& settings) const override {
    if (!settings.compile_only) return "emission: the driver's JIT loads the PTX on the GPU thread";
    return settings.ptxas ? "emission + ptxas (for the resources)" : "emission only (no ptxas)";
  }

 private:
  ConvPlan plan_;
  std::unique_ptr<ConvGpuRunner> gpu_;
};

}  // namespace

std::unique_ptr<Collector> make_conv_collector(const ConvPlanOptions& options) {
  return std::make_unique<ConvCollector>(options);
}

}  // namespace isaac::tune::cli
