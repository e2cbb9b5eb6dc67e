#include <isaac/error.hpp>
#include <isaac/ir/functions.hpp>
#include <isaac/ir/text.hpp>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

// A number out of range or a statement too large: not a misspelling, so no guess at what was meant.
struct BeyondLimit : InvalidArgument {
  using InvalidArgument::InvalidArgument;
};

// A recursive-descent reader of the grammar in text.hpp, over the whole text so that columns in
// error messages count from its start.
class Reader {
 public:
  Reader(std::string_view text, std::size_t begin, std::size_t end) : text_(text), pos_(begin), end_(end) {}

  [[noreturn]] void fail(const std::string& expected) const {
    const std::string found = pos_ < end_ ? fmt::format("'{}'", text_[pos_]) : "the end";
    throw InvalidArgument(message(fmt::format("expected {}, found {}", expected, found)));
  }
  [[noreturn]] void fail_beyond_limit(const std::string& what) const { throw BeyondLimit(message(what)); }

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
  // An integer; with `negated`, minus the one written, so that -9223372036854775808 reads although
  // 9223372036854775808 alone is out of range.
  std::int64_t integer(std::string_view what, bool negated = false) {
    skip_space();
    const char* first = text_.data() + pos_;
    const char* last = text_.data() + end_;
    std::int64_t value = 0;
    std::from_chars_result read{};
    if (negated) {
      std::uint64_t magnitude = 0;
      read = std::from_chars(first, last, magnitude);
      if (read.ec == std::errc() && magnitude > std::uint64_t{1} << 63) read.ec = std::errc::result_out_of_range;
      value = static_cast<std::int64_t>(0 - magnitude);  // modulo 2^64: -2^63 included
    } else {
      read = std::from_chars(first, last, value);
    }
    if (read.ec == std::errc::result_out_of_range)
      fail_beyond_limit(fmt::format("the integer {}{} is out of range: integers lie in [{}, {}]", negated ? "-" : "",
                                    spelling(read.ptr), std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::max()));
    if (read.ec != std::errc()) fail(std::string(what));
    pos_ = static_cast<std::size_t>(read.ptr - text_.data());
    return value;
  }
  bool at_digit() { return std::isdigit(static_cast<unsigned char>(peek())); }
  bool at_number() { return at_digit() || peek() == '.'; }
  double number() {
    skip_space();
    double value = 0;
    const auto [stop, error] = std::from_chars(text_.data() + pos_, text_.data() + end_, value);
    if (error == std::errc::result_out_of_range)
      fail_beyond_limit(fmt::format("the number {} is out of range: a literal other than 0 has a magnitude from {} "
                                    "to {}",
                                    spelling(stop), std::numeric_limits<double>::denorm_min(),
                                    std::numeric_limits<double>::max()));
    if (error != std::errc()) fail("a number");
    pos_ = static_cast<std::size_t>(stop - text_.data());
    return value;
  }

 private:
  // `what` went wrong at the current column.
  std::string message(const std::string& what) const {
    // A generated text can run to megabytes; the column says where, so the message shows its start.
    constexpr std::size_t shown = 200;
    const std::string quoted = text_.size() <= shown
                                   ? fmt::format("\"{}\"", text_)
                                   : fmt::format("\"{}...\" ({} characters)", text_.substr(0, shown), text_.size());
    return fmt::format("cannot parse contraction {} at column {}: {}", quoted, pos_ + 1, what);
  }
  // The characters from the current column to `stop`, as written.
  std::string_view spelling(const char* stop) const {
    return text_.substr(pos_, static_cast<std::size_t>(stop - text_.data()) - pos_);
  }

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

