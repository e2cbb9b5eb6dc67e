#include <isaac/version.hpp>

namespace isaac {
std::string version() { return ISAAC_VERSION; }
}  // namespace isaac
