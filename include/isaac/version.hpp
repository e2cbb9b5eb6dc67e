#pragma once
#include <string>

namespace isaac {
// The library's version, "major.minor.patch"; part of every cache key.
std::string version();
}  // namespace isaac
