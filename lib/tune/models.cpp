#include "tune/embedded_models.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/models.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>

namespace isaac::tune {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

struct Shipped {
  std::string name;
  Model model;
};

// Every embedded model, parsed once; a damaged one is a build error that the tests catch.
const std::vector<Shipped>& shipped() {
  static const std::vector<Shipped> models = [] {
    std::vector<Shipped> out;
    for (const EmbeddedModel& e : embedded_models())
      out.push_back({std::string(e.name), model_from_json(e.json, fmt::format("shipped model {}", e.name))});
    return out;
  }();
  return models;
}

// bf16 kernels are f16's but for the instructions' types and the conversions: the same tiles, bytes
// and tensor-core rates. Where no bf16 model exists, an f16 one ranks them. The shipped f16 GEMM
// model gives the dtype features zero weight (none of its rows varies them), so it scores a bf16 set
// as the same f16 set.
bool stands_in(const std::string& model_dtype, ir::DType dtype) {
  return model_dtype == ir::name(dtype) || (dtype == ir::DType::bf16 && model_dtype == ir::name(ir::DType::f16));
}

std::optional<ModelChoice> choose(std::string_view template_name, ir::DType dtype, std::string_view device,
                                  int compute_capability) {
  const std::string user = user_model_path(template_name, dtype);
  if (std::filesystem::exists(user)) {
    Model model = load_model(user);
    // The file's name promises a template and a dtype: a model of others would rank the space wrongly.
    if (model.template_name != template_name || (!model.dtype.empty() && !stands_in(model.dtype, dtype)))
      throw InvalidArgument(fmt::format("the user model {} is a {} model for {}, but its name says {} for {}: "
                                        "rename it, or train one for {} {}",
                                        user, model.template_name, model.dtype.empty() ? "every dtype" : model.dtype,
                                        template_name, ir::name(dtype), template_name, ir::name(dtype)));
    return ModelChoice{std::move(model), "user model " + user, ""};
  }
  // The same device first, then the nearest compute capability; at each, a model of this dtype before
  // one that stands in for it, before one trained on all of them (whose dtype is one of its features).
  const Shipped* nearest = nullptr;
  auto distance = [&](const Shipped& s) {
    return std::tuple(s.model.device != device, std::abs(s.model.compute_capability - compute_capability),
                      s.model.dtype.empty(), s.model.dtype != ir::name(dtype));
  };
  for (const Shipped& s : shipped()) {
    if (s.model.template_name != template_name || (!s.model.dtype.empty() && !stands_in(s.model.dtype, dtype)))
      continue;
    if (!nearest || distance(s) < distance(*nearest)) nearest = &s;
  }
  if (!nearest) return std::nullopt;
  std::string source = "shipped model " + nearest->name;
  if (!nearest->model.dtype.empty() && nearest->model.dtype != ir::name(dtype))
    source += fmt::format(" (the {} model, standing in for {})", nearest->model.dtype, ir::name(dtype));
  if (nearest->model.device == device) return ModelChoice{nearest->model, source, ""};
  return ModelChoice{nearest->model, source,
                     fmt::format("no {} {} model was trained on a {} (sm_{}); using the one trained on a {} (sm_{}). "
                                 "Train one for this GPU with isaac-tune collect and isaac-tune train --out {}",
                                 template_name, ir::name(dtype), device, compute_capability, nearest->model.device,
                                 nearest->model.compute_capability, user_model_path(template_name, dtype))};
}

}  // namespace

std::string cache_directory() {
  if (auto dir = env("ISAAC_CACHE_DIR"); !dir.empty()) return dir;
  if (auto xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/isaac";
  if (auto home = env("HOME"); !home.empty()) return home + "/.cache/isaac";
  throw Error("no cache directory: set ISAAC_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
}

std::string user_model_path(std::string_view template_name, ir::DType dtype) {
  return fmt::format("{}/models/{}-{}.json", cache_directory(), template_name, ir::name(dtype));
}

std::optional<ModelChoice> find_model(std::string_view template_name, ir::DType dtype, std::string_view device,
                                      int compute_capability) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<ModelChoice>> cache;
  const std::string key = fmt::format("{}|{}|{}|{}", template_name, ir::name(dtype), device, compute_capability);
  std::lock_guard lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, choose(template_name, dtype, device, compute_capability)).first;
    if (it->second && !it->second->warning.empty()) fmt::print(stderr, "isaac: warning: {}\n", it->second->warning);
  }
  return it->second;
}

std::vector<std::string> shipped_models() {
  std::vector<std::string> out;
  for (const Shipped& s : shipped())
    out.push_back(fmt::format("{}: {} {} trained on {} (sm_{}), {} rows, MSE {:.4f}", s.name, s.model.template_name,
                              s.model.dtype, s.model.device, s.model.compute_capability, s.model.training.rows,
                              s.model.training.mse));
  return out;
}

}  // namespace isaac::tune
