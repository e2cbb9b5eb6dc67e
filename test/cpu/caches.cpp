// The persistent caches (issue 7): the tuning database under concurrent writers and a kill -9 in the
// middle of writing, damaged or foreign database files (refused, naming the file to delete), and the
// kernel cache (hits, atomic files, damaged files, the off switch).
#include <isaac/error.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/tune/database.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace isaac;
using namespace isaac::tune;

namespace {

struct TempDir {
  std::string path;
  explicit TempDir(const char* what) {
    path = (std::filesystem::temp_directory_path() / fmt::format("isaac-{}-{}", what, ::getpid())).string();
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

DecisionKey key(int i, const std::string& writer = "w") {
  return {"Test GPU", 90, 132, 13000, "0.1.0", "gemm", "f32", "NN", fmt::format("{} m={}", writer, i)};
}

}  // namespace

TEST_CASE("the tuning database stores, replaces, lists and clears decisions") {
  TempDir dir("db");
  TuningDatabase db(dir.path + "/sub/tuning.sqlite");
  CHECK(!db.find(key(1)));
  db.store(key(1), {"ML=64", 0.5, "model", {}});
  auto d = db.find(key(1));
  REQUIRE(d);
  CHECK(d->params == "ML=64");
  CHECK(d->measured_ms == 0.5);
  CHECK(d->created.size() == 20);  // 2026-11-22T06:00:00Z
  db.store(key(1), {"ML=128", 0.25, "top-k", {}});
  CHECK(db.find(key(1))->params == "ML=128");
  DecisionKey other = key(1);
  other.driver = 12000;  // another driver is another key
  CHECK(!db.find(other));
  db.store(key(2), {"ML=32", -1, "model", {}});
  CHECK(db.list().size() == 2);
  CHECK(db.erase_all() == 2);
  CHECK(db.list().empty());
}

TEST_CASE("a file that is not a tuning database is refused with a clear message") {
  TempDir dir("db-bad");
  const std::string path = dir.path + "/tuning.sqlite";
  std::ofstream(path) << "this is not SQLite, just some text that happens to sit where the database goes\n";
  CHECK_THROWS_WITH_AS(TuningDatabase{path}, doctest::Contains("tuning database"), Error);
}

namespace {

// A database of `count` decisions, written in one transaction and closed (its WAL folded into the file).
void fill(const std::string& path, int count) {
  std::vector<std::pair<DecisionKey, Decision>> decisions;
  for (int i = 0; i < count; ++i) decisions.push_back({key(i, std::string(200, 'w')), {"ML=64", 0.5, "fill", {}}});
  TuningDatabase db(path);
  db.store_all(decisions);
  CHECK(db.list().size() == std::size_t(count));
}

// Overwrites the start of every page but the first (SQLite's header and schema) with a pattern.
void damage_pages(const std::string& path) {
  const auto size = std::filesystem::file_size(path);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  for (std::uintmax_t at = 4096; at < size; at += 4096) {
    file.seekp(std::streamoff(at));
    file << std::string(64, 'Z');
  }
}

}  // namespace

TEST_CASE("a file of random bytes is refused, naming it and saying to delete it") {
  TempDir dir("db-random");
  const std::string path = dir.path + "/tuning.sqlite";
  {
    std::ofstream out(path, std::ios::binary);
    std::uint32_t x = 12345;
    for (int i = 0; i < 8192; ++i) out.put(char((x = x * 1664525u + 1013904223u) >> 24));
  }
  try {
    TuningDatabase db(path);
    FAIL("a file of random bytes opened as a tuning database");
  } catch (const DamagedDatabase& e) {
    const std::string message = e.what();
    CHECK(message.find("delete " + path) != std::string::npos);
    // `isaac-tune cache clear` opens the database first: it is not the way out of this.
    CHECK(message.find("cache clear") == std::string::npos);
  }
}

TEST_CASE("a database with damaged pages opens, and its reads say which file to delete") {
  TempDir dir("db-pages");
  const std::string path = dir.path + "/tuning.sqlite";
  fill(path, 400);
  damage_pages(path);
  TuningDatabase db(path);
  CHECK_THROWS_WITH_AS(db.list(), doctest::Contains(("delete " + path).c_str()), DamagedDatabase);
}

TEST_CASE("a decisions table of another form is refused on open, naming its columns") {
  TempDir dir("db-schema");
  const std::string path = dir.path + "/tuning.sqlite";
  fill(path, 3);
  // The schema is SQL text on the first page: renaming a column in place (same length) makes the
  // table of another version without any SQLite API.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = bytes.find("created TEXT NOT NULL");
  REQUIRE(at != std::string::npos);
  REQUIRE(at < 4096);
  bytes.replace(at, 7, "stamped");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  CHECK_THROWS_WITH_AS(TuningDatabase{path}, doctest::Contains("has the columns (device, compute_capability, sm_count, driver, "
                                                               "isaac_version, template, dtype, layout, shape, params, "
                                                               "measured_ms, how, stamped)"),
                       DamagedDatabase);
  CHECK_THROWS_WITH_AS(TuningDatabase{path}, doctest::Contains(("delete " + path).c_str()), DamagedDatabase);
}

TEST_CASE("store_all stores every decision in one transaction") {
  TempDir dir("db-all");
  const std::string path = dir.path + "/tuning.sqlite";
  fill(path, 250);
  TuningDatabase db(path);
  CHECK(db.find(key(249, std::string(200, 'w')))->params == "ML=64");
  db.store_all({});
  CHECK(db.list().size() == 250);
}

TEST_CASE("eight processes writing at once lose nothing") {
  TempDir dir("db-8");
  const std::string path = dir.path + "/tuning.sqlite";
  { TuningDatabase create(path); }
  constexpr int writers = 8, each = 60;
  std::vector<pid_t> children;
  for (int w = 0; w < writers; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int status = 0;
      try {
        TuningDatabase db(path);
        for (int i = 0; i < each; ++i) {
          db.store(key(i, fmt::format("writer{}", w)), {fmt::format("ML={}", i), double(i), "test", {}});
          db.store(key(0, "shared"), {fmt::format("ML={}", w), double(w), "test", {}});  // all on one key too
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        status = 1;
      }
      std::_Exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  TuningDatabase db(path);
  CHECK(db.list().size() == writers * each + 1);
  for (int w = 0; w < writers; ++w)
    for (int i = 0; i < each; i += 7) CHECK(db.find(key(i, fmt::format("writer{}", w)))->params == fmt::format("ML={}", i));
}

TEST_CASE("a writer killed with SIGKILL in the middle of writing leaves a sound database") {
  TempDir dir("db-kill");
  const std::string path = dir.path + "/tuning.sqlite";
  { TuningDatabase create(path); }
  for (int round = 0; round < 3; ++round) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      TuningDatabase db(path);
      for (int i = 0;; ++i) db.store(key(i % 5000, fmt::format("round{}", round)), {std::string(200, 'x'), 1.0, "kill", {}});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 50 * round));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
  }
  TuningDatabase db(path);
  const auto all = db.list();
  CHECK(!all.empty());
  for (const auto& [k, d] : all) CHECK(d.params == std::string(200, 'x'));
  db.store(key(1, "after"), {"ML=16", 1.0, "after the kills", {}});
  CHECK(db.find(key(1, "after")));
}

TEST_CASE("the kernel cache returns what was stored, survives damage, and can be turned off") {
  TempDir dir("kernels");
  ::setenv("ISAAC_KERNEL_CACHE_DIR", dir.path.c_str(), 1);
  ::unsetenv("ISAAC_NO_CACHE");
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 100, 60, 33, false, true);
  lower::GemmParams p;
  p.ml = 32, p.nl = 32, p.ms = 4, p.ns = 4, p.u = 8, p.la = 8, p.lb = 8;
  const lower::Target target{80, false};
  const KernelCacheStats before = kernel_cache_stats();
  const lower::GemmKernel cold = cached_gemm_kernel(g, p, target, lower::SplitMode::atomic, false);
  const lower::GemmKernel warm = cached_gemm_kernel(g, p, target, lower::SplitMode::atomic, false);
  KernelCacheStats after = kernel_cache_stats();
  CHECK(after.misses == before.misses + 1);
  CHECK(after.hits == before.hits + 1);
  CHECK(after.stores == before.stores + 1);
  CHECK(warm.ptx == cold.ptx);
  CHECK(warm.main_name == cold.main_name);
  CHECK(warm.shared_bytes == cold.shared_bytes);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) files.push_back(e.path());
  REQUIRE(files.size() == 1);  // no temporary file left behind
  CHECK(files[0].extension() == ".kernel");

  // Another target, mode or parameter set is another kernel; whether it may overlap the kernel
  // before it is kept with it.
  const lower::GemmKernel hopper = cached_gemm_kernel(g, p, lower::Target{90, false}, lower::SplitMode::atomic, false);
  CHECK(kernel_cache_stats().misses == after.misses + 1);
  CHECK(hopper.overlaps_previous);
  CHECK(cached_gemm_kernel(g, p, lower::Target{90, false}, lower::SplitMode::atomic, false).overlaps_previous);
  CHECK_FALSE(warm.overlaps_previous);

  // A damaged file is a miss, is removed, and is written again.
  std::filesystem::resize_file(files[0], std::filesystem::file_size(files[0]) / 2);
  const lower::GemmKernel again = cached_gemm_kernel(g, p, target, lower::SplitMode::atomic, false);
  CHECK(again.ptx == cold.ptx);
  CHECK(kernel_cache_stats().damaged == after.damaged + 1);
  CHECK(std::filesystem::file_size(files[0]) > 1000);

  ::setenv("ISAAC_NO_CACHE", "1", 1);
  after = kernel_cache_stats();
  cached_gemm_kernel(g, p, target, lower::SplitMode::atomic, false);
  CHECK(kernel_cache_stats().hits == after.hits);
  CHECK(kernel_cache_stats().misses == after.misses + 1);
  ::unsetenv("ISAAC_NO_CACHE");
  ::unsetenv("ISAAC_KERNEL_CACHE_DIR");
}

