#pragma once
// cuBLAS and cuBLASLt as the benchmark's baseline: cublasGemmEx (cublasGemmStridedBatchedEx for a
// batch), and every algorithm of cuBLASLt's heuristic list (with the batch's count and strides on the
// layouts), each timed, best kept. f32 runs with CUBLAS_COMPUTE_32F and the default math mode
// (no TF32), f16 inputs and outputs with CUBLAS_COMPUTE_32F (f32 accumulation), f64 with CUBLAS_COMPUTE_64F.
// Every cuBLAS call is checked; a failure throws BenchError naming the call and cuBLAS's status.
#include "problems.hpp"

#include <isaac/ir/gemm.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/timer.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace isaac::bench {

struct BaselineResult {
  double median_ms = 0;            // the best of all that ran
  std::string which;               // "cublasGemmEx", "cublasGemmStridedBatchedEx" or "cublasLt#3" (index in the heuristic list)
  std::vector<std::string> notes;  // each candidate's time, and why any of them could not run
};

class Cublas {
 public:
  explicit Cublas(std::size_t workspace_bytes = std::size_t(32) << 20);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // C = op(A) op(B) (alpha 1, beta 0) once through cublasGemmEx on `stream`; a batch through
  // cublasGemmStridedBatchedEx.
  void gemm_ex(const ir::Gemm& g, runtime::DevicePtr c, runtime::DevicePtr a, runtime::DevicePtr b,
               const runtime::Stream& stream);
  // The same through cuBLASLt, with each of (up to) `requested` algorithms of its heuristic, timed
  // with `timing`, together with cublasGemmEx: the fastest.
  BaselineResult best(const ir::Gemm& g, runtime::DevicePtr c, runtime::DevicePtr a, runtime::DevicePtr b,
                      const runtime::Stream& stream, const runtime::TimingOptions& timing, int requested = 8);

  std::string version() const;  // "cuBLAS 13.0.2, cuBLASLt 130002"

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// cuBLAS's own message for a status ("CUBLAS_STATUS_NOT_SUPPORTED: ..."); for the callers' errors.
std::string cublas_status_text(int status);

}  // namespace isaac::bench
