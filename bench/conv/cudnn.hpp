#pragma once
// cuDNN's side of the comparison: the fastest forward convolution cuDNN has for a problem, found and
// timed.
#include "problems.hpp"

#include <isaac/error.hpp>
#include <isaac/runtime/runtime.hpp>

#include <cudnn.h>

#include <fmt/format.h>

#include <string>

// Throws isaac::Error naming the call and cuDNN's message.
#define CUDNN_CHECK(call)                                                                                  \
  do {                                                                                                     \
    cudnnStatus_t status_ = (call);                                                                        \
    if (status_ != CUDNN_STATUS_SUCCESS)                                                                   \
      throw ::isaac::Error(fmt::format("{} failed: {}", #call, cudnnGetErrorString(status_)));                      \
  } while (0)

namespace isaac::bench {

struct CudnnBest {
  double ms = 0;
  std::string how;
};

// The best cuDNN time for the problem in `format` (NCHW or NHWC, filters in the matching KCRS/KRSC),
// the faster of its two APIs:
// - the legacy API: the fastest algorithm of cudnn_finds searches, each on a handle of its own. One
//   search's choice within an algorithm moved cuDNN's f16 times by up to 4x between processes on the
//   H200 (round 39);
// - the graph API (cudnn_graph_best), whose engines the legacy API does not reach.
inline constexpr int cudnn_finds = 3;
CudnnBest cudnn_best(const Problem& pr, ir::DType t, cudnnTensorFormat_t format, const runtime::Stream& stream);

// The graph API's engines for `v` that compute as isaac may (no TF32 for f32 and f64, no partial sums
// below f32), at most graph_configs_per_mode from each list of its heuristics (modes A and B, and the
// fallback list), each timed on `ops` with runtime::time_on_stream; the fastest.
inline constexpr int graph_configs_per_mode = 16;
CudnnBest cudnn_graph_best(const ir::Conv& v, const Operands& ops, const runtime::Buffer& workspace,
                           cudnnHandle_t handle, const runtime::Stream& stream);

cudnnDataType_t cudnn_data_type(ir::DType t);

}  // namespace isaac::bench
