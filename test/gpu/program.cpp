// isaac::compile end to end on the GPU: a DSL statement, run with device tensors in every layout of
// A, B and C and every dtype, parameters chosen by choose_gemm (model + top-k, or the heuristic
// where no model ships; pruning + annealing; runtime autotuning by buckets), against the float64
// reference.
#include <doctest/doctest.h>
#include <isaac/gemm.hpp>
#include <isaac/isaac.hpp>
#include <isaac/program.hpp>
#include <isaac/tune/database.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/version.hpp>

#include "support/host_data.hpp"

#include <fmt/format.h>

#include <random>

using namespace isaac;
using namespace isaac::dsl;
using test::HostArray;

namespace {

TuningOptions top2() {
  TuningOptions options;
  options.top_k = 2;
  return options;
}

template <class T>
Program gemm_program(TuningOptions options = top2()) {
  Index<'m'> m;
  Index<'n'> n;
  Index<'k'> k;
  Tensor<T, 2> A("A"), B("B"), C("C");
  Scalar alpha("alpha"), beta("beta");
  return compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n), options);
}

// Runs C = alpha A B + beta C with the given storage orders and checks every element.
void check(const Program& program, ir::DType dtype, std::int64_t M, std::int64_t N, std::int64_t K, bool a_row,
           bool b_row, bool c_row, double beta, std::mt19937_64& rng) {
  CAPTURE(fmt::format("{} M={} N={} K={} A {} B {} C {} beta={}", ir::name(dtype), M, N, K, a_row ? "row" : "col",
                      b_row ? "row" : "col", c_row ? "row" : "col", beta));
  auto strides = [](bool row, std::int64_t rows, std::int64_t cols) {
    return row ? std::vector<std::int64_t>{cols, 1} : std::vector<std::int64_t>{1, rows};
  };
  HostArray a(dtype, M * K), b(dtype, K * N), c(dtype, M * N);
  a.fill_random(rng), b.fill_random(rng), c.fill_random(rng);
  runtime::Buffer da(a.bytes.size()), db(b.bytes.size()), dc(c.bytes.size());
  da.upload(a.bytes.data(), a.bytes.size()), db.upload(b.bytes.data(), b.bytes.size());
  if (beta != 0) dc.upload(c.bytes.data(), c.bytes.size());
  else dc.fill_bytes(0xff);  // NaN: an element the kernel does not write shows
  const auto sa = strides(a_row, M, K), sb = strides(b_row, K, N), sc = strides(c_row, M, N);
  const double alpha = 1.5;
  runtime::Stream stream;
  program(stream, {{"A", {da.ptr(), {M, K}, sa}}, {"B", {db.ptr(), {K, N}, sb}}, {"C", {dc.ptr(), {M, N}, sc}}},
          {{"alpha", alpha}, {"beta", beta}});
  stream.synchronize();
  HostArray out(dtype, M * N);
  dc.download(out.bytes.data(), out.bytes.size());

  // The parameters this shape got decide how often partial sums are rounded in C.
  int kg = 1;
  for (const auto& [key, d] : program.decisions()) kg = std::max(kg, d.params.kg);
  const ir::DType accumulation = ir::is_16_bit(dtype) ? ir::DType::f32 : dtype;
  int bad = 0;
  std::string first;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double expected = beta * c.values[i * sc[0] + j * sc[1]], magnitude = std::abs(expected);
      for (std::int64_t l = 0; l < K; ++l) {
        const double p = alpha * a.values[i * sa[0] + l * sa[1]] * b.values[l * sb[0] + j * sb[1]];
        expected += p, magnitude += std::abs(p);
      }
      const double got = out.get(i * sc[0] + j * sc[1]);
      const double bound = test::error_bound(magnitude, K + 1, accumulation, dtype, kg + 1);
      if (!(std::abs(got - expected) <= bound) && bad++ == 0)
        first = fmt::format("C({}, {}) = {} but the reference is {} (bound {})", i, j, got, expected, bound);
    }
  CHECK_MESSAGE(bad == 0, fmt::format("{} wrong elements; first: {}", bad, first));
}

}  // namespace

