// The whole path on a real GPU: LLVM IR -> NVPTX -> PTX for the device's architecture -> driver JIT
// -> launch -> result checked element by element against the CPU. Also the runtime's error paths
// (a malformed PTX reports the JIT log), kernel attributes and the benchmark timer.
#include <doctest/doctest.h>
#include <isaac/lower/smoke.hpp>
#include <isaac/lower/target.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/timer.hpp>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace isaac;

namespace {

lower::Target device_target() {
  return lower::target_for_compute_capability(runtime::device_info(0).compute_capability());
}

// One module per process: JIT-compiling is the slow part and every test case uses the same kernel.
const runtime::Module& axpy_module() {
  static runtime::Module module = runtime::Module::from_ptx(lower::emit_axpy_ptx(device_target()));
  return module;
}

void launch_axpy(const runtime::Kernel& kernel, float a, const runtime::Buffer& x, const runtime::Buffer& y, int n,
                 const runtime::Stream& stream) {
  runtime::DevicePtr px = x.ptr(), py = y.ptr();
  void* args[] = {&a, &px, &py, &n};
  constexpr unsigned block = 256;
  unsigned grid = (static_cast<unsigned>(n) + block - 1) / block;
  runtime::launch(kernel, {grid, 1, 1}, {block, 1, 1}, 0, stream, args);
}

}  // namespace

TEST_CASE("axpy built with LLVM runs on the GPU and matches the CPU bit for bit") {
  lower::Target target = device_target();
  MESSAGE("compiling for " << target.name());
  runtime::Kernel kernel = axpy_module().kernel(lower::axpy_kernel_name);
  runtime::Stream stream;
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);

  for (int n : {1, 31, 1000003}) {
    CAPTURE(n);
    std::vector<float> x(n), y(n);
    for (auto& v : x) v = dist(rng);
    for (auto& v : y) v = dist(rng);
    const float a = dist(rng);

    // One spare element past the end, poisoned like the rest: the kernel must leave it alone.
    const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(n);
    runtime::Buffer dx(bytes), dy(bytes + sizeof(float));
    dy.fill_bytes(0xFF);  // every float becomes a NaN, so an element the kernel skips cannot pass
    dx.upload(x.data(), bytes);
    dy.upload(y.data(), bytes);
    launch_axpy(kernel, a, dx, dy, n, stream);
    stream.synchronize();

    std::vector<float> out(n + 1);
    dy.download(out.data(), bytes + sizeof(float));
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      // fma.rn.f32 on the GPU and fmaf on the CPU round once, identically.
      float expected = std::fmaf(a, x[i], y[i]);
      if (std::bit_cast<std::uint32_t>(out[i]) != std::bit_cast<std::uint32_t>(expected)) {
        if (++wrong <= 5) FAIL_CHECK("y[" << i << "] = " << out[i] << ", expected " << expected);
      }
    }
    CHECK(wrong == 0);
    CHECK(std::bit_cast<std::uint32_t>(out[n]) == 0xFFFFFFFFu);
  }
}

TEST_CASE("a malformed PTX is a DriverError that carries the JIT log") {
  const std::string target = device_target().name();
  const std::string ptx = ".version 8.0\n.target " + target + "\n.address_size 64\n"
                          ".visible .entry broken()\n{\n  this_is_not_an_instruction %r1;\n  ret;\n}\n";
  try {
    runtime::Module::from_ptx(ptx);
    FAIL("a malformed PTX was accepted");
  } catch (const DriverError& e) {
    std::string message = e.what();
    MESSAGE("error: " << message);
    CHECK(message.find("cuModuleLoadDataEx") != std::string::npos);
    CHECK(message.find("JIT log") != std::string::npos);
    // ptxas names the offending line or token in its log.
    CHECK(message.find("this_is_not_an_instruction") != std::string::npos);
  }
}

TEST_CASE("a kernel that does not exist is reported by name") {
  CHECK_THROWS_WITH_AS(axpy_module().kernel("no_such_kernel"), doctest::Contains("no_such_kernel"), InvalidArgument);
}

TEST_CASE("kernel attributes come from the driver") {
  runtime::KernelAttributes attrs = axpy_module().kernel(lower::axpy_kernel_name).attributes();
  MESSAGE("axpy: " << attrs.registers << " registers, " << attrs.static_shared_bytes << " B shared, "
                   << attrs.local_bytes << " B local, PTX " << attrs.ptx_version << ", binary " << attrs.binary_version);
  CHECK(attrs.registers > 0);
  CHECK(attrs.registers <= 255);
  CHECK(attrs.static_shared_bytes == 0);
  CHECK(attrs.local_bytes == 0);
  CHECK(attrs.max_threads_per_block >= 256);
  CHECK(attrs.binary_version > 0);
}

