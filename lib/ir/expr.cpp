#include <isaac/ir/expr.hpp>

#include <algorithm>

namespace isaac::ir {

namespace {

void add_term(Affine& a, const std::string& index, std::int64_t coefficient) {
  auto term = std::find_if(a.terms.begin(), a.terms.end(), [&](const AffineTerm& t) { return t.index == index; });
  if (term == a.terms.end()) {
    if (coefficient != 0) a.terms.push_back({index, coefficient});
    return;
  }
  term->coefficient += coefficient;
  if (term->coefficient == 0) a.terms.erase(term);
}

Expr node(Op op, std::vector<Expr> operands) {
  Expr e;
  e.op = op;
  e.operands = std::move(operands);
  return e;
}

}  // namespace

Affine index_coordinate(std::string index) { return Affine{{{std::move(index), 1}}, 0}; }

Affine constant_coordinate(std::int64_t value) { return Affine{{}, value}; }

Affine operator+(const Affine& a, const Affine& b) {
  Affine result = a;
  for (const AffineTerm& t : b.terms) add_term(result, t.index, t.coefficient);
  result.constant += b.constant;
  return result;
}

Affine operator*(std::int64_t factor, const Affine& a) {
  Affine result;
  for (const AffineTerm& t : a.terms) add_term(result, t.index, factor * t.coefficient);
  result.constant = factor * a.constant;
  return result;
}

Affine operator-(const Affine& a, const Affine& b) { return a + (-1) * b; }

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

Expr add(Expr a, Expr b) { return node(Op::add, {std::move(a), std::move(b)}); }
Expr sub(Expr a, Expr b) { return node(Op::sub, {std::move(a), std::move(b)}); }
Expr mul(Expr a, Expr b) { return node(Op::mul, {std::move(a), std::move(b)}); }
Expr div(Expr a, Expr b) { return node(Op::div, {std::move(a), std::move(b)}); }
Expr neg(Expr a) { return node(Op::neg, {std::move(a)}); }

Expr call(std::string function, std::vector<Expr> arguments) {
  Expr e = node(Op::call, std::move(arguments));
  e.name = std::move(function);
  return e;
}

Expr sum(std::vector<std::string> indices, Expr body) {
  Expr e = node(Op::sum, {std::move(body)});
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
