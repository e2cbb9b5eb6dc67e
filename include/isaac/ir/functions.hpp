#pragma once
// Element-wise functions a contraction may call (relu(x), maximum(x, y)), by name.
//
// Built in: relu, sigmoid, gelu (tanh approximation), silu (1 argument); maximum, minimum (2).
// To add one: register its float64 definition here (the CPU evaluator and the verifier use it), and
// declare the DSL spelling with `inline constexpr isaac::dsl::Function<"name", arity> name;`.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace isaac::ir {

struct ElementwiseFunction {
  std::string name;
  int arity = 1;
  std::function<double(std::span<const double>)> evaluate;  // takes exactly `arity` values
};

// Adds or replaces a function; thread-safe. Throws InvalidArgument for a name that is not an
// identifier, that is reserved ("sum"), or for an arity below 1.
void register_function(ElementwiseFunction f);
std::optional<ElementwiseFunction> find_function(std::string_view name);
std::vector<std::string> function_names();  // sorted

}  // namespace isaac::ir