TEST_CASE("the timer returns positive medians, and rests the GPU between runs") {
  runtime::Kernel kernel = axpy_module().kernel(lower::axpy_kernel_name);
  runtime::Stream stream;
  const int n = 1 << 24;
  runtime::Buffer x(sizeof(float) * n), y(sizeof(float) * n);
  x.fill_bytes(0);
  y.fill_bytes(0);
  runtime::TimingOptions options;
  options.warmup = 2;
  options.repeats = 11;
  runtime::Timing t = runtime::time_on_stream([&](const runtime::Stream& s) { launch_axpy(kernel, 2.f, x, y, n, s); },
                                              stream, options);
  // axpy moves 12 bytes per element: report the bandwidth as a sanity check of the numbers.
  MESSAGE("axpy n=2^24: median " << t.median_ms << " ms (min " << t.min_ms << ", max " << t.max_ms << "), "
                                 << 12.0 * n / (t.median_ms * 1e6) << " GB/s");
  CHECK(t.samples_ms.size() == 11);
  CHECK(t.median_ms > 0);
  CHECK(t.min_ms > 0);
  CHECK(t.min_ms <= t.median_ms);
  CHECK(t.median_ms <= t.max_ms);

  // The GPU rests after each run but the last as long as the run took: the call lasts at least the
  // runs and the rests.
  const auto begin = std::chrono::steady_clock::now();
  t = runtime::time_on_stream([&](const runtime::Stream& s) { launch_axpy(kernel, 2.f, x, y, n, s); }, stream,
                              options);
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  double runs_and_rests_ms = -t.samples_ms.back();
  for (double ms : t.samples_ms) runs_and_rests_ms += 2 * ms;
  CHECK(wall_ms >= runs_and_rests_ms);

  options.flush_l2 = false;
  runtime::Timing warm = runtime::time_on_stream(
      [&](const runtime::Stream& s) { launch_axpy(kernel, 2.f, x, y, n, s); }, stream, options);
  CHECK(warm.median_ms > 0);
  CHECK_THROWS_AS(runtime::time_on_stream([](const runtime::Stream&) {}, stream, {0, 0, false}), InvalidArgument);
}

TEST_CASE("a user's stream and memory can be wrapped") {
  runtime::Kernel kernel = axpy_module().kernel(lower::axpy_kernel_name);
  runtime::Stream stream = runtime::Stream::wrap(nullptr);  // the legacy default stream
  const int n = 1000;
  runtime::Buffer owned(sizeof(float) * n);
  runtime::Buffer x = runtime::Buffer::wrap(owned.ptr(), owned.bytes());
  runtime::Buffer y(sizeof(float) * n);
  std::vector<float> ones(n, 1.f), threes(n, 3.f);
  x.upload(ones.data(), sizeof(float) * n);
  y.upload(threes.data(), sizeof(float) * n);
  launch_axpy(kernel, 0.5f, x, y, n, stream);
  stream.synchronize();
  std::vector<float> out(n);
  y.download(out.data(), sizeof(float) * n);
  for (int i = 0; i < n; ++i) REQUIRE(out[i] == 3.5f);
}

TEST_CASE("a buffer repeats its first bytes over the rest of it on the device") {
  // 7 does not divide 1,000,003: the last copy is a part of the prefix's repeats.
  const std::size_t size = 1000003, prefix = 7;
  runtime::Buffer buffer(size);
  buffer.fill_bytes(0xff);
  const std::vector<unsigned char> block{1, 2, 3, 4, 5, 6, 7};
  buffer.upload(block.data(), prefix);
  buffer.repeat_prefix(prefix);
  std::vector<unsigned char> out(size);
  buffer.download(out.data(), size);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i) wrong += out[i] != block[i % prefix];
  CHECK(wrong == 0);
  // The whole buffer as the prefix copies nothing; none, or more than the buffer, is an error.
  buffer.repeat_prefix(size);
  CHECK_THROWS_AS(buffer.repeat_prefix(0), InvalidArgument);
  CHECK_THROWS_AS(buffer.repeat_prefix(size + 1), InvalidArgument);
}

TEST_CASE("device_info keeps its first answer and refuses a device that does not exist") {
  const runtime::DeviceInfo first = runtime::device_info(0), again = runtime::device_info(0);
  CHECK(again.name == first.name);
  CHECK(again.sm_count == first.sm_count);
  CHECK(again.l2_bytes == first.l2_bytes);
  CHECK(first.sm_count > 0);
  CHECK_THROWS_AS(runtime::device_info(runtime::device_count()), InvalidArgument);
  CHECK_THROWS_AS(runtime::device_info(-1), InvalidArgument);
}
