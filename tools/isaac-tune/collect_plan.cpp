#include "collect_plan.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/heuristic.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace isaac::tune::cli {

void ShapeOptions::validate() const {
  for (auto [name, lo, hi] : {std::tuple{"M", m_min, m_max}, {"N", n_min, n_max}, {"K", k_min, k_max}})
    if (lo < 1 || hi < lo || hi > 0x7fffffff)
      throw InvalidArgument(fmt::format("{} range [{}, {}]: need 1 <= min <= max < 2^31", name, lo, hi));
  if (!(max_mnk >= double(m_min) * double(n_min) * double(k_min)))
    throw InvalidArgument(fmt::format("--max-mnk {}: below the smallest M*N*K of the ranges ({})", max_mnk,
                                      double(m_min) * double(n_min) * double(k_min)));
  if (dtypes.empty()) throw InvalidArgument("no dtype to draw (--dtypes)");
  if (!(aligned_share >= 0 && aligned_share <= 1))
    throw InvalidArgument(fmt::format("--aligned-share {}: a fraction in [0, 1]", aligned_share));
}

std::vector<ir::DType> parse_dtype_list(const std::string& text) {
  std::vector<ir::DType> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const ir::DType d = ir::parse_dtype(item);
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw InvalidArgument(fmt::format("--dtypes {}: {} is listed twice", text, item));
    out.push_back(d);
    pos = comma + 1;
  }
  return out;
}

std::string dtype_list(const std::vector<ir::DType>& dtypes) {
  std::string out;
  for (ir::DType d : dtypes) out += fmt::format("{}{}", out.empty() ? "" : ",", ir::name(d));
  return out;
}

std::string layout_name(const ir::Gemm& g) { return fmt::format("{}{}", g.a_trans ? 'T' : 'N', g.b_trans ? 'T' : 'N'); }

namespace {

// Log-uniform over the integers [lo, hi].
std::int64_t log_uniform(std::int64_t lo, std::int64_t hi, std::mt19937_64& rng) {
  const double x = std::exp(std::log(double(lo)) + uniform01(rng) * (std::log(double(hi) + 1) - std::log(double(lo))));
  return std::clamp<std::int64_t>(std::int64_t(x), lo, hi);
}

}  // namespace

ir::Gemm random_gemm(const ShapeOptions& o, std::mt19937_64& rng) {
  const ir::DType dtype = o.dtypes[std::min<std::size_t>(std::size_t(uniform01(rng) * double(o.dtypes.size())),
                                                         o.dtypes.size() - 1)];
  const int layout = int(rng() >> 62);  // 2 bits: AT, BT
  for (int attempt = 0;; ++attempt) {
    std::int64_t m = log_uniform(o.m_min, o.m_max, rng), n = log_uniform(o.n_min, o.n_max, rng),
                 k = log_uniform(o.k_min, o.k_max, rng);
    // Rejection keeps the distribution log-uniform inside the cap; the minimum always fits (validate).
    if (double(m) * double(n) * double(k) <= o.max_mnk || attempt >= 10000) {
      if (attempt >= 10000) m = o.m_min, n = o.n_min, k = o.k_min;
      // Drawn only when asked for, so that plans without it keep their inputs.
      if (o.aligned_share > 0 && uniform01(rng) < o.aligned_share)
        for (std::int64_t* extent : {&m, &n, &k}) *extent = std::min<std::int64_t>((*extent + 7) / 8 * 8, 0x7ffffff8);
      return ir::dense_gemm(dtype, m, n, k, layout & 2, layout & 1);
    }
  }
}

std::string PlanOptions::signature() const {
  return fmt::format("template=gemm seed={} dtypes={} per-shape={} m={}..{} n={}..{} k={}..{} max-mnk={} alpha={} uniform-share={} "
                     "tc-share={} max-proposals={} sm={} threads={} smem={} regs={}{}",
                     seed, dtype_list(shapes.dtypes), per_shape, shapes.m_min, shapes.m_max, shapes.n_min, shapes.n_max,
                     shapes.k_min, shapes.k_max, shapes.max_mnk, alpha, uniform_share, tc_share, max_proposals, device.sm,
                     device.max_threads_per_block, device.max_shared_per_block, device.registers_per_block,
                     shapes.aligned_share > 0 ? fmt::format(" aligned-share={}", shapes.aligned_share) : "");
}

