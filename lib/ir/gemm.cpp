#include <isaac/error.hpp>
#include <isaac/ir/gemm.hpp>

#include <limits>

#include <fmt/format.h>

namespace isaac::ir {

std::string to_string(const Gemm& g) {
  // Kernels take the batch strides as constants, so a batched GEMM's text (a cache key) names them.
  const std::string strides =
      g.batch > 1 ? fmt::format(" strides={}/{}/{}", g.stride_a, g.stride_b, g.stride_c) : std::string();
  return fmt::format("{} {}{} m={} n={} k={} batch={}{} lda={} ldb={} ldc={} align={}/{}/{}", name(g.dtype),
                     g.a_trans ? 'T' : 'N', g.b_trans ? 'T' : 'N', g.m, g.n, g.k, g.batch, strides, g.lda, g.ldb,
                     g.ldc, g.align_a, g.align_b, g.align_c);
}

Gemm dense_gemm(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, bool a_trans, bool b_trans,
                std::int64_t batch) {
  Gemm g;
  g.dtype = dtype;
  g.m = m, g.n = n, g.k = k, g.batch = batch;
  g.a_trans = a_trans, g.b_trans = b_trans;
  g.lda = a_trans ? k : m;
  g.ldb = b_trans ? n : k;
  g.ldc = m;
  // Each matrix must be addressable with 64-bit offsets.
  auto elements = [](const char* name, std::int64_t rows, std::int64_t columns) {
    std::int64_t product = 0;
    if (__builtin_mul_overflow(rows, columns, &product))
      throw InvalidArgument(fmt::format("dense_gemm: {} holds {} x {} elements, beyond {}, the largest 64-bit size",
                                        name, rows, columns, std::numeric_limits<std::int64_t>::max()));
    return product;
  };
  g.stride_a = elements("A", m, k), g.stride_b = elements("B", k, n), g.stride_c = elements("C", m, n);
  return g;
}

}  // namespace isaac::ir
