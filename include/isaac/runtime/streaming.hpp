#pragma once
// A kernel that moves bytes and nothing else: it reads `reads` 16-byte vectors from `src` and writes
// `writes` zero vectors to `dst`, grid-stride (PTX, JIT-compiled by the driver; no LLVM). The timer's
// L2 flush runs it with no writes, the benchmarks' memory floor with a GEMM's bytes.
#include <string>

namespace isaac::runtime {

// Entry `isaac_stream(.u64 src, .u64 reads, .u64 dst, .u64 writes)`, counts in 16-byte vectors; dst
// must hold at least one 4-byte word even when `writes` is 0.
const std::string& streaming_ptx();
inline constexpr const char* streaming_kernel_name = "isaac_stream";

}  // namespace isaac::runtime
