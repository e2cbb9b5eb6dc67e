#pragma once
// The expressions of a contraction: affine coordinates, tensor accesses, and the value tree built of
// accesses, scalar parameters, literals, arithmetic, element-wise function calls and one sum.
#include <cstdint>
#include <string>
#include <vector>

namespace isaac::ir {

struct AffineTerm {
  std::string index;
  std::int64_t coefficient = 1;
  bool operator==(const AffineTerm&) const = default;
};

// sum(coefficient * index) + constant. Canonical: one term per index, in order of first appearance,
// no zero coefficients; every function below keeps that form.
struct Affine {
  std::vector<AffineTerm> terms;
  std::int64_t constant = 0;
  bool operator==(const Affine&) const = default;
};

Affine index_coordinate(std::string index);   // the coordinate `index`
Affine constant_coordinate(std::int64_t value);
// The arithmetic throws InvalidArgument when a coefficient or the constant would leave int64.
Affine operator+(const Affine& a, const Affine& b);
Affine operator-(const Affine& a, const Affine& b);
Affine operator*(std::int64_t factor, const Affine& a);
Affine& operator+=(Affine& a, const Affine& b);  // leaves `a` unchanged when it throws
Affine& operator-=(Affine& a, const Affine& b);
// True for a coordinate that is exactly one index (coefficient 1, constant 0).
bool is_plain_index(const Affine& a);

// tensor(coordinates...): one affine coordinate per dimension of the tensor.
struct Access {
  std::string tensor;
  std::vector<Affine> coordinates;
  bool operator==(const Access&) const = default;
};

enum class Op {
  access,     // a tensor element; out-of-range coordinates read zero (that is padding)
  scalar,     // a named parameter bound at call time (alpha, beta)
  constant,   // a literal
  add, sub, mul, div,
  neg,
  call,       // an element-wise function by name (functions.hpp)
  sum,        // sum over `indices` of operands[0]; only in a right-hand side before it is split
  reduction,  // in an epilogue: the value of the contraction's sum at the output point
};

struct Expr {
  Op op = Op::constant;
  std::vector<Expr> operands;
  Access access;                     // op == access
  std::string name;                  // op == scalar or call
  std::vector<std::string> indices;  // op == sum
  double value = 0;                  // op == constant
  bool operator==(const Expr&) const = default;
};

Expr access(Access a);
Expr scalar(std::string name);
Expr constant(double value);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr neg(Expr a);
Expr call(std::string function, std::vector<Expr> arguments);
Expr sum(std::vector<std::string> indices, Expr body);
Expr reduction();

// Calls `visit` on `e` and every node below it, parents first.
template <class Visit>
void for_each_node(const Expr& e, Visit&& visit) {
  visit(e);
  for (const Expr& operand : e.operands) for_each_node(operand, visit);
}

// True when the expression reads no tensor and holds no sum: its value follows from the scalars.
bool is_scalar_expression(const Expr& e);

}  // namespace isaac::ir
