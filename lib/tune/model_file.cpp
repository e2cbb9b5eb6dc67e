#include <isaac/error.hpp>
#include <isaac/tune/ensemble.hpp>
#include <isaac/tune/model_file.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace isaac::tune {

using nlohmann::json;

std::string model_to_json(const Model& model) {
  model.mlp.validate();
  check_ensemble(model.mlp, model.ensemble);
  if (model.features.size() != size_t(model.mlp.inputs()))
    throw InvalidArgument(fmt::format("model has {} feature names for {} inputs", model.features.size(),
                                      model.mlp.inputs()));
  json layers = json::array();
  for (const Layer& layer : model.mlp.layers()) {
    json rows = json::array();
    for (int r = 0; r < layer.outputs; ++r)
      rows.push_back(std::vector<double>(layer.weights.begin() + size_t(r) * layer.inputs,
                                         layer.weights.begin() + size_t(r + 1) * layer.inputs));
    layers.push_back({{"weights", rows}, {"bias", layer.bias}});
  }
  const TrainingInfo& t = model.training;
  json doc = {
      {"format", "isaac-model"},
      {"version", model_format_version},
      {"template", model.template_name},
      {"device", model.device},
      {"compute_capability", model.compute_capability},
      {"dtype", model.dtype},
      {"target", model.target},
      {"features", model.features},
      {"layer_sizes", model.mlp.sizes()},
      {"ensemble", model.ensemble},
      {"normalisation",
       {{"feature_mean", model.mlp.feature_mean},
        {"feature_scale", model.mlp.feature_scale},
        {"target_mean", model.mlp.target_mean},
        {"target_scale", model.mlp.target_scale}}},
      {"layers", layers},
      {"training",
       {{"mse", t.mse},
        {"rows", t.rows},
        {"epochs", t.epochs},
        {"batch_size", t.batch_size},
        {"learning_rate", t.learning_rate},
        {"seed", t.seed},
        {"data", t.data}}},
  };
  return doc.dump(1) + "\n";
}

namespace {

// Accessors that name the field and the file in their errors.
struct Reader {
  const std::string& origin;

  [[noreturn]] void fail(const std::string& what) const { throw InvalidArgument(fmt::format("{}: {}", origin, what)); }

  const json& field(const json& object, const char* name, const std::string& where) const {
    if (!object.is_object()) fail(fmt::format("{} is not a JSON object", where));
    auto it = object.find(name);
    if (it == object.end()) fail(fmt::format("{} has no \"{}\"", where, name));
    return *it;
  }
  std::string string(const json& v, const std::string& what) const {
    if (!v.is_string()) fail(fmt::format("{} must be a string, got {}", what, v.type_name()));
    return v.get<std::string>();
  }
  double number(const json& v, const std::string& what) const {
    if (!v.is_number()) fail(fmt::format("{} must be a number, got {}", what, v.type_name()));
    return v.get<double>();
  }
  std::vector<double> numbers(const json& v, size_t expected, const std::string& what) const {
    if (!v.is_array()) fail(fmt::format("{} must be an array, got {}", what, v.type_name()));
    if (v.size() != expected) fail(fmt::format("{} has {} values, expected {}", what, v.size(), expected));
    std::vector<double> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) out.push_back(number(v[i], fmt::format("{}[{}]", what, i)));
    return out;
  }
};

}  // namespace

