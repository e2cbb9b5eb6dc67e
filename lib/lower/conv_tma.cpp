// Whether a direct CONV kernel copies its tiles with the Tensor Memory Accelerator, and the tensor
// maps its launches build (lower/conv.hpp, conv_tma).
#include "lower/conv_layout.hpp"

#include <isaac/lower/conv.hpp>

#include <algorithm>

namespace isaac::lower {

namespace {

// The windows' first taps range over [-pad, (P - 1) * stride - pad] along each axis: the bounding
// box's upper corner is that end's distance past the image's last row or column.
int upper_corner(std::int64_t extent, std::int64_t out, std::int64_t stride, std::int64_t pad) {
  return static_cast<int>((out - 1) * stride + 1 - pad - extent);
}

bool within_corner_range(std::int64_t x) { return x >= -128 && x <= 127; }

// The shallowest ring deeper than four stages that a CONV kernel takes. On the H200 (round 60: 210
// sets of DeepBench's Conv6-8, 13 and 14 whose grids fit on the SMs), rings of 8 to 16 stages ran 64 x 32
// to 128 x 64 tiles 1.2-1.6x as fast as four stages (geometric means per tile shape), while 128 x 128
// tiles, whose 32 KB stages leave room for six, ran 0.90-0.96x as fast, and 256 x 32 tiles (five)
// 1.02x.
constexpr int conv_min_deep_stages = 8;

// The implicit GEMM as GEMM's TMA rules see it: an NHWC input is A with K (the reduction)
// contiguous, a KRSC filter is B with K contiguous.
ir::Gemm implicit_tma_gemm(const ir::Conv& v) {
  ir::Gemm g;
  g.dtype = v.dtype;
  g.m = v.n * v.p * v.q, g.n = v.k, g.k = v.c * v.r * v.s;
  g.a_trans = true, g.b_trans = false;
  return g;
}

}  // namespace

bool conv_tma(const ir::Conv& v, const ConvParams& p) {
  if (p.tc != 2 || p.wg || !ir::is_16_bit(v.dtype)) return false;
  if (v.input_layout != ir::ImageLayout::nhwc || v.filter_layout != ir::FilterLayout::krsc) return false;
  if (v.c % p.u || p.pl > 256 || p.kl > 256) return false;
  // ptxas spills the TMA kernel of a KL = 256 tile under a CG split (255 registers and 270 bytes of
  // spills for PL=128, KS=8, U=16 to 64, where the cp.async kernel needs 210; a 256 x 128 tile needs 154).
  if (p.kl == 256 && p.cg > 1) return false;
  const std::int64_t elem = 2;
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;
  if (is[1] != 1 || fs[1] != 1 || v.align_input % 16 || v.align_filter % 16) return false;
  for (std::int64_t stride : {is[0], is[2], is[3], fs[0], fs[2], fs[3]})
    if ((stride * elem) % 16) return false;
  if (v.stride_h > 8 || v.stride_w > 8) return false;
  // The filter offsets of a copy are 16-bit.
  if ((v.r - 1) * v.dilation_h > 32767 || (v.s - 1) * v.dilation_w > 32767) return false;
  return std::ranges::all_of(
      std::array<std::int64_t, 4>{-v.pad_w, -v.pad_h, upper_corner(v.w, v.q, v.stride_w, v.pad_w),
                                  upper_corner(v.h, v.p, v.stride_h, v.pad_h)},
      within_corner_range);
}

bool conv_tma_producer_warp(const ir::Conv& v, const ConvParams& p) {
  if (!conv_tma(v, p)) return false;
  return tma_producer_warp(implicit_tma_gemm(v), conv_kernel_tiling(v, p));
}

int conv_pipeline_stages(const ir::Conv& v, const ConvParams& p) {
  if (!conv_tma(v, p)) return 0;
  const ir::Gemm g = implicit_tma_gemm(v);
  GemmParams t = conv_as_gemm(p);
  t.tma = 1;
  if (!gemm_runs_deep_pipeline(g, t)) return 0;
  // The deepest whose shared memory, the staging of the stores and the mbarriers included, fits.
  const int budget = std::min(gemm_deep_pipeline_bytes, DeviceLimits{}.max_shared_per_block);
  t.st = int(std::min<std::int64_t>(gemm_max_stages, gemm_k_tiles_per_block(g, t)));
  while (t.st >= conv_min_deep_stages && conv_tiling_shared_bytes(v, p, t) > budget) --t.st;
  return t.st >= conv_min_deep_stages ? t.st : 0;
}

ConvTensorMaps conv_tensor_maps(const ir::Conv& v, const ConvParams& p) {
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;
  const std::uint64_t elem = 2;
  ConvTensorMaps m;
  m.input_dims = {std::uint64_t(v.c), std::uint64_t(v.w), std::uint64_t(v.h), std::uint64_t(v.n)};
  m.input_strides = {is[3] * elem, is[2] * elem, is[0] * elem};
  m.lower_corner = {static_cast<int>(-v.pad_w), static_cast<int>(-v.pad_h)};
  m.upper_corner = {upper_corner(v.w, v.q, v.stride_w, v.pad_w), upper_corner(v.h, v.p, v.stride_h, v.pad_h)};
  m.channels = static_cast<std::uint32_t>(p.u);
  m.pixels = static_cast<std::uint32_t>(p.pl);
  m.element_strides = {1, static_cast<std::uint32_t>(v.stride_w), static_cast<std::uint32_t>(v.stride_h), 1};
  m.filter_dims = {std::uint64_t(v.c), std::uint64_t(v.s), std::uint64_t(v.r), std::uint64_t(v.k)};
  m.filter_strides = {fs[3] * elem, fs[2] * elem, fs[0] * elem};
  m.filter_box = {static_cast<std::uint32_t>(p.u), 1, 1, static_cast<std::uint32_t>(p.kl)};
  m.swizzle_bytes = static_cast<int>(std::min<std::int64_t>(128, p.u * elem));
  return m;
}

}  // namespace isaac::lower
