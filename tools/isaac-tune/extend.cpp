#include "extend.hpp"

#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/model_features.hpp>

#include <fmt/format.h>

#include <memory>

namespace isaac::tune::cli {

void add_extend_command(CLI::App& app, int& exit_code) {
  struct Flags {
    std::string model, out;
  };
  auto flags = std::make_shared<Flags>();
  auto* extend = app.add_subcommand(
      "extend", "rewrite a model trained by an earlier version for this version's features: the features it lacks get "
                "zero weights, so it predicts what it did before (train it again to use them)");
  extend->add_option("--model", flags->model, "model file to read")->required();
  extend->add_option("--out", flags->out, "model file to write (may be the same)")->required();
  extend->callback([flags, &exit_code] {
    const Model model = load_model(flags->model);
    const std::vector<std::string>& features =
        model.template_name == "conv" ? conv_feature_names() : gemm_feature_names();
    if (model.features == features) {
      fmt::print("{} already has this version's {} {} features\n", flags->model, features.size(), model.template_name);
      if (flags->out != flags->model) save_model(model, flags->out);
      exit_code = 0;
      return;
    }
    save_model(with_features(model, features), flags->out);
    fmt::print("{}: {} {} features, {} of them new with zero weights; wrote {}\n", flags->model, features.size(),
               model.template_name, features.size() - model.features.size(), flags->out);
    exit_code = 0;
  });
}

}  // namespace isaac::tune::cli
