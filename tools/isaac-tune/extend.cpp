#include "extend.hpp"
#include "dataset.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/model_features.hpp>

#include <fmt/format.h>

#include <memory>

namespace isaac::tune::cli {

void add_extend_command(CLI::App& app, int& exit_code) {
  struct Flags {
    std::string model, out;
    bool unvaried = false;
  };
  auto flags = std::make_shared<Flags>();
  auto* extend = app.add_subcommand(
      "extend", "rewrite a model trained by an earlier version for this version's features: the features it lacks get "
                "zero weights, so it predicts what it did before (train it again to use them)");
  extend->add_option("--model", flags->model, "model file to read")->required()->check(CLI::ExistingFile);
  extend->add_option("--out", flags->out, "model file to write (may be the same)")->required();
  extend->add_flag("--unvaried", flags->unvaried,
                   "also zero the weights of the features that none of the model's training rows varies (read "
                   "from the data files it records), as train does since 0.1.30: a batch count or a kind of "
                   "kernel the data never had then moves no prediction by a guess");
  extend->callback([flags, &exit_code] {
    Model model = load_model(flags->model);
    const std::vector<std::string>& features =
        model.template_name == "conv" ? conv_feature_names() : gemm_feature_names();
    const std::size_t added = features.size() - std::min(features.size(), model.features.size());
    if (model.features != features) model = with_features(model, features);
    std::string zeroed;
    if (flags->unvaried) {
      if (model.training.data.empty())
        throw InvalidArgument(fmt::format("{} records no training data: --unvaried needs its rows", flags->model));
      const Dataset data = load_dataset(model.training.data, model.dtype);
      if (data.template_name != model.template_name)
        throw InvalidArgument(fmt::format("{} is a {} model and its data holds {} rows", flags->model,
                                          model.template_name, data.template_name));
      for (std::size_t f : zero_unvaried_inputs(model.mlp, data.samples))
        zeroed += (zeroed.empty() ? "" : ", ") + features[f];
      zeroed = fmt::format("{} ({} {} rows)", zeroed.empty() ? "none" : zeroed, data.rows.size(),
                           model.dtype.empty() ? "training" : model.dtype);
    }
    save_model(model, flags->out);
    fmt::print("{}: {} {} features, {} of them new with zero weights{}; wrote {}\n", flags->model, features.size(),
               model.template_name, added,
               flags->unvaried ? ", zeroed as unvaried in its training data: " + zeroed : "",
               flags->out);
    exit_code = 0;
  });
}

}  // namespace isaac::tune::cli
