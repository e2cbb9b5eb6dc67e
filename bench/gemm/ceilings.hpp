#pragma once
// The two ceilings of the roofline, measured in the benchmark's own process: device-memory bandwidth
// (a large device-to-device copy, bytes read plus bytes written over the time) and the peak arithmetic
// rate of each dtype (cuBLAS at 8192^3, the best of cublasGemmEx and cuBLASLt's heuristic list).
#include "cublas.hpp"
#include "problems.hpp"

#include <isaac/ir/dtype.hpp>
#include <isaac/runtime/runtime.hpp>

#include <map>
#include <string>

namespace isaac::bench {

struct Ceilings {
  double bandwidth_tbs = 0;                 // TB/s, read + write
  std::map<ir::DType, double> peak_tflops;  // per dtype
  std::map<ir::DType, std::string> peak_how;

  // min(peak, flops / (minimal bytes / bandwidth)), in TFLOP/s.
  double roofline_tflops(ir::DType dtype, double flops, double bytes) const;
  // Whether bandwidth, not the peak, sets the roofline of such a problem.
  bool bandwidth_bound(ir::DType dtype, double flops, double bytes) const;
};

// Copies `bytes` (default 1 GiB) device to device: median of `repeats`, in TB/s counting read + write.
double measure_bandwidth_tbs(const runtime::Stream& stream, std::size_t bytes = std::size_t(1) << 30, int repeats = 20);
// The GEMM whose cuBLAS rate is the peak: NN, size^3, one batch.
Problem peak_problem(std::int64_t size);
// cuBLAS on peak_problem(size) in `dtype` with random operands, in TFLOP/s; `how` says which algorithm.
double measure_peak_tflops(Cublas& cublas, ir::DType dtype, const runtime::Stream& stream, std::string* how,
                           std::int64_t size = 8192, int repeats = 10);

}  // namespace isaac::bench