  // Parentheses, calls, sums and unary minus nest by recursion, here and in every later pass over
  // the tree: a limit keeps a long generated text from overflowing the stack. A chain of terms
  // (a + b + c ...) is a tree as deep as it is long, so the operators are limited too.
  static constexpr int max_nesting = 256;
  static constexpr int max_operators = 10000;

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
    const Nesting nesting = nest();
    Expr e = term();
    for (;;) {
      if (in_.accept('+')) {
        count_operator();
        e = add(std::move(e), term());
      } else if (in_.accept('-')) {
        count_operator();
        e = sub(std::move(e), term());
      } else {
        return e;
      }
    }
  }

 private:
  Affine affine() {
    Affine a = affine_term();
    for (;;) {
      if (in_.accept('+')) {
        count_operator();
        Affine term = affine_term();
        in_range([&] { a += term; });
      } else if (in_.accept('-')) {
        count_operator();
        // Minus a literal adds the negative literal: m-9223372036854775808 reads back.
        if (in_.at_digit()) {
          Affine term = literal_term(true);
          in_range([&] { a += term; });
        } else {
          Affine term = affine_term();
          in_range([&] { a -= term; });
        }
      } else {
        return a;
      }
    }
  }
  Affine affine_term() {
    if (in_.accept('-')) {
      // A negative literal reads as one, so that every int64 coefficient and constant reads back.
      if (in_.at_digit()) return literal_term(true);
      const Nesting nesting = nest();
      Affine a = affine_term();
      in_range([&] { a = (-1) * a; });
      return a;
    }
    if (in_.at_identifier()) return index_coordinate(in_.identifier("an index"));
    return literal_term(false);
  }
  // `factor * index` or a constant.
  Affine literal_term(bool negated) {
    const std::int64_t factor = in_.integer("an index or an integer", negated);
    if (in_.accept('*')) return factor * index_coordinate(in_.identifier("an index after '*'"));
    return constant_coordinate(factor);
  }
  // Runs affine arithmetic, which refuses coefficients beyond 64 bits, and names the column when it does.
  template <class Arithmetic>
  void in_range(Arithmetic arithmetic) {
    try {
      arithmetic();
    } catch (const InvalidArgument& overflow) {
      in_.fail_beyond_limit(overflow.what());
    }
  }

  Expr term() {
    Expr e = unary();
    for (;;) {
      if (in_.accept('*')) {
        count_operator();
        e = mul(std::move(e), unary());
      } else if (in_.accept('/')) {
        count_operator();
        e = div(std::move(e), unary());
      } else {
        return e;
      }
    }
  }
  Expr unary() {
    if (!in_.accept('-')) return primary();
    if (in_.at_number()) return constant(-in_.number());
    const Nesting nesting = nest();
    count_operator();
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
      count_operator();
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
    } catch (const BeyondLimit&) {
      throw;
    } catch (const InvalidArgument& not_coordinates) {
      throw InvalidArgument(fmt::format("{}; '{}' is neither a declared tensor nor a known element-wise function "
                                        "(known: {})",
                                        not_coordinates.what(), name, fmt::join(function_names(), ", ")));
    }
  }
  Expr sum_of() {
    count_operator();
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
  // One level of nesting, for as long as it lives.
  class Nesting {
   public:
    explicit Nesting(int& depth) : depth_(depth) {}
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    ~Nesting() { --depth_; }

   private:
    int& depth_;
  };
  Nesting nest() {
    if (depth_ == max_nesting)
      in_.fail_beyond_limit(fmt::format("the statement nests too deeply: at most {} levels of parentheses, calls, "
                                        "sums and unary minus signs (counted together) are allowed",
                                        max_nesting));
    ++depth_;
    return Nesting(depth_);
  }
  void count_operator() {
    if (operators_ == max_operators)
      in_.fail_beyond_limit(fmt::format("the statement holds too many operations: at most {} operators, calls and "
                                        "sums are allowed",
                                        max_operators));
    ++operators_;
  }

  bool is_declared(std::string_view name) const {
    for (const Tensor& t : declarations_)
      if (t.name == name) return true;
    return false;
  }

  Reader& in_;
  const std::vector<Tensor>& declarations_;
  int depth_ = 0;
  int operators_ = 0;
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
