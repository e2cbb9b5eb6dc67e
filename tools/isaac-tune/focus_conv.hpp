#pragma once
// The CONV side of `isaac-tune focus --template conv`: random 2-D convolutions (all three layouts,
// stride, padding, dilation) x parameter sets, drawn from the model's top where a CONV model exists
// and uniformly from conv_space otherwise, timed one at a time on the GPU. Same CSV conventions as
// the GEMM rows, with the CONV columns that tools/isaac-tune/dataset.cpp reads.
#include <cstdint>
#include <string>

namespace isaac::tune::cli {

struct ConvFocusFlags {
  std::string out, dtypes = "f32,f16";
  double seconds = 120;
  int per_shape = 12, top = 64, best = 6;
  std::uint64_t seed = 7;
  double max_flops = 2e10;  // per convolution, so that one kernel stays short
};

int run_conv_focus(const ConvFocusFlags& flags);

}  // namespace isaac::tune::cli
