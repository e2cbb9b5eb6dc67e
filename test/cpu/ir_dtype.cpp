// Host conversions of the element types (ir::load_element, ir::store_element): every 16-bit pattern
// reads back to itself, and a double is rounded to nearest even once, not through float.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/dtype.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace isaac;
using ir::DType;

namespace {

std::uint16_t bits16(DType t, double value) {
  std::uint16_t out;
  ir::store_element(t, value, &out);
  return out;
}

}  // namespace

TEST_CASE("every f16 and bf16 pattern loads and stores back to itself; NaN stays NaN") {
  for (DType t : {DType::f16, DType::bf16}) {
    int wrong = 0, nans = 0;
    for (std::uint32_t pattern = 0; pattern < 65536; ++pattern) {
      const std::uint16_t h = static_cast<std::uint16_t>(pattern);
      const double value = ir::load_element(t, &h);
      const std::uint16_t back = bits16(t, value);
      if (std::isnan(value)) {
        ++nans;
        wrong += !std::isnan(ir::load_element(t, &back));
      } else {
        wrong += back != h;
      }
    }
    CAPTURE(ir::name(t));
    CHECK(wrong == 0);
    // Exponent all ones with a non-zero fraction, either sign: 2 x (2^10 - 1) or 2 x (2^7 - 1).
    CHECK(nans == (t == DType::f16 ? 2046 : 254));
  }
}

TEST_CASE("bf16: ties to even, one rounding from double, subnormals, overflow to infinity") {
  const auto bf16 = [](double v) { return bits16(DType::bf16, v); };
  CHECK(bf16(1.0) == 0x3f80);
  CHECK(bf16(-2.0) == 0xc000);
  CHECK(bf16(-0.0) == 0x8000);
  CHECK(bf16(1.0 + 0x1p-8) == 0x3f80);      // a tie: to the even 1.0
  CHECK(bf16(1.0 + 3 * 0x1p-8) == 0x3f82);  // a tie: to the even 1 + 2^-6
  // Just above a tie by less than float resolves: through float this would be the tie, then 1.0.
  CHECK(bf16(1.0 + 0x1p-8 + 0x1p-30) == 0x3f81);
  CHECK(bf16(0x1p-133) == 0x0001);            // the smallest subnormal
  CHECK(bf16(0x1p-134) == 0x0000);            // a tie with zero: to zero
  CHECK(bf16(1.5 * 0x1p-134) == 0x0001);
  CHECK(bf16(0x1.fep127) == 0x7f7f);          // the largest finite value
  CHECK(bf16(0x1.ffp127) == 0x7f80);          // a tie past it: infinity
  CHECK(bf16(1e300) == 0x7f80);
  CHECK(bf16(-std::numeric_limits<double>::infinity()) == 0xff80);
  const std::uint16_t nan = bf16(std::nan(""));
  CHECK(std::isnan(ir::load_element(DType::bf16, &nan)));
}

TEST_CASE("f16, f32 and f64: round to nearest even once; f64 is exact") {
  const auto f16 = [](double v) { return bits16(DType::f16, v); };
  CHECK(f16(1.0) == 0x3c00);
  CHECK(f16(1.0 + 0x1p-11) == 0x3c00);
  CHECK(f16(1.0 + 0x1p-11 + 0x1p-40) == 0x3c01);
  CHECK(f16(65504.0) == 0x7bff);
  CHECK(f16(65520.0) == 0x7c00);
  CHECK(f16(0x1p-24) == 0x0001);
  float f;
  ir::store_element(DType::f32, 1.0 + 0x1p-24 + 0x1p-50, &f);
  CHECK(f == 1.0f + 0x1p-23f);
  CHECK(ir::load_element(DType::f32, &f) == 1.0 + 0x1p-23);
  double d;
  ir::store_element(DType::f64, 0.1, &d);
  CHECK(ir::load_element(DType::f64, &d) == 0.1);
  CHECK_THROWS_AS(ir::load_element(static_cast<DType>(9), &d), InvalidArgument);
}
