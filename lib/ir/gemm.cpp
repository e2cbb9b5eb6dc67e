#include <isaac/ir/gemm.hpp>

#include <fmt/format.h>

namespace isaac::ir {

std::string to_string(const Gemm& g) {
  return fmt::format("{} {}{} m={} n={} k={} batch={} lda={} ldb={} ldc={} align={}/{}/{}", name(g.dtype),
                     g.a_trans ? 'T' : 'N', g.b_trans ? 'T' : 'N', g.m, g.n, g.k, g.batch, g.lda, g.ldb,
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
  g.stride_a = m * k, g.stride_b = k * n, g.stride_c = m * n;
  return g;
}

}  // namespace isaac::ir
