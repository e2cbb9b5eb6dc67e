#pragma once
// The one place that drives LLVM's NVPTX backend: module set-up, the O3 pipeline and PTX emission.
#include <isaac/lower/target.hpp>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

namespace isaac::lower {

// An empty module with the NVPTX64 triple and data layout for `target`.
std::unique_ptr<llvm::Module> make_nvptx_module(llvm::LLVMContext& context, const std::string& name,
                                                const Target& target);
// Marks `fn` as a kernel entry point; max_threads > 0 adds .maxntid (a register budget for ptxas),
// min_blocks > 0 adds .minnctapersm.
void mark_kernel(llvm::Function& fn, int max_threads = 0, int min_blocks = 0);
// Verifies, runs the O3 pipeline and returns the PTX. Throws isaac::Error on invalid IR.
std::string compile_to_ptx(llvm::Module& module, const Target& target);

}  // namespace isaac::lower
