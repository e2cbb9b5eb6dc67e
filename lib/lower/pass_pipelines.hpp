#pragma once
// The LLVM pass pipelines that run before the NVPTX backend, as LLVM's textual pipeline syntax.
#include "lower/nvptx_backend.hpp"

#include <string>

namespace isaac::lower {

// light: the passes of LLVM 19's default<O1> for nvptx64 that change some GEMM kernel's PTX, which
// is byte for byte what default<O1> gives and a fifth less work (docs/emission.md, "Passes that
// change nothing"); full: default<O3> as it is.
const std::string& pass_pipeline(Optimisation level);

}  // namespace isaac::lower
