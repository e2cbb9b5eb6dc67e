#pragma once
#include <CLI/CLI.hpp>

namespace isaac::tune::cli {

// isaac-tune cache show|clear|export|import: the tuning database and the kernel cache.
void add_cache_command(CLI::App& app, int& exit_code);

}  // namespace isaac::tune::cli
