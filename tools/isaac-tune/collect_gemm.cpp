// The GEMM side of `isaac-tune collect`: the plan of collect_plan.hpp (random inputs, parameter sets
// from the learned sampler or uniform), emission then ptxas to a cubin on the workers (without ptxas,
// or where it fails on a GPU run, the driver's JIT loads the PTX), GpuRunner on the GPU thread.
#include "planned_collector.hpp"

#include <isaac/error.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>

namespace isaac::tune::cli {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

class GemmJob : public Job {
 public:
  GemmJob(PlanRow plan, int max_proposals, GpuRunner* gpu, std::atomic<std::uint64_t>& ptxas_fallbacks)
      : plan_(std::move(plan)), max_proposals_(max_proposals), gpu_(gpu), ptxas_fallbacks_(ptxas_fallbacks) {
    row.index = plan_.index;
    row.problem = problem_columns(plan_.problem);
    row.params = plan_.params ? plan_.params->str() : std::string{};
    row.flops = 2.0 * double(plan_.problem.m) * double(plan_.problem.n) * double(plan_.problem.k);
    row.phase = plan_.uniform ? "uniform" : "sampler";
    shape = plan_.shape;
  }

  // Emission, then ptxas to a cubin where it is installed (assemble_on_worker).
  void compile(const CompileSettings& settings) override {
    if (!plan_.params) {
      row.status = "illegal";
      row.reason = fmt::format("{} found no legal parameter set for {} in {} proposals",
                               plan_.uniform ? "uniform sampling" : "the learned sampler", ir::to_string(plan_.problem),
                               max_proposals_);
      return;
    }
    const lower::GemmParams& p = *plan_.params;
    const ir::Gemm& g = plan_.problem;
    row.threads = p.threads();
    row.blocks = ((g.m + p.ml - 1) / p.ml) * ((g.n + p.nl - 1) / p.nl) * p.kg * g.batch;
    const auto start = Clock::now();
    try {
      kernel_ = lower::emit_gemm(g, p, settings.target, lower::SplitMode::atomic);
      row.emit_ms = kernel_.emit_ms;
      row.shared_bytes = kernel_.shared_bytes;
    } catch (const std::exception& e) {
      row.status = "compile";
      row.reason = std::string("emission: ") + e.what();
    }
    if (row.status.empty()) assemble_on_worker(kernel_.ptx, kernel_.main_name, settings, kernel_.cubin, row, ptxas_fallbacks_);
    if (!row.status.empty()) kernel_ = {};
    row.compile_ms = ms_since(start);
  }

  void run(bool check) override {
    if (!gpu_) throw Error("collect: a GEMM job ran without a GPU runner");
    gpu_->process(plan_.problem, *plan_.params, std::move(kernel_), shape, check, row);
  }

 private:
  PlanRow plan_;
  int max_proposals_;
  GpuRunner* gpu_;
  std::atomic<std::uint64_t>& ptxas_fallbacks_;
  lower::GemmKernel kernel_;
};

class GemmCollector : public PlannedCollector<Plan, GpuRunner> {
 public:
  using PlannedCollector::PlannedCollector;
  const char* header() const override { return collect_header; }
  std::unique_ptr<Job> next(bool) override {  // the sampler learns from every row: never left out
    return std::make_unique<GemmJob>(plan_.next(), plan_.options().max_proposals, gpu_.get(), ptxas_fallbacks_);
  }
};

}  // namespace

std::unique_ptr<Collector> make_gemm_collector(const PlanOptions& options) {
  return std::make_unique<GemmCollector>(options);
}

}  // namespace isaac::tune::cli
