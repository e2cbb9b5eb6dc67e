// The CONV template's Winograd kernels without a GPU (WG=1: F(2x2, RxS) in one kernel; WG=2:
// F(4x4, RxS) with a batched GEMM): the transforms compute a correlation, the text form, the legality
// rules and their reasons, the search spaces, the product's workspace, and ptxas assembles sets across
// filter sizes, layouts and dtypes for sm_80 and sm_90 with no spills.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/lower/target.hpp>
#include <isaac/lower/winograd.hpp>

#include "support/parallel_compile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace isaac;
using ir::DType;
using ir::FilterLayout;
using ir::ImageLayout;
using lower::ConvParams;

namespace {

ConvParams winograd(const char* text) { return lower::parse_conv_params(text); }

ir::Conv problem(DType t = DType::f32, std::int64_t r = 3, std::int64_t stride = 1, std::int64_t dilation = 1,
                 ImageLayout il = ImageLayout::nchw, FilterLayout fl = FilterLayout::kcrs) {
  return ir::dense_conv(t, 4, 24, 19, 17, 40, r, r, stride, 1, dilation, il, fl);
}

}  // namespace

TEST_CASE("Winograd F(m, r): At [(G g) . (Bt d)] is the correlation of d and g, and Bt is exact in binary") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int outputs : {2, 4})
    for (int r = 2; r <= 5; ++r) {
      CAPTURE(outputs);
      CAPTURE(r);
      const lower::WinogradMatrices m = lower::winograd_matrices(outputs, r);
      REQUIRE(m.alpha == outputs + r - 1);
      REQUIRE(m.at.size() == static_cast<size_t>(outputs * m.alpha));
      REQUIRE(m.g.size() == static_cast<size_t>(m.alpha * r));
      REQUIRE(m.bt.size() == static_cast<size_t>(m.alpha * m.alpha));
      for (double x : m.bt) CHECK(std::ldexp(x, 3) == std::round(std::ldexp(x, 3)));  // multiples of 1/8
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<double> d(m.alpha), g(r);
        for (double& x : d) x = uniform(rng);
        for (double& x : g) x = uniform(rng);
        std::vector<double> product(m.alpha);
        for (int e = 0; e < m.alpha; ++e) {
          double gg = 0, dd = 0;
          for (int j = 0; j < r; ++j) gg += m.g[e * r + j] * g[j];
          for (int j = 0; j < m.alpha; ++j) dd += m.bt[e * m.alpha + j] * d[j];
          product[e] = gg * dd;
        }
        for (int i = 0; i < outputs; ++i) {
          double y = 0, direct = 0;
          for (int e = 0; e < m.alpha; ++e) y += m.at[i * m.alpha + e] * product[e];
          for (int j = 0; j < r; ++j) direct += d[i + j] * g[j];
          CHECK(std::abs(y - direct) < 1e-12);
        }
      }
    }
  CHECK_THROWS_WITH_AS(lower::winograd_matrices(2, 6), doctest::Contains("2 to 5 taps"), InvalidArgument);
  CHECK_THROWS_AS(lower::winograd_matrices(2, 1), InvalidArgument);
  CHECK_THROWS_WITH_AS(lower::winograd_matrices(3, 3), doctest::Contains("m = 2 or 4"), InvalidArgument);
}

TEST_CASE("WG=1 sets print WG last and parse back; direct sets keep their text") {
  ConvParams p = winograd("PL=32,KL=32,PS=2,KS=2,U=8,DB=1,WG=1");
  CHECK(p.wg == 1);
  CHECK(p.str() == "PL=32,KL=32,PS=2,KS=2,U=8,CS=1,CL=1,CG=1,VI=1,VF=1,LI=0,LF=0,DB=1,TC=0,WG=1");
  CHECK(lower::parse_conv_params(p.str()) == p);
  CHECK(ConvParams{}.str().find("WG") == std::string::npos);
}

