#pragma once
// Reading a value expression as a sum of signed monomials: scalar factors times tensor factors
// (private to lib/ir; pattern analysis uses it on the body and the epilogue).
#include <isaac/ir/expr.hpp>

#include <optional>
#include <vector>

namespace isaac::ir {

struct Monomial {
  Expr scale = constant(1);                 // scalar-only
  std::vector<const Expr*> factors;         // accesses and Op::reduction, in written order
};

// nullopt when `e` is not a product (a sum of tensors, a call on a tensor, a division by a tensor).
std::optional<Monomial> monomial(const Expr& e);

struct SignedTerm {
  bool negative;
  const Expr* term;
};
// The terms of `e` as written with + and - (and unary minus) at its top.
std::vector<SignedTerm> additive_terms(const Expr& e);

// a * b, without multiplying by a literal 1 (and -1 * b as -b).
Expr times(Expr a, Expr b);
// The sum of signed scalar expressions; the literal 0 for none.
Expr signed_sum(const std::vector<std::pair<bool, Expr>>& terms);

}  // namespace isaac::ir
