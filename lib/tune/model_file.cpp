#include <isaac/error.hpp>
#include <isaac/ir/dtype.hpp>
#include <isaac/tune/ensemble.hpp>
#include <isaac/tune/model_file.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
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
  try {
    return doc.dump(1) + "\n";
  } catch (const json::exception& e) {  // a name that is not UTF-8
    throw InvalidArgument(fmt::format("cannot write the model as JSON ({})", e.what()));
  }
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

// The size of a network this build loads: far above any trained one (36 -> 640 -> 1, ensembles of
// ten), far below what would exhaust memory.
constexpr long max_layer_size = 1 << 20;
constexpr std::size_t max_parameters = std::size_t{1} << 26;

// Layer sizes and the weight arrays they describe must agree before the network is built: the
// sizes alone would have it allocate whatever they say.
void check_layer_shapes(const Reader& r, const json& layers, const std::vector<int>& sizes, const json& sizes_json) {
  if (!layers.is_array() || layers.size() != sizes.size() - 1)
    r.fail(fmt::format("\"layers\" must hold {} layers for layer_sizes {}, it holds {}", sizes.size() - 1,
                       sizes_json.dump(), layers.is_array() ? layers.size() : 0));
  std::size_t parameters = 0;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const int inputs = sizes[l], outputs = sizes[l + 1];
    const std::string where = fmt::format("layer {}", l);
    const json& rows = r.field(layers[l], "weights", where);
    if (!rows.is_array() || rows.size() != size_t(outputs))
      r.fail(fmt::format("{} weights must be {} rows of {} (layer_sizes {}), found {} rows", where, outputs, inputs,
                         sizes_json.dump(), rows.is_array() ? rows.size() : 0));
    for (int o = 0; o < outputs; ++o) {
      const json& row = rows[size_t(o)];
      if (!row.is_array() || row.size() != size_t(inputs))
        r.fail(fmt::format("{} weights row {} must hold {} values (layer_sizes {}), found {}", where, o, inputs,
                           sizes_json.dump(), row.is_array() ? fmt::format("{}", row.size()) : row.type_name()));
    }
    parameters += (size_t(inputs) + 1) * size_t(outputs);
  }
  if (parameters > max_parameters)
    r.fail(fmt::format("layer_sizes {} make {} parameters; this build loads at most {}", sizes_json.dump(), parameters,
                       max_parameters));
}

// The optional "training" block: what it holds must have the types TrainingInfo gives it.
TrainingInfo training_info(const Reader& r, const json& t) {
  if (!t.is_object()) r.fail(fmt::format("\"training\" must be a JSON object, got {}", t.type_name()));
  auto count = [&](const char* name, std::uint64_t largest) -> std::uint64_t {
    auto it = t.find(name);
    if (it == t.end()) return 0;
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() > largest)
      r.fail(fmt::format("\"training\" \"{}\" must be an integer from 0 to {}, got {}", name, largest, it->dump()));
    return it->get<std::uint64_t>();
  };
  auto real = [&](const char* name) {
    auto it = t.find(name);
    return it == t.end() ? 0.0 : r.number(*it, fmt::format("\"training\" \"{}\"", name));
  };
  TrainingInfo info;
  info.mse = real("mse");
  info.rows = count("rows", std::numeric_limits<std::size_t>::max());
  info.epochs = int(count("epochs", std::numeric_limits<int>::max()));
  info.batch_size = int(count("batch_size", std::numeric_limits<int>::max()));
  info.learning_rate = real("learning_rate");
  info.seed = count("seed", std::numeric_limits<std::uint64_t>::max());
  if (auto it = t.find("data"); it != t.end()) info.data = r.string(*it, "\"training\" \"data\"");
  return info;
}

Model read_model(const Reader& r, const json& doc) {
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
  // Search ranks by the prediction as the natural log of TFLOP/s; another target would rank wrongly.
  if (model.target != model_target)
    r.fail(fmt::format("\"target\" is \"{}\": this build's models predict \"{}\" (the natural log of TFLOP/s)",
                       model.target, model_target));
  if (auto it = doc.find("compute_capability"); it != doc.end()) {
    constexpr long largest_compute_capability = 1000;
    if (!it->is_number_integer() || it->get<long>() < 0 || it->get<long>() >= largest_compute_capability)
      r.fail(fmt::format("\"compute_capability\" must be an integer from 0 to {} such as 90, got {}",
                         largest_compute_capability - 1, it->dump()));
    model.compute_capability = it->get<int>();
  }
  if (auto it = doc.find("dtype"); it != doc.end()) {
    model.dtype = r.string(*it, "\"dtype\"");
    if (!model.dtype.empty()) {
      try {
        ir::parse_dtype(model.dtype);
      } catch (const InvalidArgument& unknown) {
        r.fail(fmt::format("\"dtype\": {} (or \"\" for a model of every dtype)", unknown.what()));
      }
    }
  }
  const json& features = r.field(doc, "features", "the file");
  if (!features.is_array()) r.fail("\"features\" must be an array of names");
  for (const json& f : features) model.features.push_back(r.string(f, "a feature name"));

  const json& sizes_json = r.field(doc, "layer_sizes", "the file");
  if (!sizes_json.is_array() || sizes_json.size() < 2)
    r.fail("\"layer_sizes\" must be an array of at least two sizes (inputs, ..., 1)");
  std::vector<int> sizes;
  for (const json& s : sizes_json) {
    if (!s.is_number_integer() || s.get<long>() <= 0 || s.get<long>() > max_layer_size)
      r.fail(fmt::format("\"layer_sizes\" holds {}, not a positive layer size (at most {})", s.dump(),
                         max_layer_size));
    sizes.push_back(s.get<int>());
  }
  if (sizes.back() != 1) r.fail(fmt::format("\"layer_sizes\" must end with 1 output, it ends with {}", sizes.back()));
  if (size_t(sizes.front()) != model.features.size())
    r.fail(fmt::format("\"layer_sizes\" starts with {} inputs but \"features\" names {}", sizes.front(),
                       model.features.size()));
  const json& layers = r.field(doc, "layers", "the file");
  check_layer_shapes(r, layers, sizes, sizes_json);

  model.mlp = Mlp(sizes.front(), std::vector<int>(sizes.begin() + 1, sizes.end() - 1));
  for (size_t l = 0; l < layers.size(); ++l) {
    Layer& layer = model.mlp.layers()[l];
    const std::string where = fmt::format("layer {}", l);
    const json& rows = layers[l].at("weights");
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
  if (auto it = doc.find("training"); it != doc.end()) model.training = training_info(r, *it);
  return model;
}

}  // namespace

Model model_from_json(std::string_view text, const std::string& origin) {
  Reader r{origin};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond double (1e999)
    r.fail(fmt::format("not valid JSON ({})", e.what()));
  }
  try {
    return read_model(r, doc);
  } catch (const json::exception& e) {  // every access is checked first; this is the net under them
    r.fail(fmt::format("not a readable model file ({})", e.what()));
  }
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
