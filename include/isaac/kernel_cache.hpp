#pragma once
// The kernel cache (DESIGN.md, "Tuning"): compiled kernels on disk, so that a second process with the
// same problems emits nothing. One file per kernel under $ISAAC_KERNEL_CACHE_DIR (default
// <cache directory>/kernels), named by a hash of the key: isaac's version, the template, the problem
// (ir::to_string), the parameters, the target and the split mode. A file holds its key (a hash
// collision is a miss), the PTX and, where ptxas made one, the cubin. Files are written to a
// temporary name and renamed, so a reader never sees half a kernel; a damaged file is a miss, is
// removed and counted. ISAAC_NO_CACHE=1 turns the cache off.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/lower/target.hpp>

#include <cstddef>
#include <string>

namespace isaac {

struct KernelCacheStats {
  std::size_t hits = 0, misses = 0, stores = 0, damaged = 0;
};
// Counts of this process.
KernelCacheStats kernel_cache_stats();
std::string kernel_cache_directory();

// The GEMM (CONV) kernels for the problem, from the cache or emitted (and assembled with ptxas into a cubin
// when `cubin` is set and ptxas is installed) and then stored.
lower::GemmKernel cached_gemm_kernel(const ir::Gemm& problem, const lower::GemmParams& params,
                                     const lower::Target& target, lower::SplitMode mode, bool cubin);
lower::ConvKernel cached_conv_kernel(const ir::Conv& problem, const lower::ConvParams& params,
                                     const lower::ConvEpilogue& epilogue, const lower::Target& target, bool cubin);

}  // namespace isaac
