#include <isaac/error.hpp>
#include <isaac/ir/functions.hpp>
#include <isaac/ir/text.hpp>

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

// A recursive-descent reader of the grammar in text.hpp, over the whole text so that columns in
// error messages count from its start.
class Reader {
 public:
  Reader(std::string_view text, std::size_t begin, std::size_t end) : text_(text), pos_(begin), end_(end) {}

  [[noreturn]] void fail(const std::string& expected) const {
    const std::string found = pos_ < end_ ? fmt::format("'{}'", text_[pos_]) : "the end";
    throw InvalidArgument(fmt::format("cannot parse contraction \"{}\" at column {}: expected {}, found {}", text_,
                                      pos_ + 1, expected, found));
  }

  void skip_space() {
    while (pos_ < end_ && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= end_;
  }
  char peek() {
    skip_space();
    return pos_ < end_ ? text_[pos_] : '\0';
  }
  bool accept(char ch) {
    if (peek() != ch) return false;
    ++pos_;
    return true;
  }
  void expect(char ch) {
    if (!accept(ch)) fail(fmt::format("'{}'", ch));
  }
  bool at_identifier() {
    const char ch = peek();
    return std::isalpha(static_cast<unsigned char>(ch)) || ch == '_';
  }
  std::string identifier(std::string_view what) {
    if (!at_identifier()) fail(std::string(what));
    const std::size_t begin = pos_;
    while (pos_ < end_ && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    return std::string(text_.substr(begin, pos_ - begin));
  }
  // The identifier starting here and the first character after it, without consuming anything.
  std::pair<std::string, char> look_identifier() {
    const std::size_t saved = pos_;
    std::string name = identifier("an identifier");
    const char next = peek();
    pos_ = saved;
    return {name, next};
  }
  std::int64_t integer(std::string_view what) {
    skip_space();
    std::int64_t value = 0;
    const auto [stop, error] = std::from_chars(text_.data() + pos_, text_.data() + end_, value);
    if (error != std::errc()) fail(std::string(what));
    pos_ = static_cast<std::size_t>(stop - text_.data());
    return value;
  }
  bool at_number() { return std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.'; }
  double number() {
    skip_space();
    double value = 0;
    const auto [stop, error] = std::from_chars(text_.data() + pos_, text_.data() + end_, value);
    if (error != std::errc()) fail("a number");
    pos_ = static_cast<std::size_t>(stop - text_.data());
    return value;
  }

 private:
  std::string_view text_;
  std::size_t pos_, end_;
};

Tensor parse_declaration(Reader& in) {
  Tensor t;
  t.name = in.identifier("a tensor name");
  in.expect(':');
  t.dtype = parse_dtype(in.identifier("a dtype (f16, bf16, f32, f64)"));
  in.expect('[');
  int unknown = 0;
  while (!in.accept(']')) {
    if (t.rank > 0) in.expect(',');
    ++t.rank;
    if (in.accept('?')) ++unknown;
    else t.shape.push_back(in.integer("an extent or '?'"));
  }
  if (unknown > 0 && unknown < t.rank) in.fail(fmt::format("all extents of {} or none as '?'", t.name));
  if (unknown > 0) return t;
  if (in.accept('{')) {
    while (!in.accept('}')) {
      if (!t.strides.empty()) in.expect(',');
      t.strides.push_back(in.integer("a stride"));
    }
    if (t.strides.size() != t.shape.size()) in.fail(fmt::format("one stride per dimension of {} ({})", t.name, t.rank));
  } else {
    t.strides = row_major_strides(t.shape);
  }
  if (in.accept('@')) {
    t.align = static_cast<int>(in.integer("an alignment in bytes"));
    if (t.align < 1 || t.align > 16 || (t.align & (t.align - 1)) != 0) in.fail("an alignment of 1, 2, 4, 8 or 16");
  }
  return t;
}

class StatementParser {
 public:
  StatementParser(Reader& in, const std::vector<Tensor>& declarations) : in_(in), declarations_(declarations) {}

  Access access(std::string tensor) {
    Access a{std::move(tensor), {}};
    in_.expect('(');
    while (!in_.accept(')')) {
      if (!a.coordinates.empty() && !in_.accept(',')) in_.fail("',' or ')'");
      a.coordinates.push_back(affine());
    }
    return a;
  }

  Expr expression() {
    Expr e = term();
    for (;;) {
      if (in_.accept('+')) e = add(std::move(e), term());
      else if (in_.accept('-')) e = sub(std::move(e), term());
      else return e;
    }
  }

 private:
  Affine affine() {
    Affine a = affine_term();
    for (;;) {
      if (in_.accept('+')) a = a + affine_term();
      else if (in_.accept('-')) a = a - affine_term();
      else return a;
    }
  }
  Affine affine_term() {
    if (in_.accept('-')) return (-1) * affine_term();
    if (in_.at_identifier()) return index_coordinate(in_.identifier("an index"));
    const std::int64_t factor = in_.integer("an index or an integer");
    if (in_.accept('*')) return factor * index_coordinate(in_.identifier("an index after '*'"));
    return constant_coordinate(factor);
  }

  Expr term() {
    Expr e = unary();
    for (;;) {
      if (in_.accept('*')) e = mul(std::move(e), unary());
      else if (in_.accept('/')) e = div(std::move(e), unary());
      else return e;
    }
  }
  Expr unary() {
    if (!in_.accept('-')) return primary();
    if (in_.at_number()) return constant(-in_.number());
    return neg(unary());
  }
  Expr primary() {
    if (in_.at_number()) return constant(in_.number());
    if (in_.accept('(')) {
      Expr e = expression();
      in_.expect(')');
      return e;
    }
    std::string name = in_.identifier("an access, a scalar, a number, a call or '('");
    if (in_.peek() != '(') return scalar(std::move(name));
    if (name == "sum") return sum_of();
    if (!is_declared(name) && find_function(name)) {
      in_.expect('(');
      std::vector<Expr> arguments;
      while (!in_.accept(')')) {
        if (!arguments.empty() && !in_.accept(',')) in_.fail("',' or ')'");
        arguments.push_back(expression());
      }
      return call(std::move(name), std::move(arguments));
    }
    if (is_declared(name)) return isaac::ir::access(access(std::move(name)));
    // Undeclared: a tensor when its arguments are coordinates, else most likely a misspelt function.
    try {
      return isaac::ir::access(access(name));
    } catch (const InvalidArgument& not_coordinates) {
      throw InvalidArgument(fmt::format("{}; '{}' is neither a declared tensor nor a known element-wise function "
                                        "(known: {})",
                                        not_coordinates.what(), name, fmt::join(function_names(), ", ")));
    }
  }
  Expr sum_of() {
    in_.expect('(');
    std::vector<std::string> indices;
    while (in_.at_identifier() && in_.look_identifier().second == ',') {
      indices.push_back(in_.identifier("an index"));
      in_.expect(',');
    }
    if (indices.empty()) in_.fail("the indices of the sum: sum(i, j, body)");
    Expr body = expression();
    in_.expect(')');
    return sum(std::move(indices), std::move(body));
  }
  bool is_declared(std::string_view name) const {
    for (const Tensor& t : declarations_)
      if (t.name == name) return true;
    return false;
  }

  Reader& in_;
  const std::vector<Tensor>& declarations_;
};

}  // namespace

Contraction parse(std::string_view text) {
  const std::size_t bar = std::min(text.find('|'), text.size());
  std::vector<Tensor> declarations;
  if (bar < text.size()) {
    Reader in(text, bar + 1, text.size());
    while (!in.at_end()) declarations.push_back(parse_declaration(in));
  }
  Reader in(text, 0, bar);
  StatementParser statement(in, declarations);
  Access output = statement.access(in.identifier("the output tensor"));
  in.expect('=');
  Expr right = statement.expression();
  if (!in.at_end()) in.fail("an operator or the end of the statement");
  return make_contraction(std::move(output), std::move(right), std::move(declarations));
}

}  // namespace isaac::ir
