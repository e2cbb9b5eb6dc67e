#pragma once
// A per-problem floor for the bandwidth-bound rows, measured the way the GEMMs are: the time one
// kernel takes to read a GEMM's A and B once and write its C once (beta = 0), launched alone on the
// stream, L2 flushed before each run, median of the repeats. No GEMM can finish in less on this GPU
// under this protocol (it must move those bytes in at least one launch), so cuBLAS's time over this
// floor bounds what any kernel could gain over cuBLAS on the row. The roofline's bandwidth is that of
// a 1 GiB copy: it leaves out the launch and the ramp-up, which are most of the time of the small rows.
// The kernel is runtime::streaming_ptx().
#include <isaac/runtime/runtime.hpp>

#include <cstddef>

namespace isaac::bench {

class MemoryFloor {
 public:
  explicit MemoryFloor(int sm_count);
  // The median time, in ms, of the fastest of a few grids (2, 4 and 8 blocks of 256 threads per SM).
  double median_ms(std::size_t read_bytes, std::size_t write_bytes, const runtime::Stream& stream, int repeats) const;

 private:
  runtime::Module module_;
  runtime::Kernel kernel_;
  int sm_count_;
};

}  // namespace isaac::bench
