#pragma once
// The CONV side of `isaac-tune focus --template conv`: random 2-D convolutions (all three layouts,
// stride, padding, dilation) x parameter sets, drawn from the model's top where a CONV model exists
// and uniformly from conv_space otherwise (and from winograd_space on a share of the inputs), timed one
// at a time on the GPU. Same CSV conventions as
// the GEMM rows, with the CONV columns that tools/isaac-tune/dataset.cpp reads.
#include "collect_conv_plan.hpp"

#include <cstdint>
#include <string>

namespace isaac::tune::cli {

struct ConvFocusFlags {
  std::string out, model_path, dtypes = "f32,f16";  // no model_path: the user's or the shipped model
  double seconds = 120;
  int per_shape = 12, top = 64, best = 6;
  // Of the sets per input, the model's best `kind_siblings` tilings of each kind of kernel (TC) other
  // than its first choice's: the data on the bias the kind hedge works around (GEMM's --kind-siblings).
  int kind_siblings = 0;
  // Of them, sets that differ from the model's first only in VI and VF (load_width_siblings): the
  // f16 CONV model misjudges what the widths alone change (Conv3, docs/tuning-history.md, round 62).
  int load_siblings = 0;
  // Of them, the model's best neighbours of its first (rank_conv_neighbours, one of each kind of step
  // first): the sets the re-benchmark's last places come from. f32 Conv14's winner is a split step and a
  // variant from the model's second tiling (docs/tuning-history.md, round 63).
  int neighbour_siblings = 0;
  // The image layouts drawn (each with its filter layout: NCHW/KCRS, CHWN/CRSK, NHWC/KRSC); all three
  // when empty.
  std::vector<ir::ImageLayout> layouts;
  bool f32_tensor_cores = false;  // TuningOptions::f32_tensor_cores: f32 may take the TF32 kernels
  std::uint64_t seed = 7;
  // The ranges of N, C, K, P and Q (collect's), and at most 2e10 flops per convolution, so that one
  // kernel stays short. Its tensor cap and dtypes are not used.
  ConvShapeOptions shapes = [] {
    ConvShapeOptions o;
    o.max_flops = 2e10;
    return o;
  }();
  // The share of the inputs drawn where the WG=1 kernels apply, half of whose sets are drawn
  // uniformly from winograd_space.
  double winograd_share = 0;
};

int run_conv_focus(const ConvFocusFlags& flags);

}  // namespace isaac::tune::cli
