#include <isaac/runtime/timer.hpp>

#include <isaac/runtime/streaming.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

namespace isaac::runtime {

namespace {

// Evicts every line the previous run left in the L2 by reading a zeroed buffer twice the L2's size.
// A read leaves clean lines. Writing the buffer instead (cuMemset) left the L2 full of dirty lines,
// which the timed kernel then wrote back to memory as it missed: on the H100 that made a kernel that
// only streams its operands 6-33% slower (docs/memory-floor.md, "The L2 flush").
class L2Flush {
 public:
  L2Flush() : data_(std::max<std::int64_t>(2 * device_info(0).l2_bytes, 1 << 20)), sink_(16) {
    data_.fill_bytes(0);
    sink_.fill_bytes(0);
  }
  void enqueue(const Stream& stream) {
    static const Module module = Module::from_ptx(streaming_ptx());
    static const Kernel kernel = module.kernel(streaming_kernel_name);
    DevicePtr data = data_.ptr(), sink = sink_.ptr();
    std::uint64_t reads = data_.bytes() / 16, writes = 0;
    void* args[] = {&data, &reads, &sink, &writes};
    launch(kernel, {static_cast<unsigned>(4 * device_info(0).sm_count)}, {256}, 0, stream, args);
  }

 private:
  Buffer data_, sink_;
};

}  // namespace

Timing time_on_stream(const std::function<void(const Stream&)>& enqueue, const Stream& stream,
                      const TimingOptions& options) {
  std::optional<L2Flush> flush;
  if (options.flush_l2) flush.emplace();
  auto clear_l2 = [&] {
    if (flush) flush->enqueue(stream);
  };
  if (options.repeats < 1) throw InvalidArgument("timing needs at least one repeat");
  for (int i = 0; i < options.warmup; ++i) enqueue(stream);
  Event start, stop;
  double warmed_ms = 0;
  for (int batch = 1; warmed_ms < options.warmup_ms; batch = std::min(2 * batch, 1024)) {
    start.record(stream);
    for (int i = 0; i < batch; ++i) enqueue(stream);
    stop.record(stream);
    stop.synchronize();
    warmed_ms += stop.elapsed_since(start);
  }
  Timing t;
  for (int i = 0; i < options.repeats; ++i) {
    clear_l2();
    start.record(stream);
    enqueue(stream);
    stop.record(stream);
    stop.synchronize();
    t.samples_ms.push_back(stop.elapsed_since(start));
    // The GPU rests as long as the run took, so that every run starts at the clocks the one before
    // did. Back to back, f64 GEMMs of 2.4 ms ran up to 10% slower on the H200, their medians varying
    // by as much between runs: most likely the power limit lowering the clocks (docs/memory-floor.md).
    if (i + 1 < options.repeats)
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(t.samples_ms.back()));
  }
  std::vector<double> sorted = t.samples_ms;
  std::ranges::sort(sorted);
  t.median_ms = sorted[sorted.size() / 2];
  t.min_ms = sorted.front();
  t.max_ms = sorted.back();
  return t;
}

}  // namespace isaac::runtime
