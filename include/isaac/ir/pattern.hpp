#pragma once
// Pattern analysis: is a bound contraction a GEMM, a CONV, or neither (and why)?
//
// The sum's body must be a product of two tensor accesses (literal and scalar factors are allowed
// and move into alpha). With plain-index coordinates only, indices group as in DESIGN.md:
// M (in A and C only), N (in B and C only), K (in A and B only, summed), batch (in all three); the
// indices of a group fuse into one dimension when their strides nest the same way in every operand.
// A C whose unit stride lies along N is canonicalised by swapping A and B (C^T = B^T A^T), so the
// ir::Gemm is always in BLAS column-major form. With affine coordinates pairing an output index and
// a summed index (p * stride + r * dilation - pad), the statement is a 2-D convolution (ir::Conv).
#include <isaac/ir/contraction.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>

#include <optional>
#include <string>

namespace isaac::ir {

enum class PatternKind { gemm, conv, neither };
std::string_view name(PatternKind kind);  // "gemm", "conv", "neither"

// out = alpha * (the sum) + beta * out, with alpha and beta expressions over scalar parameters and
// literals (is_scalar_expression); beta is the literal 0 when the output is not read.
struct LinearEpilogue {
  Expr alpha, beta;
};

struct Pattern {
  PatternKind kind = PatternKind::neither;
  Gemm gemm;           // kind == gemm
  Conv conv;           // kind == conv
  std::string reason;  // kind == neither: why not, naming the tensors and indices at fault
  // The tensors playing A, B, C (gemm, after the swap) or input, filter, output (conv).
  std::string a, b, c;
  // Set when the epilogue has that linear form; otherwise (bias, relu, ...) the code generator must
  // apply the contraction's own epilogue to the sum. Scalar factors of the body are in alpha.
  std::optional<LinearEpilogue> linear_epilogue;
};

// Requires a bound contraction (verify_bound); never throws for a contraction that passes it.
Pattern analyze(const Contraction& c);

// The inverses, for tests, tools and benchmarks: the bound contraction of a description, with
// tensors named A, B, C (gemm; batched when batch > 1: A(b,·,·) ...) or I, F, O (conv), and the
// epilogue alpha * sum + beta * C with scalars named alpha and beta.
// Gemm: C(m,n) = sum(k, A(m,k) * B(k,n)), column-major C, A and B strided as a_trans, b_trans say.
Contraction gemm_contraction(const Gemm& g);
// Conv: O(n,k,p,q) = sum(c,r,s, I(n,c,stride_h*p+dilation_h*r-pad_h, ...) * F(k,c,r,s)).
Contraction conv_contraction(const Conv& conv);

}  // namespace isaac::ir
