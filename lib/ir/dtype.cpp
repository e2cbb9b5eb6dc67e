#include <isaac/error.hpp>
#include <isaac/ir/dtype.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace isaac::ir {

std::size_t size_of(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32: return 4;
    case DType::f64: return 8;
  }
  // A value cast from an integer outside the enum: every size computed from it would be 0.
  throw InvalidArgument("not a dtype: " + std::to_string(static_cast<int>(t)) + " (f16, bf16, f32 or f64)");
}

std::string_view name(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
  }
  return "?";
}

DType parse_dtype(std::string_view text) {
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64})
    if (text == name(t)) return t;
  if (text == "fp16" || text == "half") return DType::f16;
  if (text == "fp32" || text == "float") return DType::f32;
  if (text == "fp64" || text == "double") return DType::f64;
  throw InvalidArgument("unknown dtype '" + std::string(text) + "': expected f16, bf16, f32 or f64");
}

namespace {

// bfloat16 has float's exponent range and 8 significant bits: rounding the double to 8 bits (or to
// the subnormals' spacing, 2^-133) gives a value that float holds exactly, whose upper half is the
// bfloat16. Rounding through float first would round twice.
std::uint16_t to_bfloat16(double value) {
  if (std::isnan(value)) return std::signbit(value) ? 0xffc0 : 0x7fc0;
  double rounded = value;
  if (std::isfinite(value) && value != 0) {
    int exponent;
    std::frexp(value, &exponent);
    const int quantum = std::max(exponent - 8, -133);
    rounded = std::ldexp(std::nearbyint(std::ldexp(value, -quantum)), quantum);
  }
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(rounded)) >> 16);
}

}  // namespace

double load_element(DType t, const void* bytes) {
  switch (t) {
    case DType::f16: {
      _Float16 x;
      std::memcpy(&x, bytes, 2);
      return static_cast<double>(x);
    }
    case DType::bf16: {
      std::uint16_t x;
      std::memcpy(&x, bytes, 2);
      return static_cast<double>(std::bit_cast<float>(std::uint32_t{x} << 16));
    }
    case DType::f32: {
      float x;
      std::memcpy(&x, bytes, 4);
      return x;
    }
    case DType::f64: {
      double x;
      std::memcpy(&x, bytes, 8);
      return x;
    }
  }
  size_of(t);  // throws for a value outside the enum
  return 0;
}

void store_element(DType t, double value, void* bytes) {
  switch (t) {
    case DType::f16: {
      const _Float16 x = static_cast<_Float16>(value);
      std::memcpy(bytes, &x, 2);
      return;
    }
    case DType::bf16: {
      const std::uint16_t x = to_bfloat16(value);
      std::memcpy(bytes, &x, 2);
      return;
    }
    case DType::f32: {
      const float x = static_cast<float>(value);
      std::memcpy(bytes, &x, 4);
      return;
    }
    case DType::f64: std::memcpy(bytes, &value, 8); return;
  }
  size_of(t);
}

}  // namespace isaac::ir