Plan::Plan(PlanOptions options)
    : options_(std::move(options)),
      shape_rng_(options_.seed),
      sample_rng_(options_.seed ^ 0x5a3d1e5c0ffee123ull),
      mix_rng_(options_.seed ^ 0x3c6ef372fe94f82bull) {
  options_.shapes.validate();
  if (options_.per_shape < 1) throw InvalidArgument(fmt::format("--per-shape {}: at least 1", options_.per_shape));
  if (!(options_.uniform_share >= 0 && options_.uniform_share <= 1))
    throw InvalidArgument(fmt::format("--uniform-share {}: a fraction in [0, 1]", options_.uniform_share));
  if (options_.max_proposals < 1)
    throw InvalidArgument(fmt::format("--max-proposals {}: at least 1", options_.max_proposals));
  for (ir::DType d : options_.shapes.dtypes)
    samplers_.emplace(d, GemmSampler(options_.device, SamplerOptions{.alpha = options_.alpha}));
}

PlanRow Plan::next() {
  PlanRow row;
  row.index = next_;
  row.shape = next_ / std::uint64_t(options_.per_shape);
  if (next_ % std::uint64_t(options_.per_shape) == 0) {
    shape_ = random_gemm(options_.shapes, shape_rng_);
    wgmma_sets_.reset();
  }
  row.problem = shape_;
  // The mix draws from its own engine, so that uniform_share = 0 leaves the learned rows unchanged.
  row.uniform = options_.uniform_share > 0 && uniform01(mix_rng_) < options_.uniform_share;
  const bool tensor_cores = options_.tc_share > 0 && uniform01(mix_rng_) < options_.tc_share;
  if (tensor_cores) {
    row.uniform = true;
    // On sm_90, half of the f16 and f32 tensor-core rows are wgmma (TC=2) sets, uniform over the
    // input's legal ones (none where its contiguous extents are not whole 16-byte copies: those rows
    // take TC=1).
    if ((ir::is_16_bit(shape_.dtype) || shape_.dtype == ir::DType::f32) && options_.device.sm == 90 &&
        uniform01(mix_rng_) < 0.5) {
      if (!wgmma_sets_) {
        wgmma_sets_.emplace();
        for (const auto& p : lower::gemm_space(shape_, options_.device))
          if (p.tc == 2) wgmma_sets_->push_back(p);
      }
      if (!wgmma_sets_->empty()) row.params = (*wgmma_sets_)[mix_rng_() % wgmma_sets_->size()];
    }
    // The depths the tensor-core sets take (U = 64 is theirs alone).
    constexpr int depths[] = {16, 32, 64};
    for (int n = 0; n < options_.max_proposals && !row.params; ++n) {
      lower::GemmParams p = uniform_gemm_proposal(shape_, mix_rng_);
      p.tc = 1, p.acc32 = 1, p.ks = 1;  // what TC=1 requires, so that fewer proposals are refused
      p.u = depths[mix_rng_() % 3];
      tune::fit_load_layouts(shape_, p);
      if (lower::gemm_legal(shape_, p, options_.device)) row.params = p;
    }
  } else if (row.uniform) {
    for (int n = 0; n < options_.max_proposals && !row.params; ++n) {
      const lower::GemmParams p = uniform_gemm_proposal(shape_, mix_rng_);
      if (lower::gemm_legal(shape_, p, options_.device)) row.params = p;
    }
  } else {
    row.params = samplers_.at(shape_.dtype).sample(shape_, sample_rng_, options_.max_proposals);
  }
  if (row.params) lower::fit_gemm_pipeline_depth(shape_, *row.params, options_.device);
  ++next_;
  return row;
}

}  // namespace isaac::tune::cli
