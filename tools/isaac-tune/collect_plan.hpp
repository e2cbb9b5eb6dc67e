#pragma once
// The plan of `isaac-tune collect` (and the shapes of `isaac-tune sampler`): random GEMM inputs, and
// for each, parameter sets drawn by the learned sampler (one sampler per dtype). The plan is a pure
// function of its settings: row i is the same in every run with the same settings, because the rows
// are generated in order from the seed (the samplers learn as they go, so row i depends on the rows
// before it); a resumed run regenerates the rows it skips.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/sampler.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace isaac::tune::cli {

struct ShapeOptions {
  std::int64_t m_min = 16, m_max = 8192;
  std::int64_t n_min = 16, n_max = 8192;
  std::int64_t k_min = 16, k_max = 16384;
  double max_mnk = 0x1p34;  // M*N*K at most this (redrawn otherwise), so that one kernel stays short
  // The share of inputs with M, N and K rounded up to multiples of 8: only those admit 16-byte copies
  // of every operand, and TC=2 at all.
  double aligned_share = 0;
  std::vector<ir::DType> dtypes = {ir::DType::f32, ir::DType::f16, ir::DType::f64};
  void validate() const;  // throws InvalidArgument naming the bad option
};

// "f32,f16,f64" -> dtypes; throws InvalidArgument for an unknown or repeated name.
std::vector<ir::DType> parse_dtype_list(const std::string& text);
std::string dtype_list(const std::vector<ir::DType>& dtypes);
std::string layout_name(const ir::Gemm& g);  // "NN", "NT", "TN" or "TT"

// A dense GEMM, batch 1: M, N, K log-uniform in their ranges with M*N*K capped, layout and dtype uniform.
ir::Gemm random_gemm(const ShapeOptions& o, std::mt19937_64& rng);

struct PlanOptions {
  ShapeOptions shapes;
  int per_shape = 8;             // parameter sets per input
  std::uint64_t seed = 1;
  double alpha = 1.0;            // the samplers' Dirichlet concentration
  // The share of rows drawn uniformly over the legal space (uniform proposals until one is legal)
  // instead of by the learned sampler, whose counts favour the values legal with most others (small
  // tiles) and so cover the space unevenly; `isaac-tune sampler` shows how much.
  double uniform_share = 0.0;
  // f16, f32 and f64: the share of rows drawn uniformly over the tensor-core sets alone, which are a few
  // percent of the legal space and would otherwise be rare in the data. On sm_90 half of the f16 ones
  // are drawn from the input's legal TC=2 sets (uniform proposals almost never meet their rules).
  double tc_share = 0.0;
  int max_proposals = 100000;    // per parameter set; a row without a legal set is "illegal"
  lower::DeviceLimits device;    // legality is checked against these
  // One line that identifies the plan ("template=gemm seed=1 dtypes=f32,f16 per-shape=8 ..."):
  // written at the top of the CSV and compared on --resume.
  std::string signature() const;
};

struct PlanRow {
  std::uint64_t index = 0;
  std::uint64_t shape = 0;                 // index / per_shape
  ir::Gemm problem;
  std::optional<lower::GemmParams> params;  // none: the sampler found no legal set
  bool uniform = false;                     // drawn uniformly over the legal space (uniform_share)
};

class Plan {
 public:
  explicit Plan(PlanOptions options);
  // Row `next_index()`, then the one after it: call in order (each call draws from the samplers).
  PlanRow next();
  std::uint64_t next_index() const { return next_; }
  const PlanOptions& options() const { return options_; }
  const GemmSampler& sampler(ir::DType dtype) const { return samplers_.at(dtype); }

 private:
  PlanOptions options_;
  std::mt19937_64 shape_rng_, sample_rng_, mix_rng_;
  std::map<ir::DType, GemmSampler> samplers_;
  std::uint64_t next_ = 0;
  ir::Gemm shape_;
  std::optional<std::vector<lower::GemmParams>> wgmma_sets_;  // shape_'s legal TC=2 sets, once needed
};

}  // namespace isaac::tune::cli