TEST_CASE("WG=1 legality: what it applies to, and why a set is refused") {
  const ConvParams p = winograd("PL=16,KL=32,PS=2,KS=2,U=8,WG=1");
  CHECK(lower::check_conv(problem(), p));
  CHECK(lower::check_conv(problem(), winograd("PL=32,KL=32,PS=4,KS=4,U=8,CL=4,WG=1")));
  auto refused = [&](const ir::Conv& v, const ConvParams& q, const char* reason, lower::DeviceLimits device = {}) {
    auto legal = lower::check_conv(v, q, {}, device);
    CHECK_MESSAGE(!legal, ir::to_string(v) << " " << q.str());
    CHECK_MESSAGE(legal.reason.find(reason) != std::string::npos, legal.reason);
    CHECK(lower::conv_legal(v, q, {}, device) == legal.legal);
  };
  refused(problem(DType::f32, 3, 2), p, "stride 1 and dilation 1");
  refused(problem(DType::f32, 3, 1, 2), p, "stride 1 and dilation 1");
  refused(problem(DType::f32, 1), p, "2 <= R, S <= 5");
  refused(problem(DType::f32, 7), p, "2 <= R, S <= 5");
  refused(problem(DType::f16), p, "f32 and f64");
  refused(problem(), p, "sm_80", {.sm = 75});
  refused(problem(), winograd("PL=32,KL=32,PS=2,KS=2,U=8,CG=2,WG=1"), "CS, CG, VI and VF must be 1");
  refused(problem(), winograd("PL=32,KL=32,PS=2,KS=2,U=8,TC=1,WG=1"), "TC 0");
  refused(problem(), winograd("PL=32,KL=32,PS=2,KS=2,U=8,WG=3"), "WG=3 must be 0");
  refused(problem(), winograd("PL=32,KL=2,PS=2,KS=2,U=8,WG=1"), "16 bytes");
  refused(problem(), winograd("PL=32,KL=32,PS=4,KS=4,U=8,CL=3,WG=1"), "CL=3 must divide the 16 planes");
  refused(problem(), winograd("PL=64,KL=32,PS=4,KS=4,U=8,CL=4,WG=1"), "at most 384 threads");
  refused(problem(), winograd("PL=32,KL=32,PS=4,KS=4,U=8,WG=1"), "KS x PS = 16 must be at most 8");
  refused(problem(), winograd("PL=32,KL=32,PS=2,KS=2,U=8,WG=1"), "256 threads at most 128");
  refused(problem(), winograd("PL=32,KL=24,PS=2,KS=2,U=8,WG=1"), "power of two");
  // 18 planes x 8 x 4 accumulators.
  refused(problem(DType::f32, 5), winograd("PL=16,KL=32,PS=4,KS=8,U=8,CL=2,DB=0,WG=1"), "registers");
  refused(problem(DType::f32, 5), winograd("PL=128,KL=64,PS=8,KS=8,U=16,CL=2,WG=1"), "shared memory");
  // CL > 1 keeps every plane of the block's outputs in shared memory for the output transform.
  refused(problem(DType::f32, 5), winograd("PL=128,KL=64,PS=8,KS=8,U=2,CL=2,DB=0,WG=1"), "planes x PL x KL");
}

TEST_CASE("winograd_space: legal WG=1 sets where Winograd applies, none elsewhere; conv_space has none") {
  for (std::int64_t r : {2, 3, 4, 5})
    for (DType t : {DType::f32, DType::f64}) {
      ir::Conv v = problem(t, r);
      auto space = lower::winograd_space(v);
      CHECK_MESSAGE(space.size() >= 4, ir::to_string(v) << ": " << space.size() << " sets");
      for (const ConvParams& p : space) {
        CHECK(p.wg == 1);
        CHECK(lower::check_conv(v, p));
        CHECK(lower::outside_conv_space(v, p).has_value());
      }
    }
  CHECK(lower::winograd_space(problem(DType::f32, 3, 2)).empty());
  CHECK(lower::winograd_space(problem(DType::f16)).empty());
  for (const ConvParams& p : lower::conv_space(problem())) CHECK(p.wg == 0);
}

TEST_CASE("WG=2 legality: the problems it applies to, CG, and the batched GEMM's own reasons") {
  ConvParams p = winograd("PL=64,KL=32,PS=4,KS=4,U=16,VI=2,VF=2,WG=2");
  lower::fit_conv_load_layouts(problem(), p);
  CHECK(p.li == 32);  // 32 threads x 2 along the 64 tiles of A
  CHECK(p.lf == 16);  // 16 threads x 2 along the 32 filters of B
  CHECK(lower::check_conv(problem(), p));
  CHECK(lower::check_conv(problem(DType::f64, 5), p));
  auto refused = [&](const ir::Conv& v, const ConvParams& q, const char* reason) {
    auto legal = lower::check_conv(v, q);
    CHECK_MESSAGE(!legal, ir::to_string(v) << " " << q.str());
    CHECK_MESSAGE(legal.reason.find(reason) != std::string::npos, legal.reason);
    CHECK(lower::conv_legal(v, q) == legal.legal);
  };
  refused(problem(DType::f32, 3, 2), p, "stride 1 and dilation 1");
  refused(problem(DType::f32, 7), p, "F(4x4, RxS)) is built for 2 <= R, S <= 5");
  refused(problem(DType::f16), p, "f32 and f64");
  ConvParams split = p;
  split.cg = 2;
  refused(problem(), split, "CG=2 must be 1");
  // The GEMM's rules, named as GEMM's keys: LA=64 threads x VA=2 do not divide ML=64.
  ConvParams wide = p;
  wide.li = 64;
  refused(problem(), wide, "WG=2's batched GEMM");
  refused(problem(), wide, "LA=64");
}

