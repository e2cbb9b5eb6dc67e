#pragma once
// ptxas on a compile worker, for either template of `isaac-tune collect`.
#include "collect_csv.hpp"
#include "collect_template.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace isaac::tune::cli {

// Assembles `ptx` into `cubin` and records the main kernel's registers and stack in the row. With
// --compile-only, a ptxas failure fails the row. On a GPU run the kernel keeps its PTX for the
// driver's JIT instead, so that a ptxas older than the PTX LLVM writes costs speed, not the run: the
// first such failure is reported on stderr and `fallbacks` counts them.
void assemble_on_worker(const std::string& ptx, const std::string& main_name, const CompileSettings& settings,
                        std::vector<char>& cubin, ResultRow& row, std::atomic<std::uint64_t>& fallbacks);

std::string fallback_note(const std::atomic<std::uint64_t>& fallbacks);

}  // namespace isaac::tune::cli
