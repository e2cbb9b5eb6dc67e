#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune export: compiles the GEMMs that a spec file lists ahead of time and writes one
// self-contained C++17 header (PTX, cubins, parameters and launch functions over the CUDA Driver
// API) that a program includes without isaac, LLVM or the CUDA toolkit (docs/aot.md).
// Failures throw isaac::Error, which isaac-tune's main reports.
void add_export_command(CLI::App& app, int& exit_code);

}  // namespace isaac::tune::cli
