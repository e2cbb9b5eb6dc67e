#pragma once
// The CPU reference: float64 evaluation of any contraction verify_bound() accepts. It is the oracle
// of every correctness test, so it follows the statement literally: taps outside a tensor read zero,
// and an epilogue reading the output reads it (0 * NaN is NaN), unlike reference_gemm below.
#include <isaac/ir/contraction.hpp>
#include <isaac/ir/gemm.hpp>

#include <map>
#include <string>

namespace isaac::ir {

using ScalarValues = std::map<std::string, double, std::less<>>;
// Per input tensor, a host array in float64 holding element (0, ..., 0) at the pointer and laid out
// with the tensor's bound strides (span_of tells how much memory that takes).
using HostInputs = std::map<std::string, const double*, std::less<>>;

// Writes the output tensor (laid out the same way) at every output point. Throws InvalidArgument
// for a missing input or scalar value. Single-threaded; a sum that pattern analysis recognises runs
// through reference_gemm (a CONV as implicit GEMM), any other through a loop nest vectorised along
// one index.
void evaluate(const Contraction& c, const HostInputs& inputs, double* output, const ScalarValues& scalars = {});

// The value of a scalar-only expression (is_scalar_expression), e.g. LinearEpilogue::alpha.
double evaluate_scalar(const Expr& e, const ScalarValues& scalars);

// C[b] = alpha * opA(A[b]) opB(B[b]) + beta * C[b] for every batch b, in the exact convention of
// ir::Gemm (gemm.hpp): column-major C, pointers to element (0, 0) of batch 0, strides in elements.
// As in BLAS, beta == 0 overwrites C without reading it. Cache-blocked; 2560x128x2560 takes a
// fraction of a second on one core. For GPU tests: convert the host copies of A, B, C to double,
// call this, and compare with the GPU's C.
void reference_gemm(const Gemm& g, double alpha, double beta, const double* a, const double* b, double* c);

// How many elements the arrays passed to reference_gemm must hold.
struct GemmStorage {
  std::int64_t a = 0, b = 0, c = 0;
};
GemmStorage gemm_storage(const Gemm& g);

}  // namespace isaac::ir
