#include <isaac/error.hpp>
#include <isaac/ir/functions.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>

namespace isaac::ir {

namespace {

std::map<std::string, ElementwiseFunction, std::less<>> builtin_functions() {
  std::map<std::string, ElementwiseFunction, std::less<>> functions;
  auto add = [&](std::string name, int arity, std::function<double(std::span<const double>)> f) {
    functions[name] = ElementwiseFunction{name, arity, std::move(f)};
  };
  add("relu", 1, [](std::span<const double> x) { return x[0] > 0 ? x[0] : 0.0; });
  add("sigmoid", 1, [](std::span<const double> x) { return 1 / (1 + std::exp(-x[0])); });
  add("gelu", 1, [](std::span<const double> x) {
    const double sqrt_2_over_pi = 0.7978845608028654;
    return 0.5 * x[0] * (1 + std::tanh(sqrt_2_over_pi * (x[0] + 0.044715 * x[0] * x[0] * x[0])));
  });
  add("silu", 1, [](std::span<const double> x) { return x[0] / (1 + std::exp(-x[0])); });
  add("maximum", 2, [](std::span<const double> x) { return std::max(x[0], x[1]); });
  add("minimum", 2, [](std::span<const double> x) { return std::min(x[0], x[1]); });
  return functions;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, ElementwiseFunction, std::less<>> functions = builtin_functions();
};

Registry& registry() {
  static Registry r;
  return r;
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

}  // namespace

void register_function(ElementwiseFunction f) {
  if (!is_identifier(f.name) || f.name == "sum")
    throw InvalidArgument("cannot register element-wise function '" + f.name +
                          "': the name must be an identifier other than 'sum'");
  if (f.arity < 1)
    throw InvalidArgument("cannot register element-wise function '" + f.name + "' with arity " +
                          std::to_string(f.arity) + ": it must take at least one argument");
  if (!f.evaluate)
    throw InvalidArgument("cannot register element-wise function '" + f.name + "' without a definition");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.functions[f.name] = std::move(f);
}

std::optional<ElementwiseFunction> find_function(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto found = r.functions.find(name);
  if (found == r.functions.end()) return std::nullopt;
  return found->second;
}

std::vector<std::string> function_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, f] : r.functions) names.push_back(name);
  return names;
}

}  // namespace isaac::ir
