#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune search: the model's ranking of the whole legal space for one GEMM, with its timing, or
// (--search annealing) the pruned list that simulated annealing walks; with --gpu, the search run on
// the GPU through isaac::choose_gemm (--search model, annealing or autotune).
void add_search_command(CLI::App& app, int& exit_code);

}  // namespace isaac::tune::cli
