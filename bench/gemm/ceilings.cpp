#include "ceilings.hpp"

#include "device_sync.hpp"
#include "operands.hpp"
#include "problems.hpp"

#include <isaac/runtime/timer.hpp>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace isaac::bench {

double Ceilings::roofline_tflops(ir::DType dtype, double flops, double bytes) const {
  auto it = peak_tflops.find(dtype);
  if (it == peak_tflops.end() || bandwidth_tbs <= 0) return 0;
  double memory_tflops = flops / (bytes / (bandwidth_tbs * 1e12)) / 1e12;
  return std::min(it->second, memory_tflops);
}

bool Ceilings::bandwidth_bound(ir::DType dtype, double flops, double bytes) const {
  auto it = peak_tflops.find(dtype);
  if (it == peak_tflops.end() || bandwidth_tbs <= 0) return false;
  return flops / (bytes / (bandwidth_tbs * 1e12)) / 1e12 < it->second;
}

double measure_bandwidth_tbs(const runtime::Stream& stream, std::size_t bytes, int repeats) {
  runtime::use_device(0);
  runtime::Buffer src(bytes), dst(bytes);
  src.fill_bytes(0x5a);
  device_synchronize("after filling the copy's source");
  auto copy = [&](const runtime::Stream& s) {
    cudaError_t e = cudaMemcpyAsync(reinterpret_cast<void*>(static_cast<std::uintptr_t>(dst.ptr())),
                                    reinterpret_cast<const void*>(static_cast<std::uintptr_t>(src.ptr())), bytes,
                                    cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(s.handle()));
    if (e != cudaSuccess)
      throw BenchError(fmt::format("cudaMemcpyAsync (device to device, {} bytes) failed: {}: {}", bytes,
                                   cudaGetErrorName(e), cudaGetErrorString(e)));
  };
  // 1 GiB is twenty times the L2: no flush needed between copies.
  auto t = runtime::time_on_stream(copy, stream, {.warmup = 3, .repeats = repeats, .flush_l2 = false});
  return 2.0 * double(bytes) / (t.median_ms * 1e-3) / 1e12;
}

Problem peak_problem(std::int64_t size) {
  return Problem{.suite = "peak", .m = size, .n = size, .k = size};
}

double measure_peak_tflops(Cublas& cublas, ir::DType dtype, const runtime::Stream& stream, std::string* how,
                           std::int64_t size, int repeats) {
  Problem p = peak_problem(size);
  ir::Gemm g = to_gemm(p, dtype);
  Operands ops(g, hash_name(problem_name(dtype, p), 7), cublas, stream, /*reference=*/false);
  auto best = cublas.best(g, ops.c(), ops.a(), ops.b(), stream, {.warmup = 2, .repeats = repeats, .flush_l2 = true});
  if (how) *how = best.which;
  return p.flops() / (best.median_ms * 1e-3) / 1e12;
}

}  // namespace isaac::bench
