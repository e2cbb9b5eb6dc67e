#pragma once
// Host-side data for GPU tests: random operands in the problem's storage type, their exact float64
// images, poison, and the error bound a correct kernel must meet.
#include <isaac/ir/dtype.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace isaac::test {

// An array of `count` elements of `dtype` in bytes, with its float64 image.
struct HostArray {
  ir::DType dtype;
  std::vector<unsigned char> bytes;
  std::vector<double> values;

  HostArray(ir::DType t, std::int64_t count) : dtype(t), bytes(count * ir::size_of(t)), values(count) {}
  std::size_t size() const { return values.size(); }

  void set(std::size_t i, double v) {
    switch (dtype) {
      case ir::DType::bf16: {  // the float's upper half, rounded to nearest even
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
        const std::uint16_t h = std::isnan(v) ? std::uint16_t(0x7fc0)
                                              : std::uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
        std::memcpy(&bytes[2 * i], &h, 2);
        values[i] = get(i);
        break;
      }
      case ir::DType::f16: {
        _Float16 h = static_cast<_Float16>(v);
        std::memcpy(&bytes[2 * i], &h, 2);
        values[i] = static_cast<double>(h);
        break;
      }
      case ir::DType::f32: {
        float f = static_cast<float>(v);
        std::memcpy(&bytes[4 * i], &f, 4);
        values[i] = f;
        break;
      }
      default:
        std::memcpy(&bytes[8 * i], &v, 8);
        values[i] = v;
    }
  }
  // Reads element i back from `bytes` (after a download).
  double get(std::size_t i) const {
    switch (dtype) {
      case ir::DType::bf16: {
        std::uint16_t h;
        std::memcpy(&h, &bytes[2 * i], 2);
        return static_cast<double>(std::bit_cast<float>(std::uint32_t(h) << 16));
      }
      case ir::DType::f16: {
        _Float16 h;
        std::memcpy(&h, &bytes[2 * i], 2);
        return static_cast<double>(h);
      }
      case ir::DType::f32: {
        float f;
        std::memcpy(&f, &bytes[4 * i], 4);
        return f;
      }
      default: {
        double d;
        std::memcpy(&d, &bytes[8 * i], 8);
        return d;
      }
    }
  }
  void fill_random(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (std::size_t i = 0; i < size(); ++i) set(i, dist(rng));
  }
};

// Unit roundoff of a floating-point type, and half its smallest subnormal (the absolute error of a
// rounding that underflows).
inline double unit_roundoff(ir::DType t) {
  switch (t) {
    case ir::DType::f16: return std::ldexp(1.0, -11);
    case ir::DType::bf16: return std::ldexp(1.0, -8);
    case ir::DType::f32: return std::ldexp(1.0, -24);
    default: return std::ldexp(1.0, -53);
  }
}
inline double underflow_error(ir::DType t) {
  switch (t) {
    case ir::DType::f16: return std::ldexp(1.0, -25);
    case ir::DType::bf16: return std::ldexp(1.0, -134);
    case ir::DType::f32: return std::ldexp(1.0, -150);
    default: return 0;
  }
}

// The classical bound for a sum of `terms` rounded products, |fl(s) - s| <= gamma_n * sum|x_i y_i|
// with gamma_n = n u / (1 - n u), in the accumulation type, plus `output_roundings` roundings in
// the output type (one for the result; more where partial sums are added in C itself, as KG > 1
// with atomics does), plus the absolute error of each rounding that underflows.
inline double error_bound(double magnitude, std::int64_t terms, ir::DType accumulation, ir::DType output,
                          int output_roundings = 1) {
  double nu = static_cast<double>(terms) * unit_roundoff(accumulation);
  double gamma = nu < 0.5 ? nu / (1 - nu) : 2 * nu;
  double relative = (gamma + output_roundings * unit_roundoff(output)) * (1 + unit_roundoff(output));
  return relative * magnitude + terms * underflow_error(accumulation) + output_roundings * underflow_error(output);
}

}  // namespace isaac::test
