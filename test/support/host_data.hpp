#pragma once
// Host-side data for GPU tests: random operands in the problem's storage type, their exact float64
// images, poison, and the error bound a correct kernel must meet.
#include <isaac/ir/dtype.hpp>

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
    ir::store_element(dtype, v, &bytes[i * ir::size_of(dtype)]);
    values[i] = get(i);
  }
  // Reads element i back from `bytes` (after a download).
  double get(std::size_t i) const { return ir::load_element(dtype, &bytes[i * ir::size_of(dtype)]); }
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
