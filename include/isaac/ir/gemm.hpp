#pragma once
// The GEMM description that pattern analysis produces and the GEMM code generator takes.
//
// BLAS column-major convention: for each batch b,
//   C[b](m, n) = alpha * sum_k opA(m, k) * opB(k, n) + beta * C[b](m, n)
// C is column-major: C(m, n) at c + m + n * ldc. (A row-major C is the column-major C^T = B^T A^T:
// pattern analysis swaps the operands, so every GEMM reaches the generator in this form.)
// A: a_trans == false -> A(m, k) at a + m + k * lda   (M x K, column-major)
//    a_trans == true  -> A(m, k) at a + k + m * lda   (stored K x M)
// B: b_trans == false -> B(k, n) at b + k + n * ldb   (K x N, column-major)
//    b_trans == true  -> B(k, n) at b + n + k * ldb   (stored N x K)
// All strides and offsets count elements, not bytes.
#include <isaac/ir/dtype.hpp>

#include <cstdint>
#include <string>

namespace isaac::ir {

struct Gemm {
  DType dtype = DType::f32;  // of A, B and C
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  bool a_trans = false, b_trans = false;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // between batches
  // Largest power of two (in bytes, up to 16) dividing each operand's base address: the vector
  // widths a kernel may use depend on it together with the leading dimensions.
  int align_a = 16, align_b = 16, align_c = 16;
  bool operator==(const Gemm&) const = default;
};

// "f32 NT m=2560 n=16 k=2560 lda=... batch=1": for logs, cache keys and error messages.
std::string to_string(const Gemm& g);
// A dense GEMM with minimal leading dimensions and 16-byte aligned operands. Throws InvalidArgument
// when a matrix's element count is beyond int64.
Gemm dense_gemm(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, bool a_trans, bool b_trans,
                std::int64_t batch = 1);

}  // namespace isaac::ir
