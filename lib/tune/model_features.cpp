#include <isaac/error.hpp>
#include <isaac/tune/model_features.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace isaac::tune {

Model with_features(const Model& model, const std::vector<std::string>& features) {
  const std::size_t old_inputs = model.features.size(), new_inputs = features.size();
  // Where each new input was in the model, or old_inputs for an added one.
  std::vector<std::size_t> from(new_inputs);
  for (std::size_t i = 0; i < new_inputs; ++i)
    from[i] = std::size_t(std::find(model.features.begin(), model.features.end(), features[i]) - model.features.begin());
  for (const std::string& name : model.features)
    if (std::find(features.begin(), features.end(), name) == features.end())
      throw InvalidArgument(fmt::format(
          "the model's feature \"{}\" is not among the {} features it is to take: a model can gain features, not "
          "lose them",
          name, new_inputs));
  Model out = model;
  out.features = features;
  Mlp& mlp = out.mlp;
  mlp.feature_mean.assign(new_inputs, 0.0);
  mlp.feature_scale.assign(new_inputs, 1.0);
  Layer& first = mlp.layers().front();
  const Layer& old_first = model.mlp.layers().front();
  first.inputs = int(new_inputs);
  first.weights.assign(std::size_t(first.outputs) * new_inputs, 0.0);
  for (std::size_t i = 0; i < new_inputs; ++i) {
    if (from[i] == old_inputs) continue;
    mlp.feature_mean[i] = model.mlp.feature_mean[from[i]];
    mlp.feature_scale[i] = model.mlp.feature_scale[from[i]];
    for (int o = 0; o < first.outputs; ++o)
      first.weights[std::size_t(o) * new_inputs + i] = old_first.weights[std::size_t(o) * old_inputs + from[i]];
  }
  mlp.validate();
  return out;
}

}  // namespace isaac::tune
