// The one-line form: parse reads back exactly what to_string writes, and says where it stops.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/pattern.hpp>
#include <isaac/ir/text.hpp>

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
