#include "collect_check.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/sampler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace isaac::tune::cli {

std::optional<ir::Gemm> awkward_gemm(const ir::Gemm& like, const lower::GemmParams& p,
                                     const lower::DeviceLimits& device, std::uint64_t variant) {
  // A vector load of V elements needs the operand's contiguous extent (= its leading dimension in a
  // dense problem) to be a multiple of V: M for A in N, K for A in T and B in N, N for B in T.
  const std::int64_t mult_m = like.a_trans ? 1 : p.va;
  const std::int64_t mult_n = like.b_trans ? p.vb : 1;
  const std::int64_t mult_k = std::lcm<std::int64_t>(like.a_trans ? p.va : 1, like.b_trans ? 1 : p.vb);
  auto up = [](std::int64_t x, std::int64_t mult) { return (x + mult - 1) / mult * mult; };
  const std::int64_t ms[] = {1, 7, p.ml + 1, 2 * p.ml + 3, 61, 131};
  const std::int64_t ns[] = {1, 5, p.nl + 1, 2 * p.nl + 5, 53, 127};
  const std::int64_t ks[] = {1, 13, p.u + 1, 3 * p.u + 5, 101, 257};
  // KG > 1 needs at least KG tiles of U along K; one more element leaves a partial last tile.
  const std::int64_t k_min = p.kg > 1 ? std::int64_t(p.kg - 1) * p.u + 3 : 1;
  std::mt19937_64 rng(variant * 0x9e3779b97f4a7c15ull + 17);
  std::optional<ir::Gemm> smallest;
  for (int attempt = 0; attempt < 64; ++attempt) {
    auto pick = [&](const std::int64_t(&list)[6]) { return list[rng() % 6]; };
    const std::int64_t m = up(pick(ms), mult_m), n = up(pick(ns), mult_n), k = up(std::max(pick(ks), k_min), mult_k);
    ir::Gemm g = ir::dense_gemm(like.dtype, m, n, k, like.a_trans, like.b_trans);
    if (!lower::gemm_legal(g, p, device)) continue;
    // The CPU reference runs on the timing thread: keep it to a fraction of a second.
    if (double(m) * double(n) * double(k) <= 0x1p27) return g;
    if (!smallest || double(m) * double(n) * double(k) < double(smallest->m) * double(smallest->n) * double(smallest->k))
      smallest = g;
  }
  return smallest;
}

// Operands uniform in [-1, 1] with random signs (their values exact in float64). Each product is
// exact in float64 and rounded once in the accumulator, each of the K additions rounds with a
// relative error of at most u (the accumulator's unit roundoff), and the rounding errors of random
// data add like a random walk: the relative error of a dot product of length K is about
// u * sqrt(K) / 2 in the Frobenius norm, and its worst cases over a matrix stay within a few times
// that. The bound takes 10x (f16 accumulation: 4x, whose u is large enough that 10x would hide a
// real error) on top of that, and adds the rounding of C to the output type: relative u_out per
// rounding, once per element, KG times under atomic split-K (each block adds its partial sum into C).
// Those roundings add linearly, not as a random walk: a spot check's C may be a single element
// (an f16 1 x 1 x 257 product with KG=4 was off by 2.3 u_out), and there is nothing to average.
double check_tolerance(ir::DType dtype, std::int64_t k, bool acc32, int output_roundings) {
  const double sqrt_k = std::sqrt(double(std::max<std::int64_t>(k, 1)));
  const double out = double(std::max(output_roundings, 1));
  switch (dtype) {
    case ir::DType::f64: return 10 * 0x1p-53 * sqrt_k + 2 * 0x1p-53 * out;
    case ir::DType::f32: return 10 * 0x1p-24 * sqrt_k + 2 * 0x1p-24 * out;
    case ir::DType::f16: return (acc32 ? 10 * 0x1p-24 : 4 * 0x1p-11) * sqrt_k + 2 * 0x1p-11 * out;
    case ir::DType::bf16: return 10 * 0x1p-24 * sqrt_k + 2 * 0x1p-8 * out;
  }
  throw InvalidArgument(fmt::format("no check tolerance for dtype {}", ir::name(dtype)));
}

HostArray random_host_array(ir::DType dtype, std::size_t count, std::mt19937_64& rng) {
  HostArray h;
  h.bytes.resize(count * ir::size_of(dtype));
  h.values.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t r = rng();
    const double v = (0.5 + 0.5 * double(r >> 11) * 0x1p-53) * ((r & 1) ? -1.0 : 1.0);
    ir::store_element(dtype, v, &h.bytes[i * ir::size_of(dtype)]);
    h.values[i] = ir::load_element(dtype, &h.bytes[i * ir::size_of(dtype)]);
  }
  return h;
}

std::string compare_c(const ir::Gemm& g, const std::vector<unsigned char>& c_bytes, const std::vector<double>& ref,
                      double tolerance) {
  const std::size_t elem = ir::size_of(g.dtype);
  double diff = 0, norm = 0, max_abs = 0;
  std::int64_t nonfinite = 0;
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t m = 0; m < g.m; ++m) {
      const std::size_t i = std::size_t(m + n * g.ldc);
      if ((i + 1) * elem > c_bytes.size() || i >= ref.size()) throw InvalidArgument("compare_c: C is smaller than the problem");
      const double v = ir::load_element(g.dtype, &c_bytes[elem * i]);
      norm += ref[i] * ref[i];
      if (!std::isfinite(v)) {
        ++nonfinite;
        continue;
      }
      diff += (v - ref[i]) * (v - ref[i]);
      max_abs = std::max(max_abs, std::abs(v - ref[i]));
    }
  if (nonfinite)
    return fmt::format("spot check on {}: {} of {} elements of C are not finite (C was poisoned with NaN: unwritten, or "
                       "overflowed)",
                       ir::to_string(g), nonfinite, g.m * g.n);
  const double rel = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  if (!(rel <= tolerance))
    return fmt::format("spot check on {}: relative error {:.2e} above the tolerance {:.1e} (max abs. error {:.2e})",
                       ir::to_string(g), rel, tolerance, max_abs);
  return {};
}

}  // namespace isaac::tune::cli
