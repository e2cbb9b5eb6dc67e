#pragma once
// The GEMM parameter sampler of the paper's §4.1: one categorical distribution per template parameter
// (ML, NL, MS, NS, U, KS, KL, KG, VA, VB, DB, SW, ACC for f16 and TC for f16 and f64), each over the values that
// lower::gemm_space enumerates, with a Dirichlet prior. The probability of value v of a parameter is
// (alpha + the number of accepted samples that took v) / (the sum of the same over its values).
// A proposal draws every parameter independently, fills LA and LB with tune::fit_load_layouts, and is
// accepted when the one legality function (lower::check_gemm) accepts it for the problem; accepted
// samples update the counts, so the sampler learns which values tend to be legal. It learns across
// problems: keep one sampler per dtype and draw for many shapes with it.
//
// Deterministic for a seed: every draw comes from the mt19937_64 passed in, through this file's own
// mapping of its output to [0, 1) (std::uniform_*_distribution differ between standard libraries).
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace isaac::tune {

struct SamplerOptions {
  double alpha = 1.0;  // the Dirichlet concentration: > 0 (small = learns fast, large = stays uniform)
};

class GemmSampler {
 public:
  // The sampled parameters, in this order, with their value lists (gemm_space's; ACC: 32 or 16).
  enum Parameter { ML, NL, MS, NS, U, KS, KL, KG, VA, VB, DB, SW, ACC, TC, parameter_count };
  static std::string_view name(Parameter p);
  static std::span<const int> values(Parameter p);

  // Throws InvalidArgument unless options.alpha is finite and > 0.
  explicit GemmSampler(const lower::DeviceLimits& device, SamplerOptions options = {});

  // Draws proposals until one is legal for `problem` (at most max_proposals; nullopt then). ACC is
  // drawn for f16 problems only, TC for f16 and f64 (others get ACC=32, TC=0 and leave their counts
  // alone).
  std::optional<lower::GemmParams> sample(const ir::Gemm& problem, std::mt19937_64& rng, int max_proposals = 100000);

  std::uint64_t proposals() const { return proposals_; }
  std::uint64_t accepted() const { return accepted_; }
  double acceptance_rate() const { return proposals_ ? double(accepted_) / double(proposals_) : 0.0; }

  // Accepted samples that took value index i of parameter p, and the probability of drawing it now.
  std::uint64_t count(Parameter p, int i) const { return counts_[p][std::size_t(i)]; }
  double probability(Parameter p, int i) const;
  const SamplerOptions& options() const { return options_; }

 private:
  lower::DeviceLimits device_;
  SamplerOptions options_;
  std::array<std::vector<std::uint64_t>, parameter_count> counts_;
  std::array<std::uint64_t, parameter_count> totals_{};
  std::uint64_t proposals_ = 0, accepted_ = 0;
};

// A uniform draw in [0, 1) from the engine's next 53 bits: the same sequence on every platform.
inline double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1p-53; }

// One proposal with every parameter uniform over the same value lists (LA/LB fitted as above).
lower::GemmParams uniform_gemm_proposal(const ir::Gemm& problem, std::mt19937_64& rng);

// The fraction of `proposals` uniform proposals that check_gemm accepts for `problem`: the baseline
// of the paper's Table 1.
double uniform_acceptance_rate(const ir::Gemm& problem, const lower::DeviceLimits& device, int proposals,
                               std::uint64_t seed);

}  // namespace isaac::tune
