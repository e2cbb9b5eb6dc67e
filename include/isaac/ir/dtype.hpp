#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace isaac::ir {

enum class DType { f16, bf16, f32, f64 };

std::size_t size_of(DType t);
std::string_view name(DType t);             // "f16", "bf16", "f32", "f64"
DType parse_dtype(std::string_view text);   // throws InvalidArgument listing the allowed names

}  // namespace isaac::ir