TEST_CASE("WG=2: the product's GEMM and workspace follow the planes, tiles and channels of the problem") {
  // P = Q = 17 (3 x 3 filters, padding 1): 5 x 5 tiles of 4 x 4 pixels per image, the last partial.
  const ir::Conv v = ir::dense_conv(DType::f32, 3, 21, 17, 17, 13, 3, 3, 1, 1);
  ConvParams p = winograd("PL=64,KL=32,PS=4,KS=4,U=8,WG=2");
  lower::fit_conv_load_layouts(v, p);
  const lower::WinogradProduct product = lower::winograd_product(v, p);
  const ir::Gemm& g = product.gemm;
  CHECK(g.m == 3 * 5 * 5);
  CHECK(g.n == 13);
  CHECK(g.k == 21);
  CHECK(g.batch == 36);  // (3 + 3)^2
  CHECK(!g.a_trans);
  CHECK(g.b_trans);
  CHECK(g.lda == 80);  // 75 tiles rounded up to 8
  CHECK(g.ldc == 80);
  CHECK(g.ldb == 16);  // K rounded up to 8
  CHECK(g.stride_a == 80 * 21);
  CHECK(g.stride_b == 16 * 21);
  CHECK(g.stride_c == 80 * 13);
  CHECK(product.params == lower::GemmParams{.ml = 64, .nl = 32, .ms = 4, .ns = 4, .u = 8, .la = p.li, .lb = p.lf});
  CHECK(product.filter_offset == 0);
  CHECK(product.input_offset >= std::size_t(36 * 16 * 21 * 4));
  CHECK(product.product_offset >= product.input_offset + std::size_t(36 * 80 * 21 * 4));
  CHECK(product.workspace_bytes >= product.product_offset + std::size_t(36 * 80 * 13 * 4));
  for (std::size_t offset : {product.input_offset, product.product_offset}) CHECK(offset % 256 == 0);
  const lower::ConvGrid grid = lower::conv_grid(v, p);
  CHECK(grid.workspace_bytes == product.workspace_bytes);
  CHECK(grid.main == lower::gemm_grid(g, product.params, lower::SplitMode::atomic).main);
  CHECK(grid.input_transform[0] == (80 * 21 + 255) / 256);
  CHECK(grid.output_transform[0] == (80 * 13 + 255) / 256);
}

TEST_CASE("winograd_product_space: legal WG=2 sets where Winograd applies, none elsewhere, and none in the others") {
  for (std::int64_t r : {2, 5})
    for (DType t : {DType::f32, DType::f64}) {
      ir::Conv v = problem(t, r);
      auto space = lower::winograd_product_space(v);
      CHECK_MESSAGE(space.size() >= 100, ir::to_string(v) << ": " << space.size() << " sets");
      for (const ConvParams& p : space) {
        REQUIRE(p.wg == 2);
        CHECK(p.cg == 1);
        ConvParams fitted = p;
        lower::fit_conv_load_layouts(v, fitted);
        CHECK(fitted == p);
      }
      CHECK(lower::check_conv(v, space.front()));
      CHECK(lower::check_conv(v, space.back()));
      CHECK(lower::outside_conv_space(v, space.front()).has_value());
      CHECK(std::ranges::none_of(lower::winograd_space(v), [](const ConvParams& p) { return p.wg == 2; }));
    }
  CHECK(lower::winograd_product_space(problem(DType::f32, 3, 2)).empty());
  CHECK(lower::winograd_product_space(problem(DType::f16)).empty());
  CHECK(lower::winograd_product_space(problem(DType::f32, 7)).empty());
}

TEST_CASE("winograd_product_space: f32 products on the tensor cores (TC=1) only where the device limits allow them") {
  // The tuner passes TuningOptions::f32_tensor_cores in DeviceLimits, for CONV as for GEMM.
  auto tensor_core_sets = [](DType t, bool allowed) {
    lower::DeviceLimits device;
    device.sm = 90, device.f32_tensor_cores = allowed;
    const auto space = lower::winograd_product_space(problem(t, 3), {}, device);
    REQUIRE(!space.empty());
    return std::ranges::count_if(space, [](const ConvParams& p) { return p.tc == 1; });
  };
  CHECK(tensor_core_sets(DType::f32, true) > 0);
  CHECK(tensor_core_sets(DType::f32, false) == 0);
  CHECK(tensor_core_sets(DType::f64, false) > 0);  // f64's tensor cores are exact f64 arithmetic
}

