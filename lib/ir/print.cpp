#include <isaac/ir/text.hpp>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

// Binding strength, so that parentheses appear exactly where the tree needs them and parse() builds
// the same tree back (binary operators associate to the left).
enum Level { additive = 1, multiplicative = 2, unary = 3, atom = 4 };

Level level_of(const Expr& e) {
  switch (e.op) {
    case Op::add: case Op::sub: return additive;
    case Op::mul: case Op::div: return multiplicative;
    case Op::neg: return unary;
    case Op::constant: return e.value < 0 ? unary : atom;
    default: return atom;
  }
}

std::string print(const Expr& e, Level needed);

std::string print_binary(const Expr& e, std::string_view op, Level left, Level right) {
  return fmt::format("{} {} {}", print(e.operands.at(0), left), op, print(e.operands.at(1), right));
}

std::string print_bare(const Expr& e) {
  switch (e.op) {
    case Op::access: return to_string(e.access);
    case Op::scalar: return e.name;
    case Op::constant: return fmt::format("{}", e.value);
    case Op::add: return print_binary(e, "+", additive, multiplicative);
    case Op::sub: return print_binary(e, "-", additive, multiplicative);
    case Op::mul: return print_binary(e, "*", multiplicative, unary);
    case Op::div: return print_binary(e, "/", multiplicative, unary);
    case Op::neg: {
      // -(2) keeps the negation of a literal apart from the literal -2.
      const Expr& operand = e.operands.at(0);
      const std::string text = print(operand, unary);
      return operand.op == Op::constant ? fmt::format("-({})", text) : fmt::format("-{}", text);
    }
    case Op::call: {
      std::vector<std::string> arguments;
      for (const Expr& operand : e.operands) arguments.push_back(print(operand, additive));
      return fmt::format("{}({})", e.name, fmt::join(arguments, ", "));
    }
    case Op::sum: return fmt::format("sum({}, {})", fmt::join(e.indices, ","), print(e.operands.at(0), additive));
    case Op::reduction: return "(the sum)";
  }
  return "?";
}

std::string print(const Expr& e, Level needed) {
  const std::string bare = print_bare(e);
  return level_of(e) < needed ? fmt::format("({})", bare) : bare;
}

}  // namespace

std::string to_string(const Affine& a) {
  std::string text;
  for (const AffineTerm& t : a.terms) {
    const std::int64_t magnitude = t.coefficient < 0 ? -t.coefficient : t.coefficient;
    if (t.coefficient < 0) text += '-';
    else if (!text.empty()) text += '+';
    if (magnitude != 1) text += fmt::format("{}*", magnitude);
    text += t.index;
  }
  if (text.empty()) return fmt::format("{}", a.constant);
  if (a.constant > 0) text += fmt::format("+{}", a.constant);
  if (a.constant < 0) text += fmt::format("{}", a.constant);
  return text;
}

std::string to_string(const Access& a) {
  std::vector<std::string> coordinates;
  for (const Affine& coordinate : a.coordinates) coordinates.push_back(to_string(coordinate));
  return fmt::format("{}({})", a.tensor, fmt::join(coordinates, ","));
}

std::string to_string(const Expr& e) { return print(e, additive); }

std::string to_string(const Tensor& t) {
  std::string text = fmt::format("{}:{}[", t.name, name(t.dtype));
  if (!is_bound(t)) {
    for (int d = 0; d < t.rank; ++d) text += d == 0 ? "?" : ",?";
    return text + "]";
  }
  text += fmt::format("{}]", fmt::join(t.shape, ","));
  if (t.rank > 0) text += fmt::format("{{{}}}", fmt::join(t.strides, ","));
  if (t.align != 16) text += fmt::format("@{}", t.align);
  return text;
}

std::string statement_text(const Contraction& c) {
  return fmt::format("{} = {}", to_string(c.output), to_string(right_side(c)));
}

std::string to_string(const Contraction& c) {
  std::vector<std::string> declarations;
  for (const Tensor& t : c.tensors) declarations.push_back(to_string(t));
  return fmt::format("{} | {}", statement_text(c), fmt::join(declarations, " "));
}

}  // namespace isaac::ir
