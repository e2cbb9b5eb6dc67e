// isaac-info: what isaac sees on this machine. The library's version, whether a CUDA driver could be
// loaded (or why not), every device's properties, and the LLVM target isaac compiles for on it.
// Exits 0 without a driver or a GPU (it says so), except with --jit, whose check then cannot run: 77,
// as the GPU tests exit when they are skipped for want of a GPU. Exits 1 when a driver call fails
// unexpectedly.
#include <isaac/error.hpp>
#include <isaac/lower/smoke.hpp>
#include <isaac/lower/target.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/version.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <string>

using namespace isaac;

namespace {

constexpr int exit_skipped = 77;  // ctest's SKIP_RETURN_CODE for the GPU tests (test/CMakeLists.txt)

std::string bytes(std::int64_t n) {
  if (n >= (std::int64_t{1} << 30)) return fmt::format("{:.1f} GiB", double(n) / double(1 << 30));
  if (n >= (1 << 20)) return fmt::format("{:.1f} MiB", double(n) / double(1 << 20));
  if (n >= (1 << 10)) return fmt::format("{:.1f} KiB", double(n) / double(1 << 10));
  return fmt::format("{} B", n);
}

void print_device(const runtime::DeviceInfo& d) {
  lower::Target target = lower::target_for_compute_capability(d.compute_capability());
  // The peak memory bandwidth the spec sheet would quote: DDR, so two transfers per clock.
  double bandwidth_gbs = 2.0 * d.memory_clock_khz * 1e3 * (d.memory_bus_bits / 8.0) / 1e9;
  fmt::print("device {}: {}\n", d.ordinal, d.name);
  fmt::print("  compute capability     {}.{}\n", d.cc_major, d.cc_minor);
  fmt::print("  LLVM target            {}{}\n", target.name(),
             target.sm != d.compute_capability() ? fmt::format(" (nearest LLVM 19 supports for sm_{})",
                                                               d.compute_capability())
                                                 : "");
  fmt::print("  multiprocessors        {}\n", d.sm_count);
  fmt::print("  threads per block      {} (warp {})\n", d.max_threads_per_block, d.warp_size);
  fmt::print("  shared memory / block  {} ({} with opt-in)\n", bytes(d.max_shared_per_block),
             bytes(d.max_shared_per_block_optin));
  fmt::print("  shared memory / SM     {}\n", bytes(d.max_shared_per_sm));
  fmt::print("  registers              {} per block, {} per SM\n", d.registers_per_block, d.registers_per_sm);
  fmt::print("  L2 cache               {}\n", bytes(d.l2_bytes));
  fmt::print("  clocks                 SM {} MHz, memory {} MHz\n", d.clock_khz / 1000, d.memory_clock_khz / 1000);
  fmt::print("  global memory          {} ({}-bit bus, {:.0f} GB/s peak)\n", bytes(d.global_memory_bytes),
             d.memory_bus_bits, bandwidth_gbs);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"isaac-info: the isaac version, the CUDA driver and the devices isaac would compile for"};
  bool check_jit = false;
  app.add_flag("--jit", check_jit, "also JIT-load the smoke kernel's PTX on device 0");
  CLI11_PARSE(app, argc, argv);

  fmt::print("isaac {}\n", version());
  std::string why;
  if (!runtime::driver_available(&why)) {
    fmt::print("CUDA driver: not available: {}\n", why);
    fmt::print("no GPU: isaac can still build IR and emit PTX here, but not run kernels\n");
    if (!check_jit) return 0;
    fmt::print(stderr, "isaac-info: --jit skipped: no CUDA driver to JIT-load the smoke kernel with\n");
    return exit_skipped;
  }
  try {
    int v = runtime::driver_version();
    int count = runtime::device_count();
    fmt::print("CUDA driver: {}.{} ({} device{})\n", v / 1000, (v % 1000) / 10, count, count == 1 ? "" : "s");
    if (count == 0) {
      fmt::print("no GPU: the driver sees no device\n");
      if (!check_jit) return 0;
      fmt::print(stderr, "isaac-info: --jit skipped: no device to JIT-load the smoke kernel on\n");
      return exit_skipped;
    }
    for (int i = 0; i < count; ++i) {
      runtime::DeviceInfo d = runtime::device_info(i);
      print_device(d);
      // The runtime's modules live in device 0's primary context for now.
      if (check_jit && i == 0) {
        auto module = runtime::Module::from_ptx(
            lower::emit_axpy_ptx(lower::target_for_compute_capability(d.compute_capability())));
        auto attrs = module.kernel(lower::axpy_kernel_name).attributes();
        fmt::print("  JIT smoke kernel       ok ({} registers, binary sm_{})\n", attrs.registers, attrs.binary_version);
      }
    }
  } catch (const Error& e) {
    fmt::print(stderr, "isaac-info: {}\n", e.what());
    return 1;
  }
  return 0;
}
