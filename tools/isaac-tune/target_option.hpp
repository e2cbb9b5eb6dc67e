#pragma once
// A compute-capability option (--sm 90, --compute-capability 90) read as the target that isaac
// compiles for: values that lower::parse_target refuses (sm_50, sm_100, -1) are refused, not clamped.
#include <isaac/error.hpp>
#include <isaac/lower/target.hpp>

#include <fmt/format.h>

#include <string>

namespace isaac::tune::cli {

inline lower::Target target_option(int compute_capability, const char* option) {
  try {
    return lower::parse_target(std::to_string(compute_capability));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("{} {}: {}", option, compute_capability, e.what()));
  }
}

}  // namespace isaac::tune::cli