TEST_CASE("a compiled DSL GEMM runs in every layout and dtype and matches the float64 reference") {
  std::mt19937_64 rng(7);
  const Program f32 = gemm_program<float>();
  const Program f64 = gemm_program<double>();
  const Program f16 = gemm_program<dsl::half>();
  const Program bf16 = gemm_program<dsl::bfloat16>();
  struct Shape {
    std::int64_t m, n, k;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{37, 61, 131}, Shape{129, 65, 257}, Shape{1000, 3, 17}})
    for (int layout = 0; layout < 8; ++layout) {
      const bool a_row = layout & 1, b_row = layout & 2, c_row = layout & 4;
      check(f32, ir::DType::f32, s.m, s.n, s.k, a_row, b_row, c_row, layout % 3 ? 0.5 : 0.0, rng);
      if (layout % 2 == 0) check(f64, ir::DType::f64, s.m, s.n, s.k, a_row, b_row, c_row, 0.25, rng);
      if (layout % 2 == 1) check(f16, ir::DType::f16, s.m, s.n, s.k, a_row, b_row, c_row, 0.0, rng);
      if (layout % 2 == 1) check(bf16, ir::DType::bf16, s.m, s.n, s.k, a_row, b_row, c_row, layout % 3 ? 0.5 : 0.0, rng);
    }
  for (const Program* p : {&f32, &bf16})
    for (const auto& [key, d] : p->decisions()) MESSAGE(fmt::format("{}: {} by {}", key, d.params.str(), d.how));
}

TEST_CASE("a Program keeps one decision per shape") {
  std::mt19937_64 rng(8);
  const Program p = gemm_program<float>();
  check(p, ir::DType::f32, 64, 64, 64, false, false, false, 0.0, rng);
  check(p, ir::DType::f32, 64, 64, 64, false, false, false, 0.0, rng);
  CHECK(p.decisions().size() == 1);
  check(p, ir::DType::f32, 65, 64, 64, false, false, false, 0.0, rng);
  CHECK(p.decisions().size() == 2);
}

TEST_CASE("a Program refuses what it cannot run, saying why") {
  const Program p = gemm_program<float>();
  runtime::Buffer buffer(4096);
  runtime::Stream stream;
  CHECK_THROWS_WITH_AS(p(stream, {{"A", {buffer.ptr(), {4, 4}, {}}}, {"B", {buffer.ptr(), {4, 4}, {}}}}),
                       doctest::Contains("no device tensor was given for C"), InvalidArgument);
}

TEST_CASE("pruning + simulated annealing chooses kernels that match the reference") {
  std::mt19937_64 rng(9);
  TuningOptions options;
  options.search = Search::annealing;
  options.anneal_budget = 6;
  options.database = false;
  const Program f32 = gemm_program<float>(options);
  const Program f64 = gemm_program<double>(options);
  const Program f16 = gemm_program<dsl::half>(options);
  check(f32, ir::DType::f32, 37, 61, 131, false, true, false, 0.5, rng);
  check(f32, ir::DType::f32, 32, 32, 6007, true, false, false, 0.0, rng);
  check(f64, ir::DType::f64, 129, 1, 257, true, true, true, 0.25, rng);
  check(f16, ir::DType::f16, 65, 33, 17, false, false, true, 0.0, rng);
  for (const Program* p : {&f32, &f64, &f16})
    for (const auto& [key, d] : p->decisions()) {
      CAPTURE(key);
      CHECK(d.how.find("annealing") != std::string::npos);
      CHECK(d.timed >= 1);
      CHECK(d.timed <= 6);
      CHECK(d.measured_ms > 0);
      MESSAGE(fmt::format("{}: {} by {}", key, d.params.str(), d.how));
    }
}

