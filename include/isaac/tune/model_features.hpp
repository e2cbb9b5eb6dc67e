#pragma once
// A model carried over to a later version's feature list. A version that adds features (0.1.25: the
// CONV occupancy features) would otherwise refuse every model trained before it, the shipped ones
// and the users' alike. The added features get zero weights and an identity normalisation, so the
// model predicts exactly what it predicted before, whatever they hold; retraining is what lets it
// use them (isaac-tune extend, docs/tuning.md).
#include <isaac/tune/model_file.hpp>

#include <string>
#include <vector>

namespace isaac::tune {

// `model` with inputs `features`, in that order: every feature of the model must be among them
// (InvalidArgument naming the first that is not: dropping one would change the predictions).
Model with_features(const Model& model, const std::vector<std::string>& features);

}  // namespace isaac::tune
