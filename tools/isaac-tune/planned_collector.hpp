#pragma once
// What the GEMM and CONV sides of `isaac-tune collect` share: a plan that draws the rows in order, a
// GPU runner made by open_gpu, and the count of kernels whose ptxas failed, whose PTX the driver's
// JIT loads instead.
#include "collect_assemble.hpp"
#include "collect_template.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace isaac::tune::cli {

template <class Plan, class Runner>
class PlannedCollector : public Collector {
 public:
  template <class PlanOptions>
  explicit PlannedCollector(const PlanOptions& options) : plan_(options) {}  // the plan validates the options
  std::string signature() const override { return plan_.options().signature(); }
  std::uint64_t next_index() const override { return plan_.next_index(); }
  void open_gpu(const GpuOptions& options, RowWriter& writer) override {
    gpu_ = std::make_unique<Runner>(options, writer);
  }
  std::uint64_t checks() const override { return gpu_ ? gpu_->checks() : 0; }
  std::string compile_steps(const CompileSettings& settings) const override {
    return settings.ptxas ? "emission + ptxas to a cubin" : "emission only: the driver's JIT loads the PTX (no ptxas)";
  }
  std::string notes() const override {
    return fallback_note(ptxas_fallbacks_) + (gpu_ ? phases_note(gpu_->phases()) : std::string());
  }

 protected:
  Plan plan_;
  std::unique_ptr<Runner> gpu_;
  std::atomic<std::uint64_t> ptxas_fallbacks_{0};
};

}  // namespace isaac::tune::cli