TEST_CASE("ptxas assembles WG=1 and WG=2 sets across filter sizes, layouts and dtypes (sm_80, sm_90) with no spills") {
  std::mt19937_64 rng(11);
  struct Job {
    ir::Conv problem;
    ConvParams params;
    lower::ConvEpilogue epilogue;
    lower::Target target;
  };
  std::vector<Job> jobs;
  const std::pair<ImageLayout, FilterLayout> layouts[] = {{ImageLayout::nchw, FilterLayout::kcrs},
                                                          {ImageLayout::chwn, FilterLayout::crsk},
                                                          {ImageLayout::nhwc, FilterLayout::krsc}};
  for (DType t : {DType::f32, DType::f64})
    for (std::int64_t r : {2, 3, 4, 5})
      for (auto [il, fl] : layouts) {
        ir::Conv v = ir::dense_conv(t, 8, 33, 14, 15, 50, r, 5 - r % 2, 1, 1, 1, il, fl);
        auto space = lower::winograd_space(v);
        REQUIRE(!space.empty());
        // The largest register footprints are where spills would be: half the draws from the top.
        std::sort(space.begin(), space.end(), [&](const ConvParams& a, const ConvParams& b) {
          return lower::estimate_conv_registers(v, a) > lower::estimate_conv_registers(v, b);
        });
        int n = static_cast<int>(jobs.size());
        const ConvParams& heavy = space[rng() % std::max<size_t>(1, space.size() / 10)];
        const ConvParams& any = space[rng() % space.size()];
        for (const ConvParams* p : {&heavy, &any})
          jobs.push_back({v, *p, {n % 2 == 0, n % 3 == 0}, lower::parse_target(n % 4 < 2 ? "sm_90" : "sm_80")});
        // WG=2: its four kernels; the product is a GEMM kernel, which GEMM's own sweep covers too.
        auto product = lower::winograd_product_space(v);
        REQUIRE(!product.empty());
        jobs.push_back({v, product[rng() % product.size()], {n % 2 == 1, n % 3 == 1},
                        lower::parse_target(n % 4 < 2 ? "sm_80" : "sm_90")});
      }
  struct Result {
    std::string error;
    int registers = 0, spills = 0, estimate = 0;
  };
  std::vector<Result> results(jobs.size());
  auto start = std::chrono::steady_clock::now();
  test::parallel_for(jobs.size(), 2, [&](size_t i) {
    const Job& j = jobs[i];
    try {
      auto k = lower::emit_conv(j.problem, j.params, j.target, j.epilogue);
      if (k.transform_name.empty()) results[i].error = "no filter transform kernel";
      if (j.params.wg == 2 && (k.input_transform_name.empty() || k.output_transform_name.empty()))
        results[i].error = "no input or output transform kernel";
      for (const std::string& name : {k.main_name, k.transform_name, k.input_transform_name, k.output_transform_name}) {
        if (name.empty()) continue;
        auto report = lower::run_ptxas(k.ptx, j.target, name);
        if (!report.ok) results[i].error = "ptxas failed: " + report.log.substr(0, 400);
        results[i].spills += report.spill_stores + report.spill_loads;
        if (name == k.main_name) results[i].registers = report.registers;
      }
      results[i].estimate = lower::estimate_conv_registers(j.problem, j.params);
    } catch (const std::exception& e) {
      results[i].error = e.what();
    }
  });
  double error = 0, bias = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Result& r = results[i];
    std::string what = fmt::format("{} {} {}", ir::to_string(jobs[i].problem), jobs[i].params.str(), jobs[i].target.name());
    CHECK_MESSAGE(r.error.empty(), what << ": " << r.error);
    CHECK_MESSAGE(r.spills == 0, what << ": " << r.spills << " bytes of spills (" << r.registers << " registers)");
    error += std::abs(r.estimate - r.registers);
    bias += r.estimate - r.registers;
  }
  MESSAGE(fmt::format("{} Winograd sets through ptxas in {:.1f} s; register estimate off by {:.1f} on average "
                      "(estimate - ptxas: {:+.1f})",
                      jobs.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                      error / jobs.size(), bias / jobs.size()));
}
