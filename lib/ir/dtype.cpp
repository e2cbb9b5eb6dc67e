#include <isaac/error.hpp>
#include <isaac/ir/dtype.hpp>

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

}  // namespace isaac::ir
