// What the kernel cache must never do: serve a kernel built for another problem (one that differs
// only in the strides the kernel takes as constants), or serve an entry whose bytes changed.
#include <isaac/kernel_cache.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

using namespace isaac;

namespace {

struct CacheDir {
  std::string path;
  explicit CacheDir(const char* what) {
    path = (std::filesystem::temp_directory_path() / fmt::format("isaac-{}-{}", what, ::getpid())).string();
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
    ::setenv("ISAAC_KERNEL_CACHE_DIR", path.c_str(), 1);
    ::unsetenv("ISAAC_NO_CACHE");
  }
  ~CacheDir() {
    ::unsetenv("ISAAC_KERNEL_CACHE_DIR");
    std::filesystem::remove_all(path);
  }
};

const lower::Target hopper{90, false};

lower::GemmParams small_gemm_set() {
  lower::GemmParams p;
  p.ml = 32, p.nl = 32, p.ms = 4, p.ns = 4, p.u = 8, p.la = 8, p.lb = 8;
  return p;
}

}  // namespace

TEST_CASE("batched GEMMs that differ only in a batch stride get their own kernels") {
  CacheDir dir("kernel-keys-gemm");
  ir::Gemm dense = ir::dense_gemm(ir::DType::f32, 64, 48, 40, false, false, 3);
  ir::Gemm spaced = dense;
  spaced.stride_c = dense.stride_c + 64;  // batches of C apart, as in a view of a larger tensor
  const lower::GemmParams p = small_gemm_set();
  REQUIRE(lower::check_gemm(spaced, p, lower::DeviceLimits{}));
  const KernelCacheStats before = kernel_cache_stats();
  cached_gemm_kernel(dense, p, hopper, lower::SplitMode::atomic, false);
  const lower::GemmKernel served = cached_gemm_kernel(spaced, p, hopper, lower::SplitMode::atomic, false);
  CHECK(kernel_cache_stats().misses == before.misses + 2);
  CHECK(served.ptx == lower::emit_gemm(spaced, p, hopper, lower::SplitMode::atomic).ptx);
}

TEST_CASE("convolutions that differ only in the output's strides get their own kernels") {
  CacheDir dir("kernel-keys-conv");
  const ir::Conv dense = ir::dense_conv(ir::DType::f32, 2, 8, 12, 12, 16, 3, 3, 1, 1, 1, ir::ImageLayout::nhwc,
                                        ir::FilterLayout::krsc);
  ir::Conv view = dense;  // the output is a view with 20 channels per pixel, of which it writes 16
  view.output_strides = {dense.p * dense.q * 20, 1, dense.q * 20, 20};
  CHECK(ir::to_string(view) != ir::to_string(dense));
  const std::vector<lower::ConvParams> space = lower::conv_space(view);
  REQUIRE_FALSE(space.empty());
  const lower::ConvParams p = space.front();
  const KernelCacheStats before = kernel_cache_stats();
  cached_conv_kernel(dense, p, {}, hopper, false);
  const lower::ConvKernel served = cached_conv_kernel(view, p, {}, hopper, false);
  CHECK(kernel_cache_stats().misses == before.misses + 2);
  CHECK(served.ptx == lower::emit_conv(view, p, hopper, {}).ptx);
}

TEST_CASE("an entry whose bytes changed is damaged, not served") {
  CacheDir dir("kernel-keys-bytes");
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 100, 60, 33, false, true);
  const lower::GemmParams p = small_gemm_set();
  const lower::GemmKernel fresh = cached_gemm_kernel(g, p, hopper, lower::SplitMode::atomic, false);
  std::filesystem::path file = std::filesystem::directory_iterator(dir.path)->path();
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // One character of the PTX, as a flipped bit on disk would change it: the entry still parses.
  const std::size_t at = bytes.find("fma.rn.f32");
  REQUIRE(at != std::string::npos);
  bytes[at + 5] = 'z';  // fma.rz.f32
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  const KernelCacheStats before = kernel_cache_stats();
  const lower::GemmKernel again = cached_gemm_kernel(g, p, hopper, lower::SplitMode::atomic, false);
  CHECK(kernel_cache_stats().damaged == before.damaged + 1);
  CHECK(kernel_cache_stats().hits == before.hits);
  CHECK(again.ptx == fresh.ptx);
}
