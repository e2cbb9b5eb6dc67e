#include "collect_conv_plan.hpp"

#include "collect_plan.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/sampler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <tuple>
#include <utility>

namespace isaac::tune::cli {

namespace {

// Log-uniform over the integers [lo, hi] (as for GEMM).
std::int64_t log_uniform(std::int64_t lo, std::int64_t hi, std::mt19937_64& rng) {
  const double x = std::exp(std::log(double(lo)) + uniform01(rng) * (std::log(double(hi) + 1) - std::log(double(lo))));
  return std::clamp<std::int64_t>(std::int64_t(x), lo, hi);
}

// Square filters (3x3 twice as often as the others), and now and then a rectangular one.
constexpr std::pair<std::int64_t, std::int64_t> square_filters[] = {{1, 1}, {3, 3}, {3, 3}, {5, 5}, {7, 7}};
constexpr std::pair<std::int64_t, std::int64_t> rectangular_filters[] = {{5, 20}, {3, 10}, {5, 10}};
constexpr double rectangular_share = 0.125;
constexpr std::pair<ir::ImageLayout, ir::FilterLayout> layouts[] = {{ir::ImageLayout::nchw, ir::FilterLayout::kcrs},
                                                                    {ir::ImageLayout::chwn, ir::FilterLayout::crsk},
                                                                    {ir::ImageLayout::nhwc, ir::FilterLayout::krsc}};

// The input extent that gives `out` outputs.
std::int64_t input_size(std::int64_t out, std::int64_t filter, std::int64_t stride, std::int64_t pad,
                        std::int64_t dilation) {
  return (out - 1) * stride + dilation * (filter - 1) + 1 - 2 * pad;
}

}  // namespace

void ConvShapeOptions::validate() const {
  for (auto [name, lo, hi] : {std::tuple{"N", n_min, n_max}, {"C", c_min, c_max}, {"K", k_min, k_max},
                              {"P, Q", pq_min, pq_max}})
    if (lo < 1 || hi < lo || hi > (1 << 24))
      throw InvalidArgument(fmt::format("{} range [{}, {}]: need 1 <= min <= max <= 2^24", name, lo, hi));
  // The smallest problem: 1x1 filter, stride 1, no padding.
  const double smallest = 2.0 * double(n_min) * double(pq_min) * double(pq_min) * double(k_min) * double(c_min);
  if (!(max_flops >= smallest))
    throw InvalidArgument(fmt::format("--max-flops {}: below the smallest problem of the ranges ({})", max_flops, smallest));
  const double elements = double(n_min) * double(pq_min) * double(pq_min) * double(std::max(c_min, k_min));
  if (!(max_elements >= elements && max_elements < 0x1p31))
    throw InvalidArgument(fmt::format("--max-elements {}: need the smallest problem's tensors ({} elements) <= it < 2^31",
                                      max_elements, elements));
  if (dtypes.empty()) throw InvalidArgument("no dtype to draw (--dtypes)");
  if (!(aligned_share >= 0 && aligned_share <= 1))
    throw InvalidArgument(fmt::format("--aligned-share {}: a fraction in [0, 1]", aligned_share));
}

void align_conv_extents(const ConvShapeOptions& o, std::mt19937_64& rng, std::int64_t& n, std::int64_t& c,
                        std::int64_t& k) {
  if (o.aligned_share <= 0 || uniform01(rng) >= o.aligned_share) return;
  // A range without a multiple of 8 above the draw keeps the draw.
  auto round_up = [](std::int64_t x, std::int64_t hi) { return (x + 7) / 8 * 8 <= hi ? (x + 7) / 8 * 8 : x; };
  n = round_up(n, o.n_max), c = round_up(c, o.c_max), k = round_up(k, o.k_max);
}

ir::Conv random_conv(const ConvShapeOptions& o, std::mt19937_64& rng) {
  auto pick = [&](std::size_t count) { return std::min(std::size_t(uniform01(rng) * double(count)), count - 1); };
  const ir::DType dtype = o.dtypes[pick(o.dtypes.size())];
  const auto [il, fl] = layouts[pick(std::size(layouts))];
  const auto [r, s] = uniform01(rng) < rectangular_share ? rectangular_filters[pick(std::size(rectangular_filters))]
                                                         : square_filters[pick(std::size(square_filters))];
  const std::int64_t stride = uniform01(rng) < 0.2 ? 2 : 1;
  const std::int64_t dilation = uniform01(rng) < 0.1 ? 2 : 1;
  const std::int64_t pad = uniform01(rng) < 0.5 ? std::min(r, s) / 2 : 0;
  auto make = [&](std::int64_t n, std::int64_t c, std::int64_t k, std::int64_t p, std::int64_t q) {
    return ir::dense_conv(dtype, n, c, input_size(p, r, stride, pad, dilation), input_size(q, s, stride, pad, dilation),
                          k, r, s, stride, pad, dilation, il, fl);
  };
  for (int attempt = 0; attempt < 10000; ++attempt) {
    std::int64_t n = log_uniform(o.n_min, o.n_max, rng), c = log_uniform(o.c_min, o.c_max, rng),
                 k = log_uniform(o.k_min, o.k_max, rng);
    const std::int64_t p = log_uniform(o.pq_min, o.pq_max, rng), q = log_uniform(o.pq_min, o.pq_max, rng);
    align_conv_extents(o, rng, n, c, k);
    // Rejection keeps the distribution log-uniform inside the caps.
    if (input_size(p, r, stride, pad, dilation) < 1 || input_size(q, s, stride, pad, dilation) < 1) continue;
    const ir::Conv v = make(n, c, k, p, q);
    if (v.p != p || v.q != q) continue;  // not expected: the input size gives P x Q back
    if (lower::conv_flops(v) > o.max_flops) continue;
    if (double(v.n) * double(v.c) * double(v.h) * double(v.w) > o.max_elements ||
        double(v.n) * double(v.k) * double(v.p) * double(v.q) > o.max_elements)
      continue;
    return v;
  }
  // Nothing fits with this filter, stride and padding (tiny caps): the smallest problem of the
  // ranges, with a 1x1 filter (validate() checks that it fits).
  return ir::dense_conv(dtype, o.n_min, o.c_min, o.pq_min, o.pq_min, o.k_min, 1, 1, 1, 0, 1, il, fl);
}

std::string ConvPlanOptions::signature() const {
  return fmt::format("template=conv seed={} dtypes={} per-shape={} tc-share={} n={}..{} c={}..{} k={}..{} pq={}..{} "
                     "max-flops={} max-elements={} sm={} threads={} smem={} regs={}{}",
                     seed, dtype_list(shapes.dtypes), per_shape, tc_share, shapes.n_min, shapes.n_max, shapes.c_min, shapes.c_max,
                     shapes.k_min, shapes.k_max, shapes.pq_min, shapes.pq_max, shapes.max_flops, shapes.max_elements,
                     device.sm, device.max_threads_per_block, device.max_shared_per_block, device.registers_per_block,
                     shapes.aligned_share > 0 ? fmt::format(" aligned-share={}", shapes.aligned_share) : "");
}

ConvPlan::ConvPlan(ConvPlanOptions options)
    : options_(std::move(options)), shape_rng_(options_.seed), pick_rng_(options_.seed ^ 0x5a3d1e5c0ffee123ull) {
  options_.shapes.validate();
  if (options_.per_shape < 1) throw InvalidArgument(fmt::format("--per-shape {}: at least 1", options_.per_shape));
}

ConvPlanRow ConvPlan::next(bool params) {
  const auto per_shape = std::uint64_t(options_.per_shape);
  const auto slot = std::size_t(next_ % per_shape);
  if (slot == 0) {
    shape_ = random_conv(options_.shapes, shape_rng_);
    // The draws come first, so that the rows after these do not depend on the space.
    draws_.clear();
    for (std::uint64_t i = 0; i < per_shape; ++i) draws_.push_back(uniform01(pick_rng_));
    picks_.clear();
    picked_ = false;
  }
  if (params && !picked_) {
    // Uniform over the legal space: distinct sets (a partial shuffle) while the space has enough,
    // then repeats. With --tc-share, the first rows of an input come from its tensor-core sets alone,
    // every other one from its wgmma (TC=2) sets where it has both kinds (f16 on sm_90), as GEMM's.
    std::vector<lower::ConvParams> space = lower::conv_space(shape_, {}, options_.device), mma, wgmma;
    for (const lower::ConvParams& p : space)
      if (p.tc) (p.tc == 2 ? wgmma : mma).push_back(p);
    const auto tc_rows = mma.empty() && wgmma.empty()
                             ? std::size_t(0)
                             : std::size_t(std::lround(options_.tc_share * double(draws_.size())));
    auto pick = [&](std::vector<lower::ConvParams>& from, std::size_t i, double draw) {
      if (i < from.size()) {
        const std::size_t j = i + std::min(std::size_t(draw * double(from.size() - i)), from.size() - i - 1);
        std::swap(from[i], from[j]);
        return from[i];
      }
      return from[std::min(std::size_t(draw * double(from.size())), from.size() - 1)];
    };
    std::size_t next_mma = 0, next_wgmma = 0;
    for (std::size_t i = 0; i < draws_.size() && !space.empty(); ++i) {
      if (i >= tc_rows) {
        picks_.push_back(pick(space, i - tc_rows, draws_[i]));
      } else if (!wgmma.empty() && (mma.empty() || i % 2 == 1)) {
        picks_.push_back(pick(wgmma, next_wgmma++, draws_[i]));
      } else {
        picks_.push_back(pick(mma, next_mma++, draws_[i]));
      }
    }
    picked_ = true;
  }
  ConvPlanRow row;
  row.index = next_;
  row.shape = next_ / per_shape;
  row.problem = shape_;
  row.params_planned = picked_;
  if (picked_ && slot < picks_.size()) row.params = picks_[slot];
  ++next_;
  return row;
}

}  // namespace isaac::tune::cli
