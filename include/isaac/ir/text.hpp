#pragma once
// The one-line textual form of a contraction: logs, cache keys, error messages, and the command
// line of tools (parse reads back exactly what to_string writes).
//
//   C(m,n) = alpha * sum(k, A(m,k) * B(k,n)) + beta * C(m,n) | C:f32[64,32]{1,64} A:f32[64,16]{1,64}@8 B:f32[?,?]
//
// Left of '|' the statement: accesses `T(coordinates)` with affine coordinates (2*p+r-1), scalar
// parameters by name, literals (shortest form that reads back exactly), + - * / and unary minus,
// element-wise calls `relu(x)`, and `sum(i,j, body)`. Right of '|' one declaration per tensor, the
// output first, then in order of first appearance:
//   name:dtype[shape]{strides}@align   bound: shape and element strides; @align (bytes) only when not 16
//   name:dtype[?,?]                    unbound: the rank only
// A tensor left out of the declarations (handy on a command line) is f32, unbound, with the rank of
// its first access. Whitespace is free; to_string writes the spacing shown above.
#include <isaac/ir/contraction.hpp>

#include <string>
#include <string_view>

namespace isaac::ir {

std::string to_string(const Affine& a);
std::string to_string(const Access& a);
std::string to_string(const Expr& e);
std::string to_string(const Tensor& t);  // one declaration: "A:f32[64,16]{1,64}"
std::string to_string(const Contraction& c);
// The statement alone, without the declarations: "C(m,n) = sum(k, A(m,k) * B(k,n))".
std::string statement_text(const Contraction& c);

// Throws InvalidArgument with the column and what was expected, or the verifier's message.
Contraction parse(std::string_view text);

}  // namespace isaac::ir
