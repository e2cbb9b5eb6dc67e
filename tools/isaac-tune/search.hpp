#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune search: the model's ranking of the whole legal space for one GEMM (M N K) or, with
// --template conv, one convolution (N C H W K R S), with its timing and the candidates the
// re-benchmark would time; --show places given sets (a brute-force winner, say) in that ranking.
// GEMM only: (--search annealing) the pruned list that simulated annealing walks, and with --gpu the
// search run on the GPU through isaac::choose_gemm (--search model, annealing or autotune).
void add_search_command(CLI::App& app, int& exit_code);

}  // namespace isaac::tune::cli
