#include "collect_conv_gpu.hpp"

#include "collect_conv_check.hpp"

#include <isaac/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

namespace isaac::tune::cli {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The operands' periods: primes, so that a wrong offset that the tensors' (mostly power-of-two)
// strides could produce seldom lands on an element of the same value.
constexpr std::size_t input_period = 1048573, filter_period = 1048571;

}  // namespace

ConvGpuRunner::~ConvGpuRunner() = default;

ConvGpuRunner::Operands& ConvGpuRunner::operands_for(std::uint64_t shape, const ir::Conv& v) {
  auto it = std::find_if(operands_.begin(), operands_.end(), [&](const Operands& o) { return o.shape == shape; });
  if (it != operands_.end()) {
    operands_.splice(operands_.begin(), operands_, it);
    return operands_.front();
  }
  while (operands_.size() >= 2) operands_.pop_back();
  // Dense tensors (ir::dense_conv): each spans the product of its extents.
  const std::int64_t in = v.n * v.c * v.h * v.w, f = v.k * v.c * v.r * v.s, out = v.n * v.k * v.p * v.q;
  const HostArray& input = random_block(v.dtype, input_period);
  const HostArray& filter = random_block(v.dtype, filter_period);
  Operands o{shape, random_buffer(in, input, v.dtype), random_buffer(f, filter, v.dtype),
             runtime::Buffer(std::size_t(out) * ir::size_of(v.dtype)), &input.values, &filter.values};
  operands_.push_front(std::move(o));
  return operands_.front();
}

std::string ConvGpuRunner::spot_check(const CompiledConv& conv, Operands& ops, std::uint64_t variant) {
  const ir::Conv& v = conv.problem();
  const lower::ConvParams& p = conv.params();
  ++checks_;
  ops.output.fill_bytes(0xff);  // NaN in every float type: an element the kernel does not write fails the check
  conv.run(ops.output.ptr(), ops.input.ptr(), ops.filter.ptr(), 1.0, 0.0, stream_);
  stream_.synchronize();

  // A sample of the elements, in memory order; about 2^24 multiply-adds of reference in all.
  const std::int64_t crs = v.c * v.r * v.s;
  const std::size_t count = std::size_t(std::clamp<std::int64_t>((std::int64_t(1) << 24) / crs, 256, 4096));
  std::vector<ConvPoint> points = conv_sample_points(v, count, options_.seed ^ (variant * 0xbf58476d1ce4e5b9ull));
  std::vector<std::int64_t> offsets(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) offsets[i] = conv_output_offset(v, points[i]);
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return offsets[a] < offsets[b]; });

  // Every element must be finite (the poison overwritten); the output comes back in pieces.
  const std::size_t elem = ir::size_of(v.dtype);
  const std::int64_t total = v.n * v.k * v.p * v.q;
  const std::int64_t piece = std::int64_t(1) << 22;
  std::vector<unsigned char> bytes(std::size_t(std::min(total, piece)) * elem);
  std::vector<double> got(points.size());
  std::int64_t nonfinite = 0;
  std::size_t next = 0;
  for (std::int64_t at = 0; at < total; at += piece) {
    const std::int64_t n = std::min(piece, total - at);
    ops.output.download(bytes.data(), std::size_t(n) * elem, std::size_t(at) * elem);
    for (std::int64_t i = 0; i < n; ++i)
      if (!std::isfinite(ir::load_element(v.dtype, &bytes[std::size_t(i) * elem]))) ++nonfinite;
    for (; next < order.size() && offsets[order[next]] < at + n; ++next)
      got[order[next]] = ir::load_element(v.dtype, &bytes[std::size_t(offsets[order[next]] - at) * elem]);
  }
  if (nonfinite)
    return fmt::format("spot check on {}: {} of {} output elements are not finite (the output was poisoned with NaN: "
                       "unwritten, or overflowed)",
                       ir::to_string(v), nonfinite, total);

  int wrong = 0;
  std::string first;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ConvReference ref = conv_reference(v, points[i], *ops.input_values, *ops.filter_values);
    const double bound = conv_error_bound(v.dtype, ref.magnitude, crs, p.cg, p.tc);
    if (std::abs(got[i] - ref.sum) <= bound) continue;
    if (wrong++ == 0)
      first = fmt::format("O(n={}, k={}, p={}, q={}) = {} where the reference is {} (bound {:.2e})", points[i].n,
                          points[i].k, points[i].p, points[i].q, got[i], ref.sum, bound);
  }
  if (wrong)
    return fmt::format("spot check on {}: {} of {} sampled output elements are wrong; first: {}", ir::to_string(v),
                       wrong, points.size(), first);
  return {};
}

void ConvGpuRunner::process(const ir::Conv& v, const lower::ConvParams& p, lower::ConvKernel kernel,
                            std::uint64_t shape, bool check, ResultRow& row) {
  Armed armed(watchdog_, row);
  ++phases_.kernels;
  const auto load_start = Clock::now();
  std::optional<CompiledConv> conv;
  try {
    conv.emplace(v, std::move(kernel), p, lower::ConvEpilogue{}, options_.ordinal);
    const auto attributes = conv->attributes();
    row.registers = attributes.registers;
    row.local_bytes = attributes.local_bytes;
  } catch (const std::exception& e) {
    row.compile_ms += ms_since(load_start);
    return fail(row, "jit", "loading the module", e, ir::to_string(v));
  }
  const double load_ms = ms_since(load_start);
  row.compile_ms += load_ms;
  phases_.load_ms += load_ms;
  Operands* ops = nullptr;
  try {
    Phase phase(phases_.operands_ms);
    ops = &operands_for(shape, v);
  } catch (const std::exception& e) {
    return fail(row, "launch", "allocating the operands", e, ir::to_string(v));
  }
  if (check) {
    std::string wrong;
    try {
      Phase phase(phases_.check_ms);
      wrong = spot_check(*conv, *ops, row.index);
    } catch (const std::exception& e) {
      return fail(row, "launch", "spot check", e, ir::to_string(v));
    }
    if (!wrong.empty()) {
      row.status = "wrong";
      row.reason = wrong;
      return;
    }
  }
  try {
    Phase phase(phases_.timing_ms);
    time([&](const runtime::Stream& s) { conv->run(ops->output.ptr(), ops->input.ptr(), ops->filter.ptr(), 1.0, 0.0, s); },
         row);
  } catch (const std::exception& e) {
    return fail(row, "launch", "timing", e, ir::to_string(v));
  }
  row.status = "ok";
}

}  // namespace isaac::tune::cli
