#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune extend: a model file carried over to this version's features (tune/model_features.hpp).
void add_extend_command(CLI::App& app, int& exit_code);

}  // namespace isaac::tune::cli
