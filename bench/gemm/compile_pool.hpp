#pragma once
// Compiles GEMM kernels on all cores: each worker constructs CompiledGemm objects (LLVM emission, then
// the driver's JIT) for the next parameter set in line. A failure is kept with its reason, never thrown.
#include <isaac/gemm.hpp>

#include <optional>
#include <string>
#include <vector>

namespace isaac::bench {

struct Compiled {
  std::optional<CompiledGemm> gemm;
  std::string error;   // why it did not compile (when !gemm)
  double wall_ms = 0;  // emission + JIT, on one core
};

// One entry per parameter set, in order. `threads` <= 0 means all cores.
std::vector<Compiled> compile_all(const ir::Gemm& problem, const std::vector<lower::GemmParams>& params,
                                  lower::SplitMode mode, int threads);

// The same for kernels of different problems (one problem per parameter set).
std::vector<Compiled> compile_all(const std::vector<ir::Gemm>& problems, const std::vector<lower::GemmParams>& params,
                                  lower::SplitMode mode, int threads);

int default_threads(int requested);
lower::SplitMode parse_split_mode(const std::string& text);
// A failure's message on one line, at most `limit` characters (JIT logs can be long).
std::string one_line(const std::string& text, std::size_t limit = 400);

}  // namespace isaac::bench
