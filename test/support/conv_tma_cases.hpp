#pragma once
// The convolutions and parameter sets that test CONV's TMA copies (lower::conv_tma): f16 or bf16
// NHWC/KRSC on wgmma with C a multiple of U. The CPU test checks that each is legal, copies with TMA and
// assembles without spills; the GPU test runs them against the reference.
//
// The shapes make every part of the im2col map's geometry differ between the axes (R != S, stride,
// padding and dilation per axis), so that a corner, offset or stride given for the wrong axis reads
// the wrong taps: 32-, 64- and 128-byte rows (U = 16, 32, 64), several channel blocks per tap, pixel
// tiles that run past an image and past the last one, K past a tile and K = 1, CG splits with bias,
// beta != 0, reductions long enough for a producer warp, and grids small enough for a deep ring; and
// grids large enough for a tile loop (lower::conv_tile_loop), whose blocks take tiles that start in
// different images, past the last filter tile and past the last pixel.
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>

#include <cstdint>
#include <vector>

namespace isaac::test {

struct ConvTmaCase {
  ir::Conv problem;
  lower::ConvParams params;
  lower::ConvEpilogue epilogue;
  double beta = 0;
};

inline std::vector<ConvTmaCase> conv_tma_cases(ir::DType dtype = ir::DType::f16) {
  struct Shape {
    std::int64_t n, c, h, w, k, r, s, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  };
  auto make = [dtype](const Shape& x) {
    ir::Conv v = ir::dense_conv(dtype, x.n, x.c, x.h, x.w, x.k, x.r, x.s, 1, 0, 1, ir::ImageLayout::nhwc,
                                ir::FilterLayout::krsc);
    v.stride_h = x.stride_h, v.stride_w = x.stride_w, v.pad_h = x.pad_h, v.pad_w = x.pad_w;
    v.dilation_h = x.dilation_h, v.dilation_w = x.dilation_w;
    v.p = ir::output_size(v.h, v.r, v.stride_h, v.pad_h, v.dilation_h);
    v.q = ir::output_size(v.w, v.s, v.stride_w, v.pad_w, v.dilation_w);
    v.output_strides = ir::dense_strides(ir::ImageLayout::nhwc, {v.n, v.k, v.p, v.q});
    return v;
  };
  std::vector<ConvTmaCase> cases;
  auto add = [&](const Shape& x, const char* params, lower::ConvEpilogue e, double beta) {
    ir::Conv v = make(x);
    lower::ConvParams p = lower::parse_conv_params(params);
    lower::fit_conv_load_layouts(v, p);
    cases.push_back({v, p, e, beta});
  };
  const Shape asymmetric{3, 32, 19, 17, 72, 5, 3, 2, 1, 2, 1, 1, 2};
  add(asymmetric, "PL=64,KL=64,PS=8,KS=4,U=32,VI=8,VF=8,TC=2", {}, 0.0);
  add(asymmetric, "PL=128,KL=128,PS=8,KS=8,U=16,VI=8,VF=8,TC=2", {.bias = true, .relu = true}, -0.5);
  const Shape wide_stride{2, 32, 20, 23, 40, 3, 3, 3, 2, 3, 1, 2, 1};
  add(wide_stride, "PL=64,KL=64,PS=8,KS=4,U=32,VI=8,VF=8,TC=2", {.bias = true}, 0.5);
  const Shape channel_blocks{5, 128, 13, 11, 131, 3, 3, 1, 1, 1, 1, 1, 1};  // K prime, two blocks of 64 channels
  add(channel_blocks, "PL=128,KL=64,PS=16,KS=4,U=64,VI=8,VF=8,TC=2", {}, 0.0);
  add(channel_blocks, "PL=64,KL=128,PS=8,KS=8,U=64,CG=4,VI=8,VF=8,TC=2", {.bias = true}, 0.5);
  const Shape long_reduction{2, 256, 9, 9, 64, 3, 3, 1, 1, 1, 1, 1, 1};  // 36 stages of U = 64
  add(long_reduction, "PL=128,KL=64,PS=16,KS=4,U=64,VI=8,VF=8,TC=2", {.relu = true}, 0.0);
  add(long_reduction, "PL=64,KL=64,PS=8,KS=4,U=64,DB=0,VI=8,VF=8,TC=2", {}, -1.0);
  const Shape pointwise{4, 64, 15, 15, 96, 1, 1, 2, 2, 0, 0, 1, 1};
  add(pointwise, "PL=64,KL=64,PS=8,KS=4,U=16,VI=8,VF=8,TC=2", {}, 0.0);
  const Shape one_filter{1, 64, 13, 11, 1, 3, 3, 1, 1, 0, 0, 1, 1};  // K = 1, 99 pixels: a partial tile
  add(one_filter, "PL=64,KL=32,PS=8,KS=2,U=64,VI=8,VF=8,TC=2", {.bias = true}, 0.25);
  const Shape deep_channels{16, 512, 9, 9, 48, 5, 5, 1, 1, 2, 2, 1, 1};  // as DeepBench's Conv7, smaller images
  add(deep_channels, "PL=64,KL=64,PS=8,KS=2,U=64,CG=8,VI=8,VF=8,TC=2", {}, 0.0);
  // Tile loops: 141 x 2 tiles of 128 x 128 (18018 pixels of 78 x 77), K 8 past a tile; 149 x 2 tiles of
  // 64 x 256 (9480 pixels of 79 x 60), K 8 past a tile.
  const Shape loop_of_square_tiles{3, 64, 153, 153, 136, 1, 3, 2, 2, 1, 1, 1, 1};
  add(loop_of_square_tiles, "PL=128,KL=128,PS=8,KS=8,U=64,VI=8,VF=8,TC=2", {.bias = true, .relu = true}, -0.5);
  const Shape loop_of_wide_tiles{2, 64, 79, 120, 264, 3, 1, 1, 2, 2, 0, 2, 1};
  add(loop_of_wide_tiles, "PL=64,KL=256,PS=8,KS=8,U=64,VI=8,VF=8,TC=2", {.bias = true}, 0.5);
  // Filter tiles fitted to K (16 KS filters a warp group, no power of two): one tile of 176 over
  // K = 174 (rows of 174: direct stores); 96 over K = 87 with padding; 96 over K = 88 in two warp
  // groups of 48 side by side (staged stores); two tiles of 192 over K = 376, the last 8 short (TMA
  // stores it); and a tile loop of 64 x 192 tiles, two warp groups of 96, over K = 184.
  const Shape fitted_whole_k{4, 64, 20, 15, 174, 5, 5, 1, 1, 0, 0, 1, 1};
  add(fitted_whole_k, "PL=128,KL=176,PS=8,KS=11,U=64,VI=8,VF=8,TC=2", {.bias = true}, -0.5);
  const Shape fitted_odd_k{3, 128, 13, 17, 87, 5, 5, 1, 1, 2, 2, 1, 1};
  add(fitted_odd_k, "PL=128,KL=96,PS=16,KS=6,U=64,VI=8,VF=8,TC=2", {.relu = true}, 0.0);
  const Shape fitted_staged{2, 32, 11, 14, 88, 3, 3, 1, 2, 1, 0, 1, 1};
  add(fitted_staged, "PL=64,KL=96,PS=8,KS=3,U=32,VI=8,VF=8,TC=2", {}, 0.5);
  const Shape fitted_two_tiles{2, 64, 12, 12, 376, 3, 3, 1, 1, 1, 1, 1, 1};
  add(fitted_two_tiles, "PL=128,KL=192,PS=8,KS=12,U=64,VI=8,VF=8,TC=2", {.bias = true, .relu = true}, 0.25);
  const Shape fitted_loop{3, 64, 100, 100, 184, 3, 3, 1, 1, 0, 0, 1, 1};
  add(fitted_loop, "PL=64,KL=192,PS=8,KS=6,U=64,VI=8,VF=8,TC=2", {}, -0.75);
  return cases;
}

}  // namespace isaac::test
