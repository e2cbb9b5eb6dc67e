#pragma once
// Model files (DESIGN.md, "Files and formats"): versioned JSON holding an Mlp with its
// normalisation, the feature names it was trained on, the device and template it is for, and how
// it was trained. Loading checks everything and throws InvalidArgument saying what is wrong;
// saving writes a temporary file beside the target and renames it, so a reader never sees half a
// model.
//
// {"format": "isaac-model", "version": 1, "template": "gemm", "device": "NVIDIA H200",
//  "compute_capability": 90 (0 to 999), "dtype": "f32" (a dtype name, or "" for all; both optional),
//  "target": "log_tflops", "features": [...], "layer_sizes": [31, 64, 64, 1],
//  "ensemble": 1 (optional: networks side by side in the layers, ensemble.hpp),
//  "normalisation": {"feature_mean": [...], "feature_scale": [...], "target_mean": m, "target_scale": s},
//  "layers": [{"weights": [[row], ...], "bias": [...]}, ...],
//  "training": {"mse": x, "rows": n, "epochs": e, "batch_size": b, "learning_rate": r, "seed": s, "data": "..."}}
// (training optional, and each of its fields). Any JSON error, however deep, is an InvalidArgument
// naming the origin; the layer arrays are checked against layer_sizes before anything is allocated.
#include <isaac/tune/mlp.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace isaac::tune {

inline constexpr int model_format_version = 1;
// What every model predicts, and the only "target" loading accepts: search ranks by it.
inline constexpr std::string_view model_target = "log_tflops";

struct TrainingInfo {
  double mse = 0;  // on the training set, target units
  std::size_t rows = 0;
  int epochs = 0, batch_size = 0;
  double learning_rate = 0;
  std::uint64_t seed = 0;
  std::string data;  // where the data came from
};

struct Model {
  std::string template_name = "gemm";  // which template's parameters the features describe
  std::string device;                  // the GPU the data was measured on
  int compute_capability = 0;          // of that GPU (90 for sm_90); 0 when unknown
  std::string dtype;                   // the dtype of the training data ("f32"); empty for any
  std::string target{model_target};   // what the network predicts: natural log of TFLOP/s
  std::vector<std::string> features;   // names, one per input
  Mlp mlp;
  int ensemble = 1;                    // networks side by side in mlp (ensemble.hpp)
  TrainingInfo training;
};

std::string model_to_json(const Model& model);
// origin names the source in error messages ("model.json").
Model model_from_json(std::string_view text, const std::string& origin = "model");

void save_model(const Model& model, const std::string& path);
Model load_model(const std::string& path);

}  // namespace isaac::tune