TEST_CASE("the kernel cache keeps CONV cubins, and an entry without one is a miss when one is wanted") {
  if (!lower::ptxas_available()) {
    MESSAGE("skipped: ptxas is not installed (put the CUDA toolkit's bin on PATH or set ISAAC_PTXAS)");
    return;
  }
  TempDir dir("conv-kernels");
  ::setenv("ISAAC_KERNEL_CACHE_DIR", dir.path.c_str(), 1);
  ::unsetenv("ISAAC_NO_CACHE");
  const ir::Conv v = ir::dense_conv(ir::DType::f32, 2, 3, 9, 11, 8, 3, 3, 1, 1, 1, ir::ImageLayout::nchw,
                                    ir::FilterLayout::kcrs);
  const lower::ConvParams p = lower::parse_conv_params("PL=32,KL=16,PS=2,KS=2,U=8,VI=1,LI=32,LF=8");
  const lower::Target target{90, false};
  const KernelCacheStats before = kernel_cache_stats();
  const lower::ConvKernel plain = cached_conv_kernel(v, p, {}, target, false);
  CHECK(plain.cubin.empty());
  const lower::ConvKernel assembled = cached_conv_kernel(v, p, {}, target, true);
  REQUIRE_FALSE(assembled.cubin.empty());
  CHECK(std::string(assembled.cubin.data(), 4) == "\x7f" "ELF");
  const lower::ConvKernel warm = cached_conv_kernel(v, p, {}, target, true);
  const KernelCacheStats after = kernel_cache_stats();
  CHECK(after.misses == before.misses + 2);
  CHECK(after.hits == before.hits + 1);
  CHECK(warm.cubin == assembled.cubin);
  CHECK(warm.ptx == plain.ptx);
  // An entry with a cubin serves a caller that wants none.
  CHECK(cached_conv_kernel(v, p, {}, target, false).ptx == plain.ptx);
  CHECK(kernel_cache_stats().hits == after.hits + 1);
  // A WG=1 kernel comes back with the name of its filter transform, which its launch needs.
  const lower::ConvParams winograd = lower::parse_conv_params("PL=16,KL=16,PS=2,KS=2,U=4,DB=0,WG=1");
  const lower::ConvKernel fresh = cached_conv_kernel(v, winograd, {}, target, false);
  REQUIRE_FALSE(fresh.transform_name.empty());
  const KernelCacheStats before_hit = kernel_cache_stats();
  CHECK(cached_conv_kernel(v, winograd, {}, target, false).transform_name == fresh.transform_name);
  CHECK(kernel_cache_stats().hits == before_hit.hits + 1);
  // A WG=2 kernel also names its input and output transforms.
  lower::ConvParams product = lower::parse_conv_params("PL=32,KL=16,PS=2,KS=2,U=8,WG=2");
  lower::fit_conv_load_layouts(v, product);
  const lower::ConvKernel emitted = cached_conv_kernel(v, product, {}, target, false);
  REQUIRE_FALSE(emitted.input_transform_name.empty());
  REQUIRE_FALSE(emitted.output_transform_name.empty());
  const lower::ConvKernel reread = cached_conv_kernel(v, product, {}, target, false);
  CHECK(reread.input_transform_name == emitted.input_transform_name);
  CHECK(reread.output_transform_name == emitted.output_transform_name);
  CHECK(reread.transform_name == emitted.transform_name);
  ::unsetenv("ISAAC_KERNEL_CACHE_DIR");
}
