#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune search: the model's ranking of the whole legal space for one GEMM, with its timing;
// with --gpu, the top k re-benchmarked on the GPU (isaac::choose_gemm).
void add_search_command(CLI::App& app, int& exit_code);

}  // namespace isaac::tune::cli
