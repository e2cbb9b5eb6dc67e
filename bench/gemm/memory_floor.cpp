#include "memory_floor.hpp"

#include <isaac/runtime/streaming.hpp>
#include <isaac/runtime/timer.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace isaac::bench {

MemoryFloor::MemoryFloor(int sm_count)
    : module_(runtime::Module::from_ptx(runtime::streaming_ptx())),
      kernel_(module_.kernel(runtime::streaming_kernel_name)),
      sm_count_(sm_count) {}

double MemoryFloor::median_ms(std::size_t read_bytes, std::size_t write_bytes, const runtime::Stream& stream,
                              int repeats) const {
  auto vectors = [](std::size_t bytes) { return static_cast<std::uint64_t>((bytes + 15) / 16); };
  std::uint64_t reads = vectors(read_bytes), writes = vectors(write_bytes);
  runtime::Buffer src(std::max<std::size_t>(16 * reads, 16)), dst(std::max<std::size_t>(16 * writes, 16));
  src.fill_bytes(0x5a, stream);
  runtime::DevicePtr src_ptr = src.ptr(), dst_ptr = dst.ptr();
  void* args[] = {&src_ptr, &reads, &dst_ptr, &writes};
  double best = std::numeric_limits<double>::infinity();
  for (unsigned blocks_per_sm : {2u, 4u, 8u}) {
    auto enqueue = [&](const runtime::Stream& s) {
      runtime::launch(kernel_, {static_cast<unsigned>(sm_count_) * blocks_per_sm}, {256}, 0, s, args);
    };
    best = std::min(best, runtime::time_on_stream(enqueue, stream, {.warmup = 2, .repeats = repeats, .flush_l2 = true})
                              .median_ms);
  }
  return best;
}

}  // namespace isaac::bench
