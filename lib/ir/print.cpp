#include <isaac/ir/text.hpp>

#include <fmt/format.h>

#include <iterator>

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

// Appends to `out` rather than returning strings: a chain of n terms is a tree n deep, and returning
// each level's text would copy it at every level, O(n^2).
void print(const Expr& e, Level needed, std::string& out);

void print_binary(const Expr& e, std::string_view op, Level left, Level right, std::string& out) {
  print(e.operands.at(0), left, out);
  fmt::format_to(std::back_inserter(out), " {} ", op);
  print(e.operands.at(1), right, out);
}

void print_bare(const Expr& e, std::string& out) {
  switch (e.op) {
    case Op::access: out += to_string(e.access); return;
    case Op::scalar: out += e.name; return;
    case Op::constant: fmt::format_to(std::back_inserter(out), "{}", e.value); return;
    case Op::add: print_binary(e, "+", additive, multiplicative, out); return;
    case Op::sub: print_binary(e, "-", additive, multiplicative, out); return;
    case Op::mul: print_binary(e, "*", multiplicative, unary, out); return;
    case Op::div: print_binary(e, "/", multiplicative, unary, out); return;
    case Op::neg: {
      // -(2) keeps the negation of a literal apart from the literal -2.
      const Expr& operand = e.operands.at(0);
      out += '-';
      if (operand.op == Op::constant) out += '(';
      print(operand, unary, out);
      if (operand.op == Op::constant) out += ')';
      return;
    }
    case Op::call: {
      out += e.name;
      out += '(';
      for (std::size_t i = 0; i < e.operands.size(); ++i) {
        if (i > 0) out += ", ";
        print(e.operands[i], additive, out);
      }
      out += ')';
      return;
    }
    case Op::sum:
      fmt::format_to(std::back_inserter(out), "sum({}, ", fmt::join(e.indices, ","));
      print(e.operands.at(0), additive, out);
      out += ')';
      return;
    case Op::reduction: out += "(the sum)"; return;
  }
  out += '?';
}

void print(const Expr& e, Level needed, std::string& out) {
  const bool parenthesised = level_of(e) < needed;
  if (parenthesised) out += '(';
  print_bare(e, out);
  if (parenthesised) out += ')';
}

}  // namespace

std::string to_string(const Affine& a) {
  std::string text;
  for (const AffineTerm& t : a.terms) {
    // Unsigned: the magnitude of the coefficient -2^63 is not an int64.
    const std::uint64_t magnitude = t.coefficient < 0 ? 0 - static_cast<std::uint64_t>(t.coefficient)
                                                      : static_cast<std::uint64_t>(t.coefficient);
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

std::string to_string(const Expr& e) {
  std::string text;
  print(e, additive, text);
  return text;
}

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
