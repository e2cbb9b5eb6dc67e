#pragma once
// Google Benchmark's own flags (what follows "--" on the command line), and how the modes register a
// benchmark.
#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <vector>

namespace isaac::bench {

// Initializes Google Benchmark with `args` (after argv[0]); false when some are not its flags (it says
// which on stderr).
bool init_google_benchmark(const std::vector<std::string>& args);

// A benchmark whose body times itself (manual time) in one iteration, reported in microseconds: each
// body runs its own warm-up and repeats, with the L2 flushed between them.
void register_timed(const std::string& name, std::function<void(benchmark::State&)> body);

}  // namespace isaac::bench