Model model_from_json(std::string_view text, const std::string& origin) {
  Reader r{origin};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    r.fail(fmt::format("not valid JSON ({})", e.what()));
  }
  if (!doc.is_object()) r.fail("not a model file: the top level is not a JSON object");
  if (r.string(r.field(doc, "format", "the file"), "\"format\"") != "isaac-model")
    r.fail("not a model file: \"format\" is not \"isaac-model\"");
  const json& version = r.field(doc, "version", "the file");
  if (!version.is_number_integer() || version.get<long>() != model_format_version)
    r.fail(fmt::format("model format version {} is not supported (this build reads version {}); retrain the model "
                       "with this version's isaac-tune",
                       version.dump(), model_format_version));
  Model model;
  model.template_name = r.string(r.field(doc, "template", "the file"), "\"template\"");
  model.device = r.string(r.field(doc, "device", "the file"), "\"device\"");
  model.target = r.string(r.field(doc, "target", "the file"), "\"target\"");
  if (auto it = doc.find("compute_capability"); it != doc.end()) {
    if (!it->is_number_integer() || it->get<long>() < 0)
      r.fail(fmt::format("\"compute_capability\" must be a non-negative integer such as 90, got {}", it->dump()));
    model.compute_capability = it->get<int>();
  }
  if (auto it = doc.find("dtype"); it != doc.end()) model.dtype = r.string(*it, "\"dtype\"");
  const json& features = r.field(doc, "features", "the file");
  if (!features.is_array()) r.fail("\"features\" must be an array of names");
  for (const json& f : features) model.features.push_back(r.string(f, "a feature name"));

  const json& sizes_json = r.field(doc, "layer_sizes", "the file");
  if (!sizes_json.is_array() || sizes_json.size() < 2)
    r.fail("\"layer_sizes\" must be an array of at least two sizes (inputs, ..., 1)");
  std::vector<int> sizes;
  for (const json& s : sizes_json) {
    if (!s.is_number_integer() || s.get<long>() <= 0 || s.get<long>() > 1 << 20)
      r.fail(fmt::format("\"layer_sizes\" holds {}, not a positive layer size", s.dump()));
    sizes.push_back(s.get<int>());
  }
  if (sizes.back() != 1) r.fail(fmt::format("\"layer_sizes\" must end with 1 output, it ends with {}", sizes.back()));
  if (size_t(sizes.front()) != model.features.size())
    r.fail(fmt::format("\"layer_sizes\" starts with {} inputs but \"features\" names {}", sizes.front(),
                       model.features.size()));

  model.mlp = Mlp(sizes.front(), std::vector<int>(sizes.begin() + 1, sizes.end() - 1));
  const json& layers = r.field(doc, "layers", "the file");
  if (!layers.is_array() || layers.size() != sizes.size() - 1)
    r.fail(fmt::format("\"layers\" must hold {} layers for layer_sizes {}, it holds {}", sizes.size() - 1,
                       sizes_json.dump(), layers.is_array() ? layers.size() : 0));
  for (size_t l = 0; l < layers.size(); ++l) {
    Layer& layer = model.mlp.layers()[l];
    const std::string where = fmt::format("layer {}", l);
    const json& rows = r.field(layers[l], "weights", where);
    if (!rows.is_array() || rows.size() != size_t(layer.outputs))
      r.fail(fmt::format("{} weights must be {} rows of {} (layer_sizes {}), found {} rows", where, layer.outputs,
                         layer.inputs, sizes_json.dump(), rows.is_array() ? rows.size() : 0));
    for (int o = 0; o < layer.outputs; ++o) {
      auto row = r.numbers(rows[o], layer.inputs, fmt::format("{} weights row {}", where, o));
      std::copy(row.begin(), row.end(), layer.weights.begin() + size_t(o) * layer.inputs);
    }
    layer.bias = r.numbers(r.field(layers[l], "bias", where), layer.outputs, where + " bias");
  }
  const json& norm = r.field(doc, "normalisation", "the file");
  model.mlp.feature_mean = r.numbers(r.field(norm, "feature_mean", "\"normalisation\""), sizes.front(),
                                     "normalisation feature_mean");
  model.mlp.feature_scale = r.numbers(r.field(norm, "feature_scale", "\"normalisation\""), sizes.front(),
                                      "normalisation feature_scale");
  model.mlp.target_mean = r.number(r.field(norm, "target_mean", "\"normalisation\""), "normalisation target_mean");
  model.mlp.target_scale = r.number(r.field(norm, "target_scale", "\"normalisation\""), "normalisation target_scale");
  if (auto it = doc.find("ensemble"); it != doc.end()) {
    if (!it->is_number_integer() || it->get<long>() < 1 || it->get<long>() > 1024)
      r.fail(fmt::format("\"ensemble\" must be the number of networks side by side (1 or more), got {}", it->dump()));
    model.ensemble = it->get<int>();
  }
  try {
    model.mlp.validate();
    check_ensemble(model.mlp, model.ensemble);
  } catch (const InvalidArgument& e) {
    r.fail(e.what());
  }

  if (auto it = doc.find("training"); it != doc.end() && it->is_object()) {
    const json& t = *it;
    model.training.mse = t.value("mse", 0.0);
    model.training.rows = t.value("rows", std::size_t{0});
    model.training.epochs = t.value("epochs", 0);
    model.training.batch_size = t.value("batch_size", 0);
    model.training.learning_rate = t.value("learning_rate", 0.0);
    model.training.seed = t.value("seed", std::uint64_t{0});
    model.training.data = t.value("data", std::string());
  }
  return model;
}

void save_model(const Model& model, const std::string& path) {
  const std::string text = model_to_json(model);
  const std::string temp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::FILE* f = std::fopen(temp.c_str(), "wb");
    if (!f) throw InvalidArgument(fmt::format("cannot write {}", temp));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                    ::fsync(::fileno(f)) == 0;
    if (std::fclose(f) != 0 || !ok) {
      std::remove(temp.c_str());
      throw InvalidArgument(fmt::format("writing {} failed", temp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw InvalidArgument(fmt::format("cannot rename {} to {}: {}", temp, path, ec.message()));
  }
}

Model load_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument(fmt::format("cannot read model file {}", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return model_from_json(buffer.str(), path);
}

}  // namespace isaac::tune
