#pragma once
// A minimal kernel built with LLVM's IRBuilder: y[i] = a * x[i] + y[i] for i < n (f32).
// It proves the whole path (IR -> NVPTX -> PTX -> driver JIT -> launch) without any template.
#include <isaac/lower/target.hpp>

#include <string>

namespace isaac::lower {

inline constexpr const char* axpy_kernel_name = "isaac_axpy_f32";
// Kernel signature: (float a, const float* x, float* y, int32 n); one thread per element.
std::string emit_axpy_ptx(const Target& target);

}  // namespace isaac::lower
