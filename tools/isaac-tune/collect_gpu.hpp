#pragma once
// The GPU side of `isaac-tune collect`: one thread, one stream, one kernel at a time. Loads a compiled
// kernel, spot-checks it now and then against the float64 reference, and times it on its input's
// operands (allocated once per shape, filled with random non-zero values). A watchdog records a
// kernel that never finishes as a failure and ends the process. This is the GEMM runner (the spot
// check runs the kernel on a small awkward problem); collect_conv_gpu.hpp has the CONV one.
#include "collect_check.hpp"
#include "collect_csv.hpp"

#include <isaac/gemm.hpp>
#include <isaac/runtime/runtime.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <random>
#include <vector>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace isaac::tune::cli {

struct GpuOptions {
  int ordinal = 0;
  std::uint64_t seed = 1;         // operand values
  double target_ms = 3.0;         // timed runs until their sum reaches this ...
  int min_repeats = 2, max_repeats = 10;  // ... within these bounds (after one warm-up run)
  double kernel_timeout_s = 60;   // a load + check + timing of one kernel longer than this is a hang
};

// Exits the process (status 3) when armed for longer than the limit, after appending the armed row.
class Watchdog {
 public:
  Watchdog(RowWriter& writer, double limit_seconds);
  ~Watchdog();
  void arm(const ResultRow& row);
  void disarm();

 private:
  void loop();
  RowWriter& writer_;
  double limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string line_;
  std::chrono::steady_clock::time_point since_{};
  bool armed_ = false, stop_ = false;
  std::thread thread_;
};

// What the GEMM and CONV runners share: the device, one stream, the watchdog, the timing, and the
// handling of a failed load or run.
class GpuRunnerBase {
 public:
  GpuRunnerBase(const GpuOptions& options, RowWriter& writer);
  ~GpuRunnerBase();
  const lower::DeviceLimits& limits() const { return limits_; }
  const runtime::DeviceInfo& info() const { return info_; }
  std::uint64_t checks() const { return checks_; }
  // Where the GPU thread's time went, summed over the kernels it ran: what bounds collect's rate
  // once the compile workers keep up (the summary prints it per kernel).
  struct Phases {
    double load_ms = 0, check_ms = 0, operands_ms = 0, timing_ms = 0;
    std::uint64_t kernels = 0;
  };
  const Phases& phases() const { return phases_; }

  // A block of `period` random non-zero values of `dtype` (random_host_array), made on first use and
  // kept: every shape's operands repeat the same blocks, as their values do not change a kernel's time.
  const HostArray& random_block(ir::DType dtype, std::size_t period);

 protected:
  // Times `enqueue` (one run, enqueued on the stream it is given): one warm-up and min_repeats runs,
  // then more up to max_repeats until they add up to target_ms. Sets the row's median, min and max.
  void time(const std::function<void(const runtime::Stream&)>& enqueue, ResultRow& row);
  // Records a failure (status, "what: error", no timings); throws Error when the CUDA context is lost,
  // naming the plan row and `problem`.
  void fail(ResultRow& row, const char* status, const std::string& what, const std::exception& e,
            const std::string& problem);
  bool context_alive();

  struct Armed {  // arms the watchdog for the row, disarms it when destroyed
    Armed(Watchdog& w, const ResultRow& row) : watchdog(w) { watchdog.arm(row); }
    ~Armed() { watchdog.disarm(); }
    Watchdog& watchdog;
  };

  // Adds the time from its construction to its destruction to one of the phases.
  class Phase {
   public:
    explicit Phase(double& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
    ~Phase() { into_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count(); }

   private:
    double& into_;
    std::chrono::steady_clock::time_point start_;
  };

  GpuOptions options_;
  runtime::DeviceInfo info_;
  lower::DeviceLimits limits_;
  runtime::Stream stream_;
  Watchdog watchdog_;
  std::uint64_t checks_ = 0;
  Phases phases_;
  std::map<std::pair<ir::DType, std::size_t>, HostArray> blocks_;
};

// The summary's line on the GPU thread's time per kernel, by phase ("" before any kernel ran).
std::string phases_note(const GpuRunnerBase::Phases& phases);

// A buffer of `elements` values of `block`'s dtype, element i holding block.values[i % block.values.size()]:
// the block's first values uploaded once and repeated on the device. Generating and uploading
// gigabytes on the host would keep the GPU thread from timing for seconds.
runtime::Buffer random_buffer(std::int64_t elements, const HostArray& block, ir::DType dtype);

class GpuRunner : public GpuRunnerBase {
 public:
  using GpuRunnerBase::GpuRunnerBase;
  ~GpuRunner();

  // Loads `kernel` (of parameters `p` for the problem `g`) for `row` and, with `check`, spot-checks it,
  // then times it. Fills the row: status ok, or jit / launch / wrong with the reason. Throws Error
  // when the CUDA context is lost (every later launch would fail), after the row is complete.
  void process(const ir::Gemm& g, const lower::GemmParams& p, lower::GemmKernel kernel, std::uint64_t shape,
               bool check, ResultRow& row);

 private:
  struct Operands {
    std::uint64_t shape;
    runtime::Buffer a, b, c;
  };
  Operands& operands_for(std::uint64_t shape, const ir::Gemm& g);
  std::string spot_check(const CompiledGemm& gemm, const ir::Gemm& like, std::uint64_t variant);

  std::list<Operands> operands_;  // the two most recent shapes, most recent first
};

}  // namespace isaac::tune::cli
