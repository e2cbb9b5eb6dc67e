#pragma once
// Runs NVIDIA's ptxas (from PATH, or $ISAAC_PTXAS) on PTX text: the resource report without a GPU.
#include <isaac/lower/target.hpp>

#include <string>
#include <vector>

namespace isaac::lower {

struct PtxasReport {
  bool ok = false;
  int registers = 0;
  int spill_stores = 0;  // bytes
  int spill_loads = 0;   // bytes
  int stack_bytes = 0;
  int shared_bytes = 0;  // static shared memory
  std::string log;       // ptxas's own output (errors, or the -v report)
};

bool ptxas_available();
// Assembles `ptx` for `target` and reports the resources of the kernel named `kernel`
// (the first kernel when empty). Throws Error when ptxas cannot be run. With `cubin`, also returns
// the machine code, which the driver loads without compiling (ptxas runs in a process of its own,
// so several assemble in parallel where the driver's JIT would take them one at a time).
PtxasReport run_ptxas(const std::string& ptx, const Target& target, const std::string& kernel = {},
                      std::vector<char>* cubin = nullptr);

// Runs ptxas on `ptx` into `cubin` where ptxas is installed. Returns what went wrong, or nothing:
// "" when the cubin was made or ptxas is not installed (cubin left empty: the driver's JIT loads the
// PTX), else ptxas's complaint (cubin empty too; the caller says whether that is an error).
std::string assemble(const std::string& ptx, const Target& target, std::vector<char>& cubin);

}  // namespace isaac::lower
