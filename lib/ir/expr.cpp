#include <isaac/error.hpp>
#include <isaac/ir/expr.hpp>

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

// Coefficients and constants are int64: a result outside it would wrap silently (and is undefined
// behaviour), turning a coordinate into a different one, so it is refused.
[[noreturn]] void overflow(std::string_view operation, std::int64_t a, std::int64_t b) {
  throw InvalidArgument(fmt::format("affine coordinate overflow: {} {} {} is outside [{}, {}], the range of a "
                                    "coefficient or constant",
                                    a, operation, b, std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::max()));
}

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) overflow("+", a, b);
  return sum;
}

std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
  std::int64_t difference = 0;
  if (__builtin_sub_overflow(a, b, &difference)) overflow("-", a, b);
  return difference;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) overflow("*", a, b);
  return product;
}

std::int64_t coefficient_of(const Affine& a, const std::string& index) {
  for (const AffineTerm& t : a.terms)
    if (t.index == index) return t.coefficient;
  return 0;
}

// Keeps the canonical form: a coefficient that becomes 0 removes its term.
void set_coefficient(Affine& a, const std::string& index, std::int64_t coefficient) {
  auto term = std::find_if(a.terms.begin(), a.terms.end(), [&](const AffineTerm& t) { return t.index == index; });
  if (term == a.terms.end()) {
    if (coefficient != 0) a.terms.push_back({index, coefficient});
  } else if (coefficient == 0) {
    a.terms.erase(term);
  } else {
    term->coefficient = coefficient;
  }
}

// a += b, or a -= b (directly: -b may overflow where a - b does not). In place, so that a parser
// summing many terms does not copy the coordinate at each step.
Affine& accumulate(Affine& a, const Affine& b, bool subtract) {
  if (&a == &b) return accumulate(a, Affine(b), subtract);
  auto combine = [&](std::int64_t x, std::int64_t y) { return subtract ? checked_sub(x, y) : checked_add(x, y); };
  // Every new value first, so that `a` is unchanged when one of them overflows.
  std::vector<std::int64_t> coefficients;
  coefficients.reserve(b.terms.size());
  for (const AffineTerm& t : b.terms) coefficients.push_back(combine(coefficient_of(a, t.index), t.coefficient));
  const std::int64_t constant = combine(a.constant, b.constant);
  for (std::size_t i = 0; i < b.terms.size(); ++i) set_coefficient(a, b.terms[i].index, coefficients[i]);
  a.constant = constant;
  return a;
}

Expr node(Op op, std::vector<Expr> operands) {
  Expr e;
  e.op = op;
  e.operands = std::move(operands);
  return e;
}

// An initializer_list holds const elements, so node(op, {std::move(a), std::move(b)}) would copy
// both operands, and with them the whole subtree: building a chain of n terms would take O(n^2).
Expr binary_node(Op op, Expr a, Expr b) {
  std::vector<Expr> operands;
  operands.reserve(2);
  operands.push_back(std::move(a));
  operands.push_back(std::move(b));
  return node(op, std::move(operands));
}

Expr unary_node(Op op, Expr a) {
  std::vector<Expr> operands;
  operands.push_back(std::move(a));
  return node(op, std::move(operands));
}

}  // namespace

Affine index_coordinate(std::string index) { return Affine{{{std::move(index), 1}}, 0}; }

Affine constant_coordinate(std::int64_t value) { return Affine{{}, value}; }

Affine operator+(const Affine& a, const Affine& b) {
  Affine result = a;
  accumulate(result, b, false);
  return result;
}

Affine operator-(const Affine& a, const Affine& b) {
  Affine result = a;
  accumulate(result, b, true);
  return result;
}

Affine& operator+=(Affine& a, const Affine& b) { return accumulate(a, b, false); }

Affine& operator-=(Affine& a, const Affine& b) { return accumulate(a, b, true); }

Affine operator*(std::int64_t factor, const Affine& a) {
  Affine result;
  for (const AffineTerm& t : a.terms) set_coefficient(result, t.index, checked_mul(factor, t.coefficient));
  result.constant = checked_mul(factor, a.constant);
  return result;
}

bool is_plain_index(const Affine& a) {
  return a.constant == 0 && a.terms.size() == 1 && a.terms[0].coefficient == 1;
}

Expr access(Access a) {
  Expr e = node(Op::access, {});
  e.access = std::move(a);
  return e;
}

Expr scalar(std::string name) {
  Expr e = node(Op::scalar, {});
  e.name = std::move(name);
  return e;
}

Expr constant(double value) {
  Expr e = node(Op::constant, {});
  e.value = value;
  return e;
}

Expr add(Expr a, Expr b) { return binary_node(Op::add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary_node(Op::sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary_node(Op::mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary_node(Op::div, std::move(a), std::move(b)); }
Expr neg(Expr a) { return unary_node(Op::neg, std::move(a)); }

Expr call(std::string function, std::vector<Expr> arguments) {
  Expr e = node(Op::call, std::move(arguments));
  e.name = std::move(function);
  return e;
}

Expr sum(std::vector<std::string> indices, Expr body) {
  Expr e = unary_node(Op::sum, std::move(body));
  e.indices = std::move(indices);
  return e;
}

Expr reduction() { return node(Op::reduction, {}); }

bool is_scalar_expression(const Expr& e) {
  bool scalar_only = true;
  for_each_node(e, [&](const Expr& n) {
    if (n.op == Op::access || n.op == Op::sum || n.op == Op::reduction) scalar_only = false;
  });
  return scalar_only;
}

}  // namespace isaac::ir
