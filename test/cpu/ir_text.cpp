// The one-line form: parse reads back exactly what to_string writes, and says where it stops.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/pattern.hpp>
#include <isaac/ir/text.hpp>

#include <chrono>
#include <string>

using namespace isaac;
using namespace isaac::ir;

namespace {

// Parsing `text` gives a contraction that prints as `printed` and parses back to itself.
void check_reads(const std::string& text, const std::string& printed) {
  const Contraction c = parse(text);
  CHECK(to_string(c) == printed);
  CHECK(parse(to_string(c)) == c);
}

}  // namespace

TEST_CASE("printed forms read back to the same contraction") {
  for (const std::string text : {
           "C(m,n) = sum(k, A(m,k) * B(k,n)) | C:f32[?,?] A:f32[?,?] B:f32[?,?]",
           "C(m,n) = alpha * sum(k, A(m,k) * B(k,n)) + beta * C(m,n) | C:f32[64,32]{1,64} A:f32[64,16]{1,64}@8 "
           "B:f32[16,32]{32,1}@4",
           "O(b,f,p,q) = sum(c,r,s, I(b,c,2*p+r-1,2*q+s-1) * F(f,c,r,s)) | O:f16[?,?,?,?] I:f16[?,?,?,?] F:f16[?,?,?,?]",
           "Y(m) = relu(sum(k, X(m,k) * w(k)) / (2 + alpha)) - -(3) * Y(m) | Y:f64[4]{-1} X:f64[4,3]{3,1} w:f64[3]{0}",
           "Y(m) = -(-1.25) - 1e-05 * -Z(m) + a - (b - c) | Y:bf16[?] Z:bf16[?]",
           "Y(m) = Z(-m+4,0) * (a * (b * c)) | Y:f32[?] Z:f32[?,?]",
           "s() = sum(i,j, x(i,j) * x(j,i)) | s:f64[] x:f64[3,3]{3,1}",
       })
    check_reads(text, text);
}

TEST_CASE("whitespace is free, declarations may be left out, strides default to row-major") {
  check_reads("C(m, n)=sum( k ,A(m , k)*B(k,n) )",
              "C(m,n) = sum(k, A(m,k) * B(k,n)) | C:f32[?,?] A:f32[?,?] B:f32[?,?]");
  check_reads("C(m,n) = sum(k, A(m,k) * B(k,n)) | A:f64[4,3] B:f16[?,?]",
              "C(m,n) = sum(k, A(m,k) * B(k,n)) | C:f32[?,?] A:f64[4,3]{3,1} B:f16[?,?]");
  check_reads("y(i) = maximum(x(i), 0) | y:f32[8] x:f32[8]", "y(i) = maximum(x(i), 0) | y:f32[8]{1} x:f32[8]{1}");
}

TEST_CASE("a tensor named like a function is a tensor") {
  const Contraction c = parse("y(i) = relu(i) | relu:f32[?] y:f32[?]");
  CHECK(c.epilogue.op == Op::access);
  CHECK(c.tensors[1].name == "relu");
}

TEST_CASE("the printed form of a description's contraction") {
  CHECK(to_string(gemm_contraction(dense_gemm(DType::f32, 64, 32, 16, true, false))) ==
        "C(m,n) = alpha * sum(k, A(m,k) * B(k,n)) + beta * C(m,n) | C:f32[64,32]{1,64} A:f32[64,16]{16,1} "
        "B:f32[16,32]{1,16}");
  CHECK(to_string(conv_contraction(dense_conv(DType::f16, 2, 3, 8, 8, 4, 3, 3, 2, 1))) ==
        "O(n,k,p,q) = alpha * sum(c,r,s, I(n,c,2*p+r-1,2*q+s-1) * F(k,c,r,s)) + beta * O(n,k,p,q) | "
        "O:f16[2,4,4,4]{64,16,4,1} I:f16[2,3,8,8]{192,64,8,1} F:f16[4,3,3,3]{27,9,3,1}");
}

TEST_CASE("parse errors give the column and what was expected") {
  CHECK_THROWS_WITH_AS(parse("C(m,n) = sum(k, A(m,k) * B(k,n)"),
                       doctest::Contains("at column 32: expected ')', found the end"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m,n) = A(m,n) +"), doctest::Contains("at column 18: expected an access"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m,n) = A(m*n)"), doctest::Contains("at column 13: expected ',' or ')', found '*'"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m,n) = sum(A(m,n))"), doctest::Contains("expected the indices of the sum"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(m) | C:f32[4,?]"), doctest::Contains("expected all extents of C or none"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(m) | C:f31[4]"), doctest::Contains("unknown dtype 'f31'"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(m) | C:f32[4]{1,1}"),
                       doctest::Contains("expected one stride per dimension of C (1)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(m) | C:f32[4]@3"), doctest::Contains("an alignment of 1, 2, 4, 8 or 16"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(m) B(m)"), doctest::Contains("expected an operator or the end"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(m) | D:f32[?]"), doctest::Contains("tensor D is declared but the statement"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = sum(k, A(m,k)) + sum(j, A(m,j))"),
                       doctest::Contains("a statement holds at most one sum (found 2)"), InvalidArgument);
}

