// Entry point of the GPU test executables: without a CUDA driver they print why and exit 77,
// which ctest reports as "skipped" rather than passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <isaac/runtime/runtime.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  std::string why;
  if (!isaac::runtime::driver_available(&why) || isaac::runtime::device_count() == 0) {
    std::printf("SKIPPED: GPU tests need a CUDA device: %s\n", why.empty() ? "no device found" : why.c_str());
    return 77;
  }
  auto info = isaac::runtime::device_info(0);
  std::printf("GPU tests on %s (sm_%d%d, %d SMs), driver %d\n", info.name.c_str(), info.cc_major, info.cc_minor,
              info.sm_count, isaac::runtime::driver_version());
  doctest::Context context(argc, argv);
  return context.run();
}
