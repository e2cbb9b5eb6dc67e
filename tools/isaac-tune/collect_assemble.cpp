#include "collect_assemble.hpp"

#include <isaac/lower/ptxas.hpp>

#include <fmt/format.h>

namespace isaac::tune::cli {

void assemble_on_worker(const std::string& ptx, const std::string& main_name, const CompileSettings& settings,
                        std::vector<char>& cubin, ResultRow& row, std::atomic<std::uint64_t>& fallbacks) {
  if (!settings.ptxas) return;
  std::string failure;
  try {
    const auto report = lower::run_ptxas(ptx, settings.target, main_name, &cubin);
    if (!report.ok) {
      failure = "ptxas: " + report.log;
    } else {
      row.registers = report.registers;
      row.local_bytes = report.stack_bytes;
    }
  } catch (const std::exception& e) {
    failure = std::string("ptxas: ") + e.what();
  }
  if (failure.empty()) return;
  cubin.clear();
  if (settings.compile_only) {
    row.status = "compile";
    row.reason = failure;
  } else if (fallbacks++ == 0) {
    fmt::print(stderr, "\nisaac-tune collect: {} (plan row {}); this and later such kernels go to the driver's JIT\n",
               one_line(failure, 400), row.index);
  }
}

std::string fallback_note(const std::atomic<std::uint64_t>& fallbacks) {
  return fallbacks ? fmt::format("  ptxas failed on {} kernels, which were loaded through the driver's JIT instead\n",
                                 fallbacks.load())
                   : std::string{};
}

}  // namespace isaac::tune::cli