TEST_CASE("runtime autotuning: a bucket is tuned once, and a member its winner does not fit falls back") {
  std::mt19937_64 rng(10);
  TuningOptions options;
  options.search = Search::autotune;
  options.top_k = 4;
  options.database = false;
  const Program p = gemm_program<float>(options);
  // Three shapes of one bucket (M<=128 N<=64 K<=256, not tile-divisible); 117 rows make lda odd.
  check(p, ir::DType::f32, 100, 60, 200, false, false, false, 0.0, rng);
  check(p, ir::DType::f32, 120, 50, 250, false, false, false, 0.5, rng);
  check(p, ir::DType::f32, 117, 63, 199, false, false, false, 0.0, rng);
  const auto decisions = p.decisions();
  REQUIRE(decisions.size() == 3);
  int tuned = 0;
  for (const auto& [key, d] : decisions) {
    MESSAGE(fmt::format("{}: {} by {}", key, d.params.str(), d.how));
    const bool here = d.how.find("tuned here") != std::string::npos;
    tuned += here;
    if (here) CHECK(d.timed >= 1);
    else CHECK(d.timed == 0);
    CHECK((d.how.find("autotune bucket 'gemm M<=128 N<=64 K<=256 batch<=1 tile64=no'") != std::string::npos ||
           d.how.find("heuristic") != std::string::npos));
  }
  CHECK(tuned == 1);
  // Another bucket is tuned on its own.
  check(p, ir::DType::f32, 300, 60, 200, false, false, false, 0.0, rng);
  CHECK(p.decisions().size() == 4);
}

TEST_CASE("runtime autotuning: a bucket's winner that does not fit a member falls back to the next candidate") {
  if (!tune::caches_enabled()) {
    MESSAGE("skipped: ISAAC_NO_CACHE is set, and this test plants a bucket decision in the tuning database");
    return;
  }
  const runtime::DeviceInfo info = runtime::device_info(0);
  const lower::DeviceLimits limits = device_limits(info);
  // The member has M = 117 rows (lda odd): the bucket's winner, made for M = 128, loads A by 4.
  const ir::Gemm member = ir::dense_gemm(ir::DType::f32, 117, 40, 100, false, false);
  const ir::Gemm first = ir::dense_gemm(ir::DType::f32, 128, 40, 100, false, false);
  lower::GemmParams wide = tune::heuristic_gemm(first, limits);
  REQUIRE(wide.va > 1);
  REQUIRE(!lower::gemm_legal(member, wide, limits));
  const lower::GemmParams narrow = tune::heuristic_gemm(member, limits);
  REQUIRE(lower::gemm_legal(member, narrow, limits));
  // Bucket keys distinct from anything else this process tunes (no tile flag here).
  TuningOptions options;
  options.search = Search::autotune;
  options.gemm_buckets.tile = 0;
  const std::string bucket = tune::gemm_bucket(member, options.gemm_buckets);
  REQUIRE(bucket == tune::gemm_bucket(first, options.gemm_buckets));
  tune::DecisionKey key{info.name, info.compute_capability(), info.sm_count, runtime::driver_version(), version(),
                        "gemm", "f32", "NN", bucket};
  tune::TuningDatabase db(tune::tuning_database_path());
  db.store(key, {fmt::format("{}\n{}\n", wide.str(), narrow.str()), 0.01, "planted by a test", {}});
  const GemmDecision d = choose_gemm(member, options);
  CHECK(d.params == narrow);
  CHECK(d.timed == 0);
  CHECK(d.how.find("candidate 2 of 2") != std::string::npos);
  // No candidate fits: the heuristic choice, never an error.
  options.gemm_buckets.round_k = false;
  key.shape = tune::gemm_bucket(member, options.gemm_buckets);
  REQUIRE(key.shape != bucket);
  db.store(key, {wide.str(), 0.01, "planted by a test", {}});
  const GemmDecision none = choose_gemm(member, options);
  CHECK(lower::gemm_legal(member, none.params, limits));
  CHECK(none.how.find("heuristic (none of the 1 candidates") != std::string::npos);
  MESSAGE(d.how);
  MESSAGE(none.how);
}
