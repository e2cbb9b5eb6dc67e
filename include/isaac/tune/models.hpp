#pragma once
// Which performance model the runtime uses for a template, a dtype and a device:
//   1. a user-trained model in the cache directory, <cache>/models/<template>-<dtype>.json, takes
//      precedence (isaac-tune train --out writes one there); a damaged file is an error, never skipped;
//   2. else a model shipped inside the library (lib/tune/models) trained on the same device (for this
//      dtype, or for every dtype when the model names none);
//   3. else the shipped model of the nearest compute capability, with a warning on stderr (once).
// The cache directory is $ISAAC_CACHE_DIR, else $XDG_CACHE_HOME/isaac, else $HOME/.cache/isaac.
#include <isaac/ir/dtype.hpp>
#include <isaac/tune/model_file.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isaac::tune {

struct ModelChoice {
  Model model;
  std::string source;   // "user model /home/u/.cache/isaac/models/gemm-f32.json" or "shipped model gemm-f32-h100"
  std::string warning;  // why this is not a model for this device, or empty
};

std::string cache_directory();
// <cache>/models/<template>-<dtype>.json
std::string user_model_path(std::string_view template_name, ir::DType dtype);

// nullopt when no model exists for the template and dtype. Loaded models are kept for the process.
std::optional<ModelChoice> find_model(std::string_view template_name, ir::DType dtype, std::string_view device,
                                      int compute_capability);

// The shipped models: name, template, dtype, device.
std::vector<std::string> shipped_models();

}  // namespace isaac::tune
