#pragma once
// Google Benchmark's own flags (what follows "--" on the command line).
#include <string>
#include <vector>

namespace isaac::bench {

// Initializes Google Benchmark with `args` (after argv[0]); false when some are not its flags (it says
// which on stderr).
bool init_google_benchmark(const std::vector<std::string>& args);

}  // namespace isaac::bench
