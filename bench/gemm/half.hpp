#pragma once
// IEEE binary16 and bfloat16 <-> float on the host, round to nearest even (the operands of f16 GEMMs are drawn as
// floats, rounded to half, and the reference uses exactly the rounded values).
#include <bit>
#include <cstdint>

namespace isaac::bench {

inline std::uint16_t float_to_half(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: infinity
  if (abs < 0x38800000u) {                                                    // below 2^-14: subnormal or zero
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);           // below 2^-25: rounds to zero
    std::uint32_t mant = (abs & 0x007fffffu) | 0x00800000u;
    int shift = 126 - int(abs >> 23);  // 14..24 for exponents 2^-15..2^-25
    std::uint32_t h = mant >> shift;
    std::uint32_t rest = mant & ((1u << shift) - 1);
    std::uint32_t half_point = 1u << (shift - 1);
    if (rest > half_point || (rest == half_point && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = ((abs >> 13) - (112u << 10));  // rebias the exponent 127 -> 15
  std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: still right
  return static_cast<std::uint16_t>(sign | h);
}

inline float half_to_float(std::uint16_t h) {
  std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t x;
  if (exp == 0x1fu) {
    x = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    x = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    x = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while (!(mant & 0x400u));
    x = sign | (std::uint32_t(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(x);
}

// bfloat16: a float's upper half, rounded to nearest even (NaN stays NaN).
inline std::uint16_t float_to_bfloat16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bfloat16_to_float(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t(h) << 16); }

}  // namespace isaac::bench
