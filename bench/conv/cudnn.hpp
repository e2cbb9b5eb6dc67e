#pragma once
// cuDNN's side of the comparison: the best forward algorithm for a problem, found and timed.
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

// The best cuDNN time for the problem in `format` (NCHW or NHWC, filters in the matching KCRS/KRSC):
// the fastest algorithm of cudnn_finds searches, each on a handle of its own. One search's choice
// within an algorithm moved cuDNN's f16 times by up to 4x between processes on the H200 (round 39).
inline constexpr int cudnn_finds = 3;
CudnnBest cudnn_best(const Problem& pr, ir::DType t, cudnnTensorFormat_t format, const runtime::Stream& stream);

}  // namespace isaac::bench