TEST_CASE("deep nesting is refused at a column instead of overflowing the stack") {
  const auto nested = [](const std::string& open, const std::string& inner, const std::string& close, int depth) {
    std::string text = "C(m) = ";
    for (int i = 0; i < depth; ++i) text += open;
    text += inner;
    for (int i = 0; i < depth; ++i) text += close;
    return text;
  };
  // 256 levels read; the 257th is refused where it opens (column 8 + 256 = 264 for one-character levels).
  CHECK_NOTHROW(parse(nested("(", "A(m)", ")", 255)));
  CHECK_THROWS_WITH_AS(parse(nested("(", "A(m)", ")", 200000)),
                       doctest::Contains("at column 264: the statement nests too deeply: at most 256 levels"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(nested("-", "A(m)", "", 200000)), doctest::Contains("at column 264: the statement nests"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(nested("relu(", "A(m)", ")", 200000)), doctest::Contains("the statement nests too deeply"),
                       InvalidArgument);
  // In a coordinate too, and without the guess that A may be a misspelt function.
  const std::string minus_signs = "C(m) = A(" + std::string(200000, '-') + "m)";
  std::string message;
  try {
    parse(minus_signs);
  } catch (const InvalidArgument& e) {
    message = e.what();
  }
  CHECK(message.find("at column 266: the statement nests too deeply") != std::string::npos);
  CHECK(message.find("neither a declared tensor") == std::string::npos);
  CHECK(message.size() < 1000);  // the text is shown by its start, not in full
  CHECK(message.find("(200011 characters)") != std::string::npos);
}

TEST_CASE("a long chain of terms parses in linear time, up to a limit on operators") {
  const auto chain = [](int terms) {
    std::string text = "C(m) = A(m)";
    for (int i = 1; i < terms; ++i) text += " + A(m)";
    return text;
  };
  // Each + used to copy the whole left side: 8000 terms took 8 s, 16000 terms 38 s.
  const auto start = std::chrono::steady_clock::now();
  const Contraction c = parse(chain(10000));
  const std::string printed = to_string(c);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 0.5);
  CHECK(printed == chain(10000) + " | C:f32[?] A:f32[?]");
  CHECK(parse(printed) == c);
  CHECK_THROWS_WITH_AS(parse(chain(10002)),
                       doctest::Contains("the statement holds too many operations: at most 10000 operators"),
                       InvalidArgument);
}

TEST_CASE("numbers out of range say so, with the range") {
  CHECK_THROWS_WITH_AS(parse("C(m,n) = A(m,n) | A:f32[64,99999999999999999999]"),
                       doctest::Contains("at column 28: the integer 99999999999999999999 is out of range: integers lie "
                                         "in [-9223372036854775808, 9223372036854775807]"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = 1e999 * A(m)"),
                       doctest::Contains("at column 8: the number 1e999 is out of range: a literal other than 0 has a "
                                         "magnitude from 5e-324 to 1.7976931348623157e+308"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(-9223372036854775809*m)"),
                       doctest::Contains("the integer -9223372036854775809 is out of range"), InvalidArgument);
  // An undeclared tensor's coordinates: the range, not a guess at a misspelt function.
  std::string message;
  try {
    parse("C(m) = A(99999999999999999999*m)");
  } catch (const InvalidArgument& e) {
    message = e.what();
  }
  CHECK(message.find("the integer 99999999999999999999 is out of range") != std::string::npos);
  CHECK(message.find("neither a declared tensor") == std::string::npos);
}

TEST_CASE("affine coordinates refuse overflow and read back every int64") {
  CHECK_THROWS_WITH_AS(parse("C(m,n) = sum(k, A(9223372036854775807*m+9223372036854775807*m,k) * B(k,n))"),
                       doctest::Contains("at column 62: affine coordinate overflow: 9223372036854775807 + "
                                         "9223372036854775807 is outside [-9223372036854775808, 9223372036854775807]"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(m + 9223372036854775807 + 1)"), doctest::Contains("affine coordinate overflow"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(-(-9223372036854775808*m))"), doctest::Contains("expected an index"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = A(--9223372036854775808*m)"), doctest::Contains("affine coordinate overflow"),
                       InvalidArgument);
  // The extremes print and read back; -2^63 is a literal although 2^63 is not.
  for (const std::string text : {"C(m) = A(-9223372036854775808*m-9223372036854775808) | C:f32[?] A:f32[?]",
                                 "C(m) = A(m+9223372036854775807) | C:f32[?] A:f32[?]"})
    check_reads(text, text);
  check_reads("C(m) = A(-9223372036854775807*m - m)", "C(m) = A(-9223372036854775808*m) | C:f32[?] A:f32[?]");
}
