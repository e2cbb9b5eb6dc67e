#pragma once
// The spot check of `isaac-tune collect --template conv`, host side. A CONV kernel is compiled for
// one problem, so the check runs the timed kernel itself on its timing operands, and compares a
// sample of the output elements with float64 sums computed here, tap by tap, as ir::evaluate on
// ir::conv_contraction defines them (taps outside the image read zero). The operands are periodic
// (element i of a tensor holds values[i % values.size()], as random_buffer uploads them), so the
// check needs no host copy of a large input. The bound is test/gpu/conv.cpp's. Header-only, so that
// test/cpu/tune_collect.cpp checks these sums against ir::evaluate without a GPU.
#include <isaac/ir/conv.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace isaac::tune::cli {

struct ConvPoint {
  std::int64_t n = 0, k = 0, p = 0, q = 0;
};

inline std::int64_t conv_output_offset(const ir::Conv& v, const ConvPoint& o) {
  const auto& s = v.output_strides;
  return o.n * s[0] + o.k * s[1] + o.p * s[2] + o.q * s[3];
}

// Every output element when there are at most `count`, else `count` random ones (from `seed`) and
// the first and last.
inline std::vector<ConvPoint> conv_sample_points(const ir::Conv& v, std::size_t count, std::uint64_t seed) {
  std::vector<ConvPoint> points;
  const double total = double(v.n) * double(v.k) * double(v.p) * double(v.q);
  if (total <= double(count)) {
    for (std::int64_t n = 0; n < v.n; ++n)
      for (std::int64_t k = 0; k < v.k; ++k)
        for (std::int64_t p = 0; p < v.p; ++p)
          for (std::int64_t q = 0; q < v.q; ++q) points.push_back({n, k, p, q});
    return points;
  }
  std::mt19937_64 rng(seed);
  auto below = [&](std::int64_t extent) { return std::int64_t(rng() % std::uint64_t(extent)); };
  points.push_back({0, 0, 0, 0});
  points.push_back({v.n - 1, v.k - 1, v.p - 1, v.q - 1});
  while (points.size() < count) points.push_back({below(v.n), below(v.k), below(v.p), below(v.q)});
  return points;
}

struct ConvReference {
  double sum = 0;        // sum over (c, r, s) of I * F
  double magnitude = 0;  // sum of |I * F|, for the error bound
};

// The float64 value of output element `o` of alpha = 1, beta = 0, with periodic operands.
inline ConvReference conv_reference(const ir::Conv& v, const ConvPoint& o, const std::vector<double>& input,
                                    const std::vector<double>& filter) {
  ConvReference out;
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;
  const auto in_period = std::int64_t(input.size()), f_period = std::int64_t(filter.size());
  for (std::int64_t r = 0; r < v.r; ++r) {
    const std::int64_t h = o.p * v.stride_h + r * v.dilation_h - v.pad_h;
    if (h < 0 || h >= v.h) continue;
    for (std::int64_t s = 0; s < v.s; ++s) {
      const std::int64_t w = o.q * v.stride_w + s * v.dilation_w - v.pad_w;
      if (w < 0 || w >= v.w) continue;
      for (std::int64_t c = 0; c < v.c; ++c) {
        const double x = input[std::size_t((o.n * is[0] + c * is[1] + h * is[2] + w * is[3]) % in_period)];
        const double f = filter[std::size_t((o.k * fs[0] + c * fs[1] + r * fs[2] + s * fs[3]) % f_period)];
        out.sum += x * f;
        out.magnitude += std::abs(x * f);
      }
    }
  }
  return out;
}

// test/gpu/conv.cpp's bound for an element of sum of magnitudes `magnitude`: the classical
// gamma_n bound of a sum of n = C*R*S + CG + 3 rounded products in the accumulator (f32, f64 for
// f64), plus the roundings of the output (2, or CG + 3 where CG blocks add into it with atomics),
// plus the absolute error of roundings that underflow. Tensor cores (TC=1) round their sums toward
// zero: twice the terms; f32 on them adds three TF32 products per term, each off by up to about
// 3 x 2^-22 of its magnitude: three times the terms again, and 13 more.
inline double conv_error_bound(ir::DType dtype, double magnitude, std::int64_t crs, int cg, int tc) {
  auto roundoff = [](ir::DType t) {
    return t == ir::DType::f16 ? 0x1p-11 : t == ir::DType::bf16 ? 0x1p-8 : t == ir::DType::f32 ? 0x1p-24 : 0x1p-53;
  };
  auto underflow = [](ir::DType t) {
    return t == ir::DType::f16 ? 0x1p-25 : t == ir::DType::bf16 ? 0x1p-134 : t == ir::DType::f32 ? 0x1p-150 : 0.0;
  };
  const ir::DType accumulation = dtype == ir::DType::f64 ? ir::DType::f64 : ir::DType::f32;
  const bool tf32 = tc && dtype == ir::DType::f32;
  const std::int64_t terms = (tc ? 2 : 1) * (tf32 ? 3 : 1) * (crs + cg + 3) + (tf32 ? 13 : 0);
  const int output_roundings = cg > 1 ? cg + 3 : 2;
  const double nu = double(terms) * roundoff(accumulation);
  const double gamma = nu < 0.5 ? nu / (1 - nu) : 2 * nu;
  const double relative = (gamma + output_roundings * roundoff(dtype)) * (1 + roundoff(dtype));
  return relative * magnitude + double(terms) * underflow(accumulation) + output_roundings * underflow(dtype);
}

}  // namespace isaac::tune::cli
