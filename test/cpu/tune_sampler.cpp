// The GEMM parameter sampler (issue 6, "Sampler and data"; paper §4.1): every sample is legal, the
// learned sampler is accepted far more often than uniform proposals, it is deterministic for a seed,
// its counts move toward the legal values, and a bad concentration is refused.
#include <isaac/error.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/tune/sampler.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace isaac;
using namespace isaac::tune;
using P = GemmSampler::Parameter;

namespace {

// Random dense problems of one dtype, log-uniform sizes (a smaller version of collect's inputs).
ir::Gemm random_problem(ir::DType dtype, std::mt19937_64& rng) {
  auto size = [&](double lo, double hi) {
    return std::int64_t(std::exp(std::log(lo) + uniform01(rng) * (std::log(hi) - std::log(lo))));
  };
  const std::int64_t m = size(16, 4096), n = size(16, 4096), k = size(16, 8192);
  const auto layout = rng() >> 62;
  return ir::dense_gemm(dtype, m, n, k, layout & 2, layout & 1);
}

int index_of(P p, int value) {
  const auto v = GemmSampler::values(p);
  return int(std::find(v.begin(), v.end(), value) - v.begin());
}

}  // namespace

TEST_CASE("every sample is legal, with the load layouts fitted") {
  const lower::DeviceLimits device;
  std::mt19937_64 rng(11);
  for (ir::DType dtype : {ir::DType::f32, ir::DType::f16, ir::DType::f64}) {
    GemmSampler sampler(device);
    std::set<std::string> distinct;
    bool acc16 = false;
    for (int s = 0; s < 40; ++s) {
      const ir::Gemm g = random_problem(dtype, rng);
      for (int i = 0; i < 5; ++i) {
        const auto p = sampler.sample(g, rng);
        REQUIRE(p.has_value());
        const auto legal = lower::check_gemm(g, *p, device);
        INFO(ir::to_string(g), " ", p->str(), ": ", legal.reason);
        CHECK(legal.legal);
        lower::GemmParams fitted = *p;
        fit_load_layouts(g, fitted);
        CHECK(fitted == *p);
        if (dtype != ir::DType::f16) CHECK(p->acc32 == 1);
        acc16 |= !p->acc32;
        distinct.insert(p->str());
      }
    }
    CHECK(sampler.accepted() == 200);
    CHECK(sampler.proposals() >= sampler.accepted());
    CHECK(distinct.size() > 100);  // a sampler, not a constant
    if (dtype == ir::DType::f16) CHECK(acc16);  // ACC is sampled for f16
  }
}

TEST_CASE("the value lists are gemm_space's") {
  // Every set of the enumerated space (for a small problem) takes its values from the sampler's lists.
  const ir::Gemm g = ir::dense_gemm(ir::DType::f64, 64, 48, 40, false, true);
  const auto space = lower::gemm_space(g);
  REQUIRE(!space.empty());
  auto in = [](P p, int v) {
    const auto values = GemmSampler::values(p);
    return std::find(values.begin(), values.end(), v) != values.end();
  };
  for (const auto& p : space) {
    INFO(p.str());
    REQUIRE((in(P::ML, p.ml) && in(P::NL, p.nl) && in(P::MS, p.ms) && in(P::NS, p.ns) && in(P::U, p.u) &&
             in(P::KS, p.ks) && in(P::KL, p.kl) && in(P::KG, p.kg) && in(P::VA, p.va) && in(P::VB, p.vb) &&
             in(P::DB, p.db) && in(P::SW, p.sw) && in(P::TC, p.tc)));
  }
  CHECK(GemmSampler::values(P::ML).size() == 5);
  CHECK(GemmSampler::values(P::KG).size() == std::size(lower::gemm_kg_values));
  CHECK(GemmSampler::values(P::ACC).size() == 2);
}

TEST_CASE("the learned sampler is accepted far more often than uniform proposals") {
  const lower::DeviceLimits device;
  // An aligned square f64 problem, an f32 problem whose odd M allows only scalar loads of A, and an
  // f16 problem with a short K.
  const std::vector<ir::Gemm> problems = {ir::dense_gemm(ir::DType::f64, 1024, 1024, 1024, true, false),
                                          ir::dense_gemm(ir::DType::f32, 127, 2048, 4099, false, false),
                                          ir::dense_gemm(ir::DType::f16, 3000, 96, 48, false, true)};
  for (const ir::Gemm& g : problems) {
    GemmSampler sampler(device);
    std::mt19937_64 rng(5);
    // Learn on random problems of the dtype and on this one, then measure on this one.
    for (int i = 0; i < 200; ++i) REQUIRE(sampler.sample(random_problem(g.dtype, rng), rng));
    for (int i = 0; i < 100; ++i) REQUIRE(sampler.sample(g, rng));
    const auto proposals = sampler.proposals(), accepted = sampler.accepted();
    for (int i = 0; i < 300; ++i) REQUIRE(sampler.sample(g, rng));
    const double learned = double(sampler.accepted() - accepted) / double(sampler.proposals() - proposals);
    const double uniform = uniform_acceptance_rate(g, device, 100000, 3);
    MESSAGE(ir::to_string(g), ": learned ", learned, ", uniform ", uniform);
    CHECK(uniform > 0);
    CHECK(learned > 5 * uniform);
    CHECK(learned > 0.2);
  }
}

