// The DSL builds the IR the statement says, and that IR prints to the stable one-line form.
#include <doctest/doctest.h>
#include <isaac/isaac.hpp>

#include <cmath>

using namespace isaac;
using namespace isaac::dsl;

namespace {

Index<'m'> m;
Index<'n'> n;
Index<'k'> k;
Index<'b'> b;
Index<'c'> c;
Index<'f'> f;
Index<'p'> p;
Index<'q'> q;
Index<'r'> r;
Index<'s'> s;

// compile -> IR -> text -> IR: the text is the expected one and reads back to the same IR.
void check_round_trip(const ir::Contraction& contraction, const std::string& expected) {
  CHECK(ir::to_string(contraction) == expected);
  CHECK(ir::parse(ir::to_string(contraction)) == contraction);
}

}  // namespace

TEST_CASE("GEMM: C(m, n) = sum(k, A(m, k) * B(k, n))") {
  Tensor<float, 2> A("A"), B("B"), C("C");
  const Program gemm = compile(C(m, n) = sum(k, A(m, k) * B(k, n)));
  const ir::Contraction& ir = gemm.ir();
  CHECK(ir.output.tensor == "C");
  CHECK(ir.reduction == std::vector<std::string>{"k"});
  CHECK(ir.body == ir::mul(ir::access({"A", {ir::index_coordinate("m"), ir::index_coordinate("k")}}),
                           ir::access({"B", {ir::index_coordinate("k"), ir::index_coordinate("n")}})));
  CHECK(ir.epilogue == ir::reduction());
  REQUIRE(ir.tensors.size() == 3);
  CHECK(ir.tensors[0].name == "C");
  CHECK(ir.tensors[1].dtype == ir::DType::f32);
  CHECK(ir.tensors[2].rank == 2);
  check_round_trip(ir, "C(m,n) = sum(k, A(m,k) * B(k,n)) | C:f32[?,?] A:f32[?,?] B:f32[?,?]");
}

TEST_CASE("the epilogue: scalars bound at call time, the output read back, bias and activation") {
  Tensor<double, 2> A("A"), B("B"), C("C");
  Tensor<double, 1> bias("bias");
  Scalar alpha("alpha"), beta("beta");
  CHECK(ir::scalar_names(compile(C(m, n) = beta * C(m, n) + alpha * sum(k, A(m, k) * B(k, n))).ir()) ==
        std::vector<std::string>{"alpha", "beta"});
  check_round_trip(compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n)).ir(),
                   "C(m,n) = alpha * sum(k, A(m,k) * B(k,n)) + beta * C(m,n) | C:f64[?,?] A:f64[?,?] B:f64[?,?]");
  check_round_trip(compile(C(m, n) = relu(sum(k, A(m, k) * B(k, n)) + bias(m))).ir(),
                   "C(m,n) = relu(sum(k, A(m,k) * B(k,n)) + bias(m)) | C:f64[?,?] A:f64[?,?] B:f64[?,?] bias:f64[?]");
  check_round_trip(compile(C(m, n) = maximum(A(m, n), 0.5) - 2 * B(m, n) / alpha).ir(),
                   "C(m,n) = maximum(A(m,n), 0.5) - 2 * B(m,n) / alpha | C:f64[?,?] A:f64[?,?] B:f64[?,?]");
  check_round_trip(compile(C(m, n) = -(A(m, n) - B(m, n)) * (A(m, n) + -1.5)).ir(),
                   "C(m,n) = -(A(m,n) - B(m,n)) * (A(m,n) + -1.5) | C:f64[?,?] A:f64[?,?] B:f64[?,?]");
}

