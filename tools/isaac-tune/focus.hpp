#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune focus: a second round of training data where the model is least reliable, at the top
// of its own ranking. For random GEMM inputs it times the model's best sets (and a sample of the
// next ones), so that the next model learns which of the sets it favours are really fast.
void add_focus_command(CLI::App& app, int& exit_code);

}  // namespace isaac::tune::cli
