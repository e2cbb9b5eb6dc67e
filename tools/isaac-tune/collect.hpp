#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune collect: random GEMM inputs x parameter sets from the learned sampler, compiled on all
// cores and timed on the GPU (or only compiled, with --compile-only), one CSV row per kernel.
void add_collect_command(CLI::App& app);

// isaac-tune sampler: the learned sampler's acceptance rate against uniform proposals (paper Table 1).
void add_sampler_command(CLI::App& app);

}  // namespace isaac::tune::cli
