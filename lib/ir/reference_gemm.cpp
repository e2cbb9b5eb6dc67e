#include <isaac/error.hpp>
#include <isaac/ir/evaluate.hpp>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

// Goto-style blocking: a KC x NC panel of B and an MC x KC block of A are copied into contiguous
// micro-panels (MR rows of A, NR columns of B, zero-padded), so that the micro-kernel streams both
// and keeps an MR x NR block of C in registers, whatever the transpositions and leading dimensions.
constexpr std::int64_t MR = 4, NR = 4, KC = 256, MC = 128, NC = 512;

void pack_a(const Gemm& g, const double* a, double alpha, std::int64_t i0, std::int64_t mc, std::int64_t p0,
            std::int64_t kc, double* packed) {
  for (std::int64_t ir = 0; ir < mc; ir += MR)
    for (std::int64_t p = 0; p < kc; ++p)
      for (std::int64_t i = 0; i < MR; ++i) {
        const std::int64_t row = i0 + ir + i, col = p0 + p;
        const double value = ir + i < mc ? (g.a_trans ? a[col + row * g.lda] : a[row + col * g.lda]) : 0.0;
        *packed++ = alpha * value;
      }
}

void pack_b(const Gemm& g, const double* b, std::int64_t p0, std::int64_t kc, std::int64_t j0, std::int64_t nc,
            double* packed) {
  for (std::int64_t jr = 0; jr < nc; jr += NR)
    for (std::int64_t p = 0; p < kc; ++p)
      for (std::int64_t j = 0; j < NR; ++j) {
        const std::int64_t row = p0 + p, col = j0 + jr + j;
        *packed++ = jr + j < nc ? (g.b_trans ? b[col + row * g.ldb] : b[row + col * g.ldb]) : 0.0;
      }
}

void micro_kernel(std::int64_t kc, const double* a, const double* b, double* c, std::int64_t ldc, std::int64_t rows,
                  std::int64_t cols) {
  double acc[NR][MR] = {};
  for (std::int64_t p = 0; p < kc; ++p, a += MR, b += NR)
    for (std::int64_t j = 0; j < NR; ++j)
      for (std::int64_t i = 0; i < MR; ++i) acc[j][i] += a[i] * b[j];
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) c[i + j * ldc] += acc[j][i];
}

void check(const Gemm& g) {
  auto fail = [&](std::string_view what) {
    throw InvalidArgument(fmt::format("reference_gemm cannot run {}: {}", to_string(g), what));
  };
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 1) fail("sizes must be non-negative and batch at least 1");
  if (g.lda < std::max<std::int64_t>(1, g.a_trans ? g.k : g.m)) fail("lda is smaller than the rows of A as stored");
  if (g.ldb < std::max<std::int64_t>(1, g.b_trans ? g.n : g.k)) fail("ldb is smaller than the rows of B as stored");
  if (g.ldc < std::max<std::int64_t>(1, g.m)) fail("ldc is smaller than m");
}

}  // namespace

GemmStorage gemm_storage(const Gemm& g) {
  auto elements = [&](std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch_stride) {
    if (rows == 0 || cols == 0) return std::int64_t{0};
    return (g.batch - 1) * batch_stride + (cols - 1) * ld + rows;
  };
  return {elements(g.a_trans ? g.k : g.m, g.a_trans ? g.m : g.k, g.lda, g.stride_a),
          elements(g.b_trans ? g.n : g.k, g.b_trans ? g.k : g.n, g.ldb, g.stride_b),
          elements(g.m, g.n, g.ldc, g.stride_c)};
}

void reference_gemm(const Gemm& g, double alpha, double beta, const double* a, const double* b, double* c) {
  check(g);
  std::vector<double> packed_a(static_cast<std::size_t>(MC * KC)), packed_b(static_cast<std::size_t>(KC * NC));
  for (std::int64_t batch = 0; batch < g.batch; ++batch) {
    const double* a_batch = a + batch * g.stride_a;
    const double* b_batch = b + batch * g.stride_b;
    double* c_batch = c + batch * g.stride_c;
    for (std::int64_t j = 0; j < g.n; ++j)
      for (std::int64_t i = 0; i < g.m; ++i) {
        double& element = c_batch[i + j * g.ldc];
        element = beta == 0 ? 0.0 : beta * element;
      }
    if (alpha == 0) continue;
    for (std::int64_t p0 = 0; p0 < g.k; p0 += KC) {
      const std::int64_t kc = std::min(KC, g.k - p0);
      for (std::int64_t j0 = 0; j0 < g.n; j0 += NC) {
        const std::int64_t nc = std::min(NC, g.n - j0);
        pack_b(g, b_batch, p0, kc, j0, nc, packed_b.data());
        for (std::int64_t i0 = 0; i0 < g.m; i0 += MC) {
          const std::int64_t mc = std::min(MC, g.m - i0);
          pack_a(g, a_batch, alpha, i0, mc, p0, kc, packed_a.data());
          for (std::int64_t jr = 0; jr < nc; jr += NR)
            for (std::int64_t ir = 0; ir < mc; ir += MR)
              micro_kernel(kc, packed_a.data() + ir * kc, packed_b.data() + jr * kc,
                           c_batch + (i0 + ir) + (j0 + jr) * g.ldc, g.ldc, std::min(MR, mc - ir),
                           std::min(NR, nc - jr));
        }
      }
    }
  }
}

}  // namespace isaac::ir
