// The CONV template's WG=1 (Winograd F(2x2, RxS)) kernels without a GPU: the transforms compute a
// correlation, the text form, the legality rules and their reasons, the search space, and ptxas
// assembles sets across filter sizes, layouts and dtypes for sm_80 and sm_90 with no spills.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/lower/target.hpp>
#include <isaac/lower/winograd.hpp>

#include "support/parallel_compile.hpp"

#include <fmt/format.h>

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

TEST_CASE("Winograd F(2, r): At [(G g) . (Bt d)] is the correlation of d and g, and Bt is exact in binary") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int r = 2; r <= 5; ++r) {
    CAPTURE(r);
    const lower::WinogradMatrices m = lower::winograd_matrices(r);
    REQUIRE(m.alpha == r + 1);
    REQUIRE(m.at.size() == static_cast<size_t>(2 * m.alpha));
    REQUIRE(m.g.size() == static_cast<size_t>(m.alpha * r));
    REQUIRE(m.bt.size() == static_cast<size_t>(m.alpha * m.alpha));
    for (double x : m.bt) CHECK(std::ldexp(x, 2) == std::round(std::ldexp(x, 2)));  // multiples of 1/4
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
      for (int i = 0; i < 2; ++i) {
        double y = 0, direct = 0;
        for (int e = 0; e < m.alpha; ++e) y += m.at[i * m.alpha + e] * product[e];
        for (int j = 0; j < r; ++j) direct += d[i + j] * g[j];
        CHECK(std::abs(y - direct) < 1e-12);
      }
    }
  }
  CHECK_THROWS_WITH_AS(lower::winograd_matrices(6), doctest::Contains("2 to 5 taps"), InvalidArgument);
  CHECK_THROWS_AS(lower::winograd_matrices(1), InvalidArgument);
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
  refused(problem(), winograd("PL=32,KL=32,PS=2,KS=2,U=8,WG=2"), "WG=2 must be 0");
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

TEST_CASE("ptxas assembles WG=1 sets across filter sizes, layouts and dtypes (sm_80, sm_90) with no spills") {
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
      for (const std::string& name : {k.main_name, k.transform_name}) {
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
  MESSAGE(fmt::format("{} WG=1 kernels through ptxas in {:.1f} s; register estimate off by {:.1f} on average "
                      "(estimate - ptxas: {:+.1f})",
                      jobs.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                      error / jobs.size(), bias / jobs.size()));
}
