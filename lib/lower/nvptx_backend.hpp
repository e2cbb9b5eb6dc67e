#pragma once
// The one place that drives LLVM's NVPTX backend: module set-up, the optimisation pipeline and PTX emission.
#include <isaac/lower/target.hpp>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

namespace isaac::lower {

// An empty module with the NVPTX64 triple and data layout for `target`.
std::unique_ptr<llvm::Module> make_nvptx_module(llvm::LLVMContext& context, const std::string& name,
                                                const Target& target);
// Marks `fn` as a kernel entry point; max_threads > 0 adds .maxntid (a register budget for ptxas),
// min_blocks > 0 adds .minnctapersm.
void mark_kernel(llvm::Function& fn, int max_threads = 0, int min_blocks = 0);
// Marks byval parameters (0-based indices) as grid constants: the kernel reads them in the parameter
// space, where a TMA copy can find a tensor map, instead of a local copy.
void mark_grid_constants(llvm::Function& fn, const std::vector<int>& params);
// How much LLVM optimises before ptxas does (docs/emission.md; the pass lists: pass_pipelines.hpp):
//  - light: O1's passes, and llc at its default level. Every GEMM sweep winner ran as fast on the
//    H100 as with full, and emission takes a fifth less time;
//  - full: O3's passes and llc -O3. The CONV kernels need it: O1 left up to 29% more PTX instructions
//    in their address arithmetic, and two CONV winners ran 5-9% slower.
enum class Optimisation { light, full };
// Verifies, optimises and returns the PTX. Throws isaac::Error on invalid IR.
std::string compile_to_ptx(llvm::Module& module, const Target& target, Optimisation level);

}  // namespace isaac::lower
