#pragma once
// Benchmark timing: CUDA events around each run, warm-up first, median of many runs, and the L2
// cache flushed between runs so that every run reads its operands from device memory. The flush reads
// a buffer twice the L2's size, which leaves clean lines: the timed run pays for no write-back. After
// each run the GPU rests as long as the run took, so that the power limit does not lower the clocks
// of the runs that follow.
#include <isaac/runtime/runtime.hpp>

#include <functional>
#include <vector>

namespace isaac::runtime {

struct TimingOptions {
  int warmup = 3;
  // After the warm-up runs, keep running until this much GPU time has passed: an idle GPU (while the
  // host compiles, say) lowers its clocks, and the first timed runs would pay for the climb back.
  double warmup_ms = 0;
  int repeats = 25;
  bool flush_l2 = true;
};

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::vector<double> samples_ms;
};

// Times `enqueue(stream)` (which must only enqueue work on `stream`).
Timing time_on_stream(const std::function<void(const Stream&)>& enqueue, const Stream& stream,
                      const TimingOptions& options = {});

}  // namespace isaac::runtime
