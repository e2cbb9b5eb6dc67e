#include <isaac/error.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/tune/sampler.hpp>

#include <fmt/format.h>

#include <cmath>

namespace isaac::tune {

namespace {

// The value lists of lower::gemm_space (lib/lower/gemm_space.cpp), and ACC's two accumulators.
constexpr int ml_values[] = {16, 32, 64, 128, 256};
constexpr int thread_tile_values[] = {1, 2, 4, 8, 16};
constexpr int u_values[] = {4, 8, 16, 32, 64};  // 64: tensor-core sets only
constexpr int ks_values[] = {1, 2};
constexpr int kl_values[] = {1, 2, 4, 8};
constexpr int vector_values[] = {1, 2, 4, 8};
constexpr int db_values[] = {0, 1};
constexpr int sw_values[] = {1, 8};
constexpr int acc_values[] = {32, 16};
constexpr int tc_values[] = {0, 1, 2};

using P = GemmSampler::Parameter;

// Index of a categorical draw: u in [0, 1) against weights alpha + counts[i].
int draw_index(double u, double alpha, const std::vector<std::uint64_t>& counts, std::uint64_t total) {
  double target = u * (alpha * double(counts.size()) + double(total));
  const int last = int(counts.size()) - 1;
  for (int i = 0; i < last; ++i) {
    target -= alpha + double(counts[std::size_t(i)]);
    if (target < 0) return i;
  }
  return last;
}

lower::GemmParams assemble(const std::array<int, GemmSampler::parameter_count>& index, const ir::Gemm& problem) {
  auto v = [&](P p) { return GemmSampler::values(p)[std::size_t(index[p])]; };
  lower::GemmParams p;
  p.ml = v(P::ML), p.nl = v(P::NL), p.ms = v(P::MS), p.ns = v(P::NS), p.u = v(P::U), p.ks = v(P::KS);
  p.kl = v(P::KL), p.kg = v(P::KG), p.va = v(P::VA), p.vb = v(P::VB), p.db = v(P::DB), p.sw = v(P::SW);
  p.acc32 = problem.dtype == ir::DType::f16 ? int(v(P::ACC) == 32) : 1;
  p.tc = ir::is_16_bit(problem.dtype) || problem.dtype == ir::DType::f64 ? v(P::TC) : 0;
  fit_load_layouts(problem, p);
  return p;
}

}  // namespace

std::string_view GemmSampler::name(Parameter p) {
  static constexpr std::string_view names[] = {"ML", "NL", "MS", "NS", "U",  "KS", "KL",
                                               "KG", "VA", "VB", "DB", "SW", "ACC", "TC"};
  if (p < 0 || p >= parameter_count) throw InvalidArgument(fmt::format("GemmSampler: no parameter {}", int(p)));
  return names[p];
}

std::span<const int> GemmSampler::values(Parameter p) {
  switch (p) {
    case ML:
    case NL: return ml_values;
    case MS:
    case NS: return thread_tile_values;
    case U: return u_values;
    case KS: return ks_values;
    case KL: return kl_values;
    case KG: return lower::gemm_kg_values;
    case VA:
    case VB: return vector_values;
    case DB: return db_values;
    case SW: return sw_values;
    case ACC: return acc_values;
    case TC: return tc_values;
    default: break;
  }
  throw InvalidArgument(fmt::format("GemmSampler: no parameter {}", int(p)));
}

GemmSampler::GemmSampler(const lower::DeviceLimits& device, SamplerOptions options)
    : device_(device), options_(options) {
  if (!(options.alpha > 0) || !std::isfinite(options.alpha))
    throw InvalidArgument(fmt::format("GemmSampler: the Dirichlet concentration alpha must be a finite number > 0 "
                                      "(got {}); 1 is the uniform prior",
                                      options.alpha));
  for (int p = 0; p < parameter_count; ++p) counts_[std::size_t(p)].assign(values(Parameter(p)).size(), 0);
}

double GemmSampler::probability(Parameter p, int i) const {
  const auto& c = counts_.at(std::size_t(p));
  return (options_.alpha + double(c.at(std::size_t(i)))) /
         (options_.alpha * double(c.size()) + double(totals_[std::size_t(p)]));
}

std::optional<lower::GemmParams> GemmSampler::sample(const ir::Gemm& problem, std::mt19937_64& rng,
                                                     int max_proposals) {
  const bool f16 = problem.dtype == ir::DType::f16;
  const bool tc = ir::is_16_bit(problem.dtype) || problem.dtype == ir::DType::f64;
  std::array<int, parameter_count> index{};
  for (int n = 0; n < max_proposals; ++n) {
    for (int p = 0; p < parameter_count; ++p) {
      if ((p == ACC && !f16) || (p == TC && !tc)) continue;  // no draw: f32's sequence does not depend on them
      index[std::size_t(p)] = draw_index(uniform01(rng), options_.alpha, counts_[std::size_t(p)], totals_[std::size_t(p)]);
    }
    lower::GemmParams params = assemble(index, problem);
    ++proposals_;
    // gemm_legal is check_gemm's verdict without formatting the reason.
    if (!lower::gemm_legal(problem, params, device_)) continue;
    ++accepted_;
    for (int p = 0; p < parameter_count; ++p) {
      if ((p == ACC && !f16) || (p == TC && !tc)) continue;
      ++counts_[std::size_t(p)][std::size_t(index[std::size_t(p)])];
      ++totals_[std::size_t(p)];
    }
    return params;
  }
  return std::nullopt;
}

lower::GemmParams uniform_gemm_proposal(const ir::Gemm& problem, std::mt19937_64& rng) {
  std::array<int, GemmSampler::parameter_count> index{};
  for (int p = 0; p < GemmSampler::parameter_count; ++p) {
    if (p == GemmSampler::ACC && problem.dtype != ir::DType::f16) continue;
    if (p == GemmSampler::TC && !ir::is_16_bit(problem.dtype) && problem.dtype != ir::DType::f64) continue;
    const auto n = GemmSampler::values(P(p)).size();
    index[std::size_t(p)] = std::min(int(uniform01(rng) * double(n)), int(n) - 1);
  }
  return assemble(index, problem);
}

double uniform_acceptance_rate(const ir::Gemm& problem, const lower::DeviceLimits& device, int proposals,
                               std::uint64_t seed) {
  if (proposals < 1) throw InvalidArgument(fmt::format("uniform_acceptance_rate: {} proposals; at least 1", proposals));
  std::mt19937_64 rng(seed);
  int legal = 0;
  for (int n = 0; n < proposals; ++n) legal += lower::gemm_legal(problem, uniform_gemm_proposal(problem, rng), device);
  return double(legal) / double(proposals);
}

}  // namespace isaac::tune
