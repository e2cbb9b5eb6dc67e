#pragma once
// The GPU architecture a kernel is compiled for.
#include <string>

namespace isaac::lower {

struct Target {
  int sm = 90;                 // compute capability x10: 70, 75, 80, 86, 89, 90
  bool arch_specific = false;  // sm_90a: wgmma and the other Hopper-only instructions
  std::string name() const;    // "sm_90" or "sm_90a"
};

// Parses "sm_80", "sm_90a", "80" or "90a"; throws InvalidArgument naming what is allowed.
Target parse_target(const std::string& text);
// The target for a device of compute capability `cc` (e.g. 90), clamped to what LLVM 19 supports.
Target target_for_compute_capability(int cc);

}  // namespace isaac::lower
