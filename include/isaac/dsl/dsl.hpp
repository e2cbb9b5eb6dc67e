#pragma once
// The embedded DSL: write a contraction in C++, get an ir::Contraction.
//
//   using namespace isaac::dsl;
//   Index<'m'> m; Index<'n'> n; Index<'k'> k;
//   Tensor<float, 2> A("A"), B("B"), C("C");
//   Scalar alpha("alpha"), beta("beta");
//   auto gemm = isaac::compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n));
#include <isaac/dsl/expression.hpp>
#include <isaac/dsl/index.hpp>
#include <isaac/dsl/statement.hpp>
#include <isaac/dsl/tensor.hpp>