TEST_CASE("uniform_acceptance_rate counts the legal uniform proposals") {
  const lower::DeviceLimits device;
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 512, 512, 512, false, true);
  std::mt19937_64 rng(9);
  int legal = 0;
  for (int i = 0; i < 5000; ++i) legal += lower::check_gemm(g, uniform_gemm_proposal(g, rng), device).legal;
  CHECK(uniform_acceptance_rate(g, device, 5000, 9) == doctest::Approx(legal / 5000.0));
  CHECK(uniform_acceptance_rate(g, device, 5000, 9) == uniform_acceptance_rate(g, device, 5000, 9));
  CHECK_THROWS_AS(uniform_acceptance_rate(g, device, 0, 1), InvalidArgument);
}

TEST_CASE("the same seed gives the same sequence") {
  const lower::DeviceLimits device;
  auto run = [&](std::uint64_t seed) {
    GemmSampler sampler(device);
    std::mt19937_64 rng(seed);
    std::vector<std::string> out;
    for (int i = 0; i < 60; ++i) {
      const ir::Gemm g = random_problem(i % 2 ? ir::DType::f16 : ir::DType::f32, rng);
      out.push_back(ir::to_string(g) + " " + sampler.sample(g, rng).value().str());
    }
    out.push_back(std::to_string(sampler.proposals()));
    return out;
  };
  CHECK(run(42) == run(42));
  CHECK(run(42) != run(43));
  // The draws are this file's own: the first values of mt19937_64(1) map to fixed numbers everywhere.
  std::mt19937_64 rng(1);
  CHECK(uniform01(rng) == doctest::Approx(std::ldexp(double(std::mt19937_64(1)() >> 11), -53)));
}

TEST_CASE("alpha must be a finite number above 0") {
  const lower::DeviceLimits device;
  for (double alpha : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
    INFO(alpha);
    try {
      GemmSampler sampler(device, SamplerOptions{.alpha = alpha});
      FAIL("alpha was accepted");
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()).find("alpha must be a finite number > 0") != std::string::npos);
    }
  }
  CHECK_NOTHROW(GemmSampler(device, SamplerOptions{.alpha = 0.01}));
}

TEST_CASE("the counts move toward the legal values") {
  const lower::DeviceLimits device;
  // Odd M in layout NN: A's contiguous extent is M, so only VA = 1 is legal; K = 24 has at most six
  // tiles of U = 4, so KG >= 8 is never legal.
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 1001, 512, 24, false, false);
  GemmSampler sampler(device, SamplerOptions{.alpha = 1});
  for (int p = 0; p < GemmSampler::parameter_count; ++p) {
    const auto n = GemmSampler::values(P(p)).size();
    for (std::size_t i = 0; i < n; ++i) CHECK(sampler.probability(P(p), int(i)) == doctest::Approx(1.0 / double(n)));
  }
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300; ++i) REQUIRE(sampler.sample(g, rng));
  CHECK(sampler.count(P::VA, index_of(P::VA, 1)) == 300);
  for (int v : {2, 4, 8}) CHECK(sampler.count(P::VA, index_of(P::VA, v)) == 0);
  CHECK(sampler.probability(P::VA, index_of(P::VA, 1)) == doctest::Approx(301.0 / 304.0));
  for (int v : {8, 16, 32, 64, 128, 256}) CHECK(sampler.count(P::KG, index_of(P::KG, v)) == 0);
  CHECK(sampler.probability(P::KG, index_of(P::KG, 256)) < 0.01);
  double kg_sum = 0;
  for (int i = 0; i < int(GemmSampler::values(P::KG).size()); ++i) kg_sum += sampler.probability(P::KG, i);
  CHECK(kg_sum == doctest::Approx(1.0));
  // ACC is only counted for f16.
  CHECK(sampler.count(P::ACC, 0) + sampler.count(P::ACC, 1) == 0);
  // Acceptance improves as the counts learn: the last 100 samples cost fewer proposals than the first.
  GemmSampler fresh(device);
  std::mt19937_64 rng2(3);
  for (int i = 0; i < 100; ++i) REQUIRE(fresh.sample(g, rng2));
  const auto first = fresh.proposals();
  for (int i = 0; i < 200; ++i) REQUIRE(fresh.sample(g, rng2));
  const auto middle = fresh.proposals();
  for (int i = 0; i < 100; ++i) REQUIRE(fresh.sample(g, rng2));
  CHECK(fresh.proposals() - middle < first);
}

TEST_CASE("a problem without a legal set gives up after max_proposals") {
  lower::DeviceLimits device;
  device.sm = 70;
  GemmSampler sampler(device);
  std::mt19937_64 rng(1);
  // bf16 needs sm_80: check_gemm refuses every set.
  const ir::Gemm g = ir::dense_gemm(ir::DType::bf16, 64, 64, 64, false, false);
  CHECK_FALSE(sampler.sample(g, rng, 50).has_value());
  CHECK(sampler.proposals() == 50);
  CHECK(sampler.accepted() == 0);
  CHECK(sampler.acceptance_rate() == 0);
}
