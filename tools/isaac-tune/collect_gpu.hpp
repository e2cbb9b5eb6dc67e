#pragma once
// The GPU side of `isaac-tune collect`: one thread, one stream, one kernel at a time. Loads a compiled
// kernel, spot-checks it now and then on a small awkward problem against the float64 reference, and
// times it on its input's operands (allocated once per shape, filled with random non-zero values).
// A watchdog records a kernel that never finishes as a failure and ends the process.
#include "collect_csv.hpp"

#include <isaac/gemm.hpp>
#include <isaac/runtime/runtime.hpp>

#include <condition_variable>
#include <cstdint>
#include <list>
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

class GpuRunner {
 public:
  GpuRunner(const GpuOptions& options, RowWriter& writer);
  ~GpuRunner();
  const lower::DeviceLimits& limits() const { return limits_; }
  const runtime::DeviceInfo& info() const { return info_; }

  // Loads `kernel` for `row` (whose params and problem are set) and, with `check`, spot-checks it,
  // then times it. Fills the row: status ok, or jit / launch / wrong with the reason. Throws Error
  // when the CUDA context is lost (every later launch would fail), after the row is complete.
  void process(lower::GemmKernel kernel, std::uint64_t shape, bool check, ResultRow& row);
  std::uint64_t checks() const { return checks_; }

 private:
  struct Operands {
    std::uint64_t shape;
    runtime::Buffer a, b, c;
  };
  Operands& operands_for(std::uint64_t shape, const ir::Gemm& g);
  std::string spot_check(const CompiledGemm& gemm, const ir::Gemm& like, std::uint64_t variant);
  void time(const CompiledGemm& gemm, const ir::Gemm& g, Operands& ops, ResultRow& row);
  bool context_alive();

  GpuOptions options_;
  runtime::DeviceInfo info_;
  lower::DeviceLimits limits_;
  runtime::Stream stream_;
  std::list<Operands> operands_;  // the two most recent shapes, most recent first
  Watchdog watchdog_;
  std::uint64_t checks_ = 0;
};

}  // namespace isaac::tune::cli
