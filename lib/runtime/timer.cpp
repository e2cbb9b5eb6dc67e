#include <isaac/runtime/timer.hpp>

#include <algorithm>

namespace isaac::runtime {

Timing time_on_stream(const std::function<void(const Stream&)>& enqueue, const Stream& stream,
                      const TimingOptions& options) {
  // Writing a buffer twice the L2's size evicts every line the previous run left there.
  Buffer flush;
  if (options.flush_l2) flush = Buffer(std::max<std::int64_t>(2 * device_info(0).l2_bytes, 1 << 20));
  auto clear_l2 = [&] {
    if (options.flush_l2) flush.fill_bytes(0, stream);
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
  }
  std::vector<double> sorted = t.samples_ms;
  std::ranges::sort(sorted);
  t.median_ms = sorted[sorted.size() / 2];
  t.min_ms = sorted.front();
  t.max_ms = sorted.back();
  return t;
}

}  // namespace isaac::runtime
