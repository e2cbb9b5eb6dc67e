#pragma once
// The convolutions that test the staged stores of 16-bit tensor-core CONV kernels
// (lower::conv_staged_stores): results leave through shared memory as runs of 8 elements along the
// output's contiguous axis, one 16-byte store (under a CG split, one vector reduction) where the run
// is whole and the output aligned, eight element stores elsewhere; outputs whose runs are not
// contiguous keep the direct stores. The CPU
// test checks which kernels stage and hold 16-byte stores; the GPU test runs them against the
// reference and checks that nothing outside the output is written.
//
// On wgmma with TMA copies and KL a multiple of 64, TMA stores the NHWC outputs that are one matrix
// with K a multiple of 8 (lower::conv_stores_by_tma): the dense ones with K = 72.
//
// Runs along the filters (NHWC outputs, dense and with padded pixel strides, K a multiple of 8 or
// not) and along the pixels (CHWN packed over N = 8; NCHW with P x Q a multiple of 8 and not), on
// wgmma and mma.sync, with bias, relu and beta, CG splits, partial runs at the tiles' edges, and
// outputs one element past an aligned address.
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace isaac::test {

struct ConvStagedCase {
  std::string what;
  ir::Conv problem;
  lower::ConvParams params;
  lower::ConvEpilogue epilogue;
  double beta = 0;
  std::int64_t output_offset = 0;  // elements past the output buffer's (256-byte aligned) start
  bool staged = false;             // whether the kernel stages its results (conv_staged_stores)
};

inline std::vector<ConvStagedCase> conv_staged_cases(ir::DType dtype = ir::DType::f16) {
  using ir::FilterLayout;
  using ir::ImageLayout;
  std::vector<ConvStagedCase> cases;
  auto add = [&](std::string what, ir::Conv v, const char* params, lower::ConvEpilogue e, double beta,
                 std::int64_t offset, bool staged) {
    lower::ConvParams p = lower::parse_conv_params(params);
    lower::fit_conv_load_layouts(v, p);
    // An output past an aligned address declares its alignment: TMA does not store there.
    if (offset) v.align_output = static_cast<int>(ir::size_of(dtype));
    cases.push_back({std::move(what), v, p, e, beta, offset, staged});
  };
  auto nhwc = [&](std::int64_t k) { return ir::dense_conv(dtype, 3, 32, 9, 9, k, 3, 3, 1, 1, 1, ImageLayout::nhwc, FilterLayout::krsc); };
  const char* wgmma_nhwc = "PL=64,KL=64,PS=8,KS=4,U=32,VI=8,VF=8,TC=2";
  const char* mma_nhwc = "PL=64,KL=64,PS=4,KS=8,U=16,VI=8,VF=8,TC=1";
  add("NHWC, K = 72: whole runs of filters", nhwc(72), wgmma_nhwc, {.bias = true, .relu = true}, 0.0, 0, true);
  add("NHWC, K = 72, beta", nhwc(72), wgmma_nhwc, {}, -0.75, 0, true);
  add("NHWC, K = 72, mma.sync", nhwc(72), mma_nhwc, {.bias = true}, 0.5, 0, true);
  add("NHWC, K = 72, a CG = 2 split adding runs", nhwc(72), "PL=64,KL=64,PS=8,KS=4,U=32,CG=2,VI=8,VF=8,TC=2",
      {.bias = true}, -0.75, 0, true);
  add("NHWC, K = 72, CG = 4 with mma.sync, output one element past an aligned address", nhwc(72),
      "PL=64,KL=64,PS=4,KS=8,U=16,CG=4,VI=8,VF=8,TC=1", {}, 0.5, 1, true);
  add("NHWC, K = 37: pixels 37 elements apart", nhwc(37), wgmma_nhwc, {.bias = true}, 0.0, 0, false);
  add("NHWC, output one element past an aligned address", nhwc(72), wgmma_nhwc, {.relu = true}, -0.5, 1, true);
  // Pixels 48 elements apart: runs stay aligned, with gaps between pixels; the last run of each
  // pixel is partial (filters 32 to 35).
  ir::Conv padded = nhwc(36);
  padded.output_strides = {padded.p * padded.q * 48, 1, padded.q * 48, 48};
  add("NHWC, K = 36 in rows of 48", padded, wgmma_nhwc, {.bias = true}, 0.5, 0, true);
  ir::Conv odd_rows = nhwc(40);  // pixels 43 elements apart
  odd_rows.output_strides = {odd_rows.p * odd_rows.q * 43, 1, odd_rows.q * 43, 43};
  add("NHWC, K = 40 in rows of 43", odd_rows, wgmma_nhwc, {}, -0.75, 0, false);
  add("CHWN, N = 8: runs of pixels packed over the images",
      ir::dense_conv(dtype, 8, 16, 10, 10, 48, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::crsk),
      "PL=64,KL=64,PS=8,KS=4,U=16,VI=8,VF=8,TC=2", {.bias = true, .relu = true}, -0.5, 0, true);
  const char* mma_nchw = "PL=64,KL=32,PS=4,KS=4,U=16,VI=1,VF=1,TC=1";
  // All 75 pixels packed, each filter's 80 elements apart: the last run of a filter is partial.
  ir::Conv packed = ir::dense_conv(dtype, 3, 16, 5, 5, 48, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::crsk);
  packed.output_strides[1] = 80;
  add("CHWN, N = 3: 75 pixels per filter in rows of 80", packed, mma_nchw, {.relu = true}, 0.5, 0, true);
  add("CHWN, N = 3, dense: filters 75 elements apart",
      ir::dense_conv(dtype, 3, 16, 5, 5, 48, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::crsk), mma_nchw, {},
      0.0, 0, false);
  add("NCHW, P x Q = 64: runs of pixels within an image",
      ir::dense_conv(dtype, 2, 16, 8, 8, 48, 3, 3, 1, 1, 1, ImageLayout::nchw, FilterLayout::kcrs), mma_nchw,
      {.bias = true}, 0.0, 0, true);
  add("NCHW, P x Q = 64, a CG = 4 split adding runs",
      ir::dense_conv(dtype, 2, 16, 8, 8, 48, 3, 3, 1, 1, 1, ImageLayout::nchw, FilterLayout::kcrs),
      "PL=64,KL=32,PS=4,KS=4,U=16,CG=4,VI=1,VF=1,TC=1", {.bias = true}, 0.5, 0, true);
  add("NCHW, P x Q = 49: runs cross images",
      ir::dense_conv(dtype, 2, 16, 7, 7, 48, 3, 3, 1, 1, 1, ImageLayout::nchw, FilterLayout::kcrs), mma_nchw, {},
      -0.75, 0, false);
  return cases;
}

}  // namespace isaac::test
