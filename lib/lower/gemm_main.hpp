#pragma once
// GEMM's main kernel emitted into a module that holds other kernels: CONV's WG=2 multiplies its
// Winograd planes with it, beside its transforms.
#include <isaac/lower/gemm.hpp>

#include <llvm/IR/Module.h>

#include <string>

namespace isaac::lower {

// Emits the main kernel of a set that check_gemm_params accepts with KG = 1 and TC != 2 (which needs
// another target); returns its name.
std::string emit_gemm_main(llvm::Module& module, const ir::Gemm& problem, const GemmParams& p, int sm);

}  // namespace isaac::lower