TEST_CASE("CONV: affine coordinates and several reduction indices at once") {
  Tensor<half, 4> I("I"), F("F"), O("O");
  const ir::Contraction conv =
      compile(O(b, f, p, q) = sum(c, r, s, I(b, c, 2 * p + r - 1, 2 * q + s - 1) * F(f, c, r, s))).ir();
  CHECK(conv.reduction == std::vector<std::string>{"c", "r", "s"});
  const ir::Affine h = ir::access(conv.body.operands[0].access).access.coordinates[2];
  CHECK(h == ir::Affine{{{"p", 2}, {"r", 1}}, -1});
  check_round_trip(conv, "O(b,f,p,q) = sum(c,r,s, I(b,c,2*p+r-1,2*q+s-1) * F(f,c,r,s)) | O:f16[?,?,?,?] "
                         "I:f16[?,?,?,?] F:f16[?,?,?,?]");
  Tensor<float, 2> X("X"), Y("Y");
  Tensor<float, 1> w("w");
  check_round_trip(compile(Y(m, n) = sum(k, X(m - k + 3, -n + 2 * k) * w(k))).ir(),
                   "Y(m,n) = sum(k, X(m-k+3,-n+2*k) * w(k)) | Y:f32[?,?] X:f32[?,?] w:f32[?]");
  check_round_trip(compile(Y(m, n) = X(0, n) + X(m, 1)).ir(), "Y(m,n) = X(0,n) + X(m,1) | Y:f32[?,?] X:f32[?,?]");
}

TEST_CASE("batched GEMM, element types and rank 0") {
  Tensor<bfloat16, 3> A("A"), B("B"), C("C");
  check_round_trip(compile(C(b, m, n) = sum(k, A(b, m, k) * B(b, k, n))).ir(),
                   "C(b,m,n) = sum(k, A(b,m,k) * B(b,k,n)) | C:bf16[?,?,?] A:bf16[?,?,?] B:bf16[?,?,?]");
  Tensor<double, 0> dot("dot");
  Tensor<double, 1> x("x"), y("y");
  check_round_trip(compile(dot() = sum(k, x(k) * y(k))).ir(), "dot() = sum(k, x(k) * y(k)) | dot:f64[] x:f64[?] y:f64[?]");
}

TEST_CASE("what the types cannot see is rejected when the IR is built") {
  Tensor<float, 2> A("A"), C("C");
  Tensor<double, 2> A64("A");
  CHECK_THROWS_WITH_AS(compile(C(m, n) = A(m, n) + A64(m, n)), doctest::Contains("tensor A is declared twice"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(compile(C(m, n) = sum(k, C(m, k) * A(k, n))), doctest::Contains("the sum reads the output C"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(compile(C(m, n) = A(m, n) + C(n, m)),
                       doctest::Contains("the epilogue reads C(n,m) but the statement writes C(m,n)"), InvalidArgument);
}

TEST_CASE("a user-defined element-wise function") {
  ir::register_function(
      ir::ElementwiseFunction{"softplus", 1, [](std::span<const double> x) { return std::log1p(std::exp(x[0])); }});
  constexpr Function<"softplus", 1> softplus;
  Tensor<float, 1> x("x"), y("y");
  const ir::Contraction c = compile(y(m) = softplus(x(m))).ir();
  check_round_trip(c, "y(m) = softplus(x(m)) | y:f32[?] x:f32[?]");
  ir::Contraction bound = c;
  ir::bind(bound, "x", {2});
  ir::bind(bound, "y", {2});
  const double in[2] = {0, 1};
  double out[2] = {};
  ir::evaluate(bound, {{"x", in}}, out);
  CHECK(out[0] == doctest::Approx(std::log(2.0)));
  CHECK(out[1] == doctest::Approx(std::log1p(std::exp(1.0))));
}

TEST_CASE("coordinate arithmetic that leaves int64 is refused, not wrapped") {
  Tensor<float, 2> A("A"), C("C");
  constexpr std::int64_t half_range = std::int64_t{1} << 62;
  // m + 2^62 + 2^62 used to become m-9223372036854775808.
  CHECK_THROWS_WITH_AS(compile(C(m, k) = A(m + half_range + half_range, k)),
                       doctest::Contains("affine coordinate overflow: 4611686018427387904 + 4611686018427387904 is "
                                         "outside [-9223372036854775808, 9223372036854775807]"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(compile(C(m, k) = A(2 * (half_range * m), k)),
                       doctest::Contains("affine coordinate overflow: 2 * 4611686018427387904"), InvalidArgument);
  CHECK_THROWS_WITH_AS(compile(C(m, k) = A(m + 18446744073709551615ull, k)),
                       doctest::Contains("the integer 18446744073709551615 in a coordinate is beyond "
                                         "9223372036854775807"),
                       InvalidArgument);
  // The extremes themselves are fine, and read back.
  check_round_trip(compile(C(m, k) = A(m - half_range - half_range, k)).ir(),
                   "C(m,k) = A(m-9223372036854775808,k) | C:f32[?,?] A:f32[?,?]");
}
