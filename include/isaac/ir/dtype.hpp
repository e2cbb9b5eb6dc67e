#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace isaac::ir {

enum class DType { f16, bf16, f32, f64 };

std::size_t size_of(DType t);
std::string_view name(DType t);             // "f16", "bf16", "f32", "f64"
DType parse_dtype(std::string_view text);   // throws InvalidArgument listing the allowed names
// f16 and bf16: the tensor-core kernels treat both as 16-bit words and differ only in the instruction
// types and the conversions.
constexpr bool is_16_bit(DType t) { return t == DType::f16 || t == DType::bf16; }

// Host copies of device data: the element of type `t` at `bytes` as a double, and `value` stored at
// `bytes` as type `t`, rounded to nearest even once (NaN stays NaN; past the largest finite value,
// infinity).
double load_element(DType t, const void* bytes);
void store_element(DType t, double value, void* bytes);

}  // namespace isaac::ir
