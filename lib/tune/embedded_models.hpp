#pragma once
// The model files compiled into the library (lib/tune/models/*.json, see cmake/embed_models.cmake).
#include <span>
#include <string_view>

namespace isaac::tune {

struct EmbeddedModel {
  std::string_view name;  // the file name without .json, e.g. "gemm-f32-h100"
  std::string_view json;
};

std::span<const EmbeddedModel> embedded_models();

}  // namespace isaac::tune
