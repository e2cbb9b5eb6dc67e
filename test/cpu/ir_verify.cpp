// Every rejection of the verifier, with the tensor, index and values it names.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/ir/pattern.hpp>
#include <isaac/ir/text.hpp>
#include <isaac/ir/verify.hpp>

using namespace isaac;
using namespace isaac::ir;

namespace {

void check_rejects(const std::string& text, const std::string& message) {
  CAPTURE(text);
  CHECK_THROWS_WITH_AS(verify_bound(parse(text)), doctest::Contains(message.c_str()), InvalidArgument);
}

const std::string gemm = "C(m,n) = sum(k, A(m,k) * B(k,n))";

}  // namespace

TEST_CASE("a well-formed contraction passes, bound or not") {
  CHECK_NOTHROW(verify(parse(gemm)));
  CHECK_NOTHROW(verify_bound(parse(gemm + " | C:f32[4,3]{1,4} A:f32[4,2]{2,1} B:f32[2,3]{1,2}")));
  CHECK_NOTHROW(verify_bound(parse("Y(n) = sum(k, X(n+k-1) * F(k)) | Y:f32[4] X:f32[4] F:f32[3]")));
}

TEST_CASE("extents: positive, and one per index") {
  check_rejects(gemm + " | C:f32[4,3] A:f32[4,0] B:f32[2,3]",
                "tensor A dimension 1 (k) has extent 0; extents must be positive");
  check_rejects(gemm + " | C:f32[4,3] A:f32[4,2] B:f32[-2,3]", "tensor B dimension 0 (k) has extent -2");
  check_rejects(gemm + " | C:f32[4,3] A:f32[4,2] B:f32[5,3]",
                "index k has conflicting extents: 2 from A dimension 1 and 5 from B dimension 0");
  check_rejects(gemm + " | C:f32[4,3] A:f32[4,2] B:f32[2,7]",
                "index n has conflicting extents: 3 from C dimension 1 and 7 from B dimension 1");
  check_rejects("Y(n) = sum(k, X(n+k) * F(2*k)) | Y:f32[4] X:f32[6] F:f32[3]",
                "the extent of index k is unknown: it appears only inside affine coordinates such as X(n+k)");
  check_rejects(gemm + " | C:f32[4,3] A:f32[4,2]", "tensor B is not bound: bind its shape and strides first");
}

TEST_CASE("the output: no two elements in one place, no overlap with an input") {
  check_rejects(gemm + " | C:f32[4,3]{1,2} A:f32[4,2] B:f32[2,3]",
                "output C has overlapping strides: dimension 0 (m, extent 4, stride 1) and dimension 1 (n, extent 3, "
                "stride 2) make two elements share memory");
  check_rejects(gemm + " | C:f32[4,3]{0,4} A:f32[4,2] B:f32[2,3]",
                "output C dimension 0 (m) has stride 0 with extent 4: its elements share memory");
  CHECK_NOTHROW(verify_bound(parse(gemm + " | C:f32[4,1]{1,0} A:f32[4,2]{0,0} B:f32[2,1]")));

  Contraction c = parse(gemm);
  bind(c, "A", {4, 2}, {}, 0x1000);
  bind(c, "B", {2, 3}, {}, 0x2000);
  CHECK_THROWS_WITH_AS(bind(c, "C", {4, 3}, {}, 0x1010), doctest::Contains(
                           "output C occupies bytes [0x1010, 0x1040), which overlap input A at [0x1000, 0x1020)"),
                       InvalidArgument);
  CHECK_FALSE(is_bound(tensor(c, "C")));
  CHECK_NOTHROW(bind(c, "C", {4, 3}, {}, 0x1020));
  CHECK(tensor(c, "C").align == 16);
  bind(c, "C", {4, 3}, {}, 0x1024);
  CHECK(tensor(c, "C").align == 4);
  CHECK_THROWS_WITH_AS(bind(c, "C", {4, 3, 2}), doctest::Contains("cannot bind tensor C of rank 2 to shape [4,3,2]"),
                       InvalidArgument);
}

TEST_CASE("structure the DSL checks at compile time is checked again for parsed text") {
  check_rejects("C(m,k) = sum(k, A(m,k) * B(k,n))",
                "reduction index k also appears in the output C(m,k): an index is either summed or kept");
  check_rejects("C(m,n) = sum(k, A(m,k) * B(k,m))", "output index n is never bound on the right");
  check_rejects("C(m,n) = sum(k, A(m,k) * B(k,j))", "index j on the right is neither an output index nor summed");
  check_rejects("C(m,n) = sum(k, A(m,k)) * B(k,n)", "index k is used outside the sum that runs over it");
  check_rejects("C(m,n) = sum(k,j, A(m,k) * B(k,n))", "the sum runs over j but its body never uses j");
  check_rejects("C(m,n) = sum(k,k, A(m,k) * B(k,n))", "the sum lists index k twice");
  check_rejects("C(m,m) = A(m,m)", "index m appears twice in the output C(m,m)");
  check_rejects("C(m+1,n) = A(m,n)", "output coordinate 0 of C(m+1,n) is m+1, but the output takes plain indices");
  check_rejects("C(m,n) = A(m,n,k) | A:f32[?,?]", "tensor A has rank 2 but A(m,n,k) gives 3 coordinates");
  check_rejects("C(m,n) = A(m,n) + A(m)", "tensor A has rank 2 but A(m) gives 1 coordinates");
  check_rejects("C(m,n) = sum(k, A(m,k) * C(k,n))", "the sum reads the output C (C(k,n))");
  check_rejects("C(m,n) = A(m,n) + C(n,m)", "the epilogue reads C(n,m) but the statement writes C(m,n)");
  check_rejects("C(m,n) = A(m,n) * A", "A names both a tensor and a scalar parameter");
  check_rejects("C(m,n) = relu(A(m,n), A(m,n))", "relu takes 1 argument(s), not 2");
}

TEST_CASE("functions must be registered, with their arity") {
  const Access out{"C", {index_coordinate("m")}}, in{"A", {index_coordinate("m")}};
  CHECK_THROWS_WITH_AS(make_contraction(out, call("mystery", {access(in)}), {}),
                       doctest::Contains("unknown element-wise function 'mystery' (known: gelu, maximum"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("C(m) = mystery(A(m) + 1)"),
                       doctest::Contains("'mystery' is neither a declared tensor nor a known element-wise function"),
                       InvalidArgument);
}

TEST_CASE("hand-built IR that breaks the split form") {
  Contraction c = parse(gemm);
  c.epilogue = add(reduction(), reduction());
  CHECK_THROWS_WITH_AS(verify(c), doctest::Contains("the epilogue uses the value of the sum 2 times"), InvalidArgument);
  c.epilogue = access(c.output);
  CHECK_THROWS_WITH_AS(verify(c), doctest::Contains("the epilogue uses the value of the sum 0 times"), InvalidArgument);
  c.reduction.clear();
  c.epilogue = reduction();
  CHECK_THROWS_WITH_AS(verify(c), doctest::Contains("refers to a sum that does not exist"), InvalidArgument);
}

TEST_CASE("tensors whose memory reaches beyond 64 bits are rejected, not wrapped") {
  // 2^62 x 3 elements: the old sum wrapped and the output was called fine.
  check_rejects(gemm + " | C:f32[3,2]{4611686018427387904,1} A:f32[3,2] B:f32[2,2]",
                "tensor C of shape [3,2] and strides {4611686018427387904,1} spans more elements than 64-bit offsets "
                "reach (9223372036854775807)");
  check_rejects(gemm + " | C:f32[4,3] A:f32[4,2]{-4611686018427387904,1} B:f32[2,3]",
                "tensor A of shape [4,2] and strides {-4611686018427387904,1} spans more elements");
  check_rejects(gemm + " | C:f64[2,2] A:f64[2,2]{1152921504606846976,1} B:f64[2,2]",
                "tensor A spans elements [0, 1152921504606846978) of 8 bytes: more bytes than 64-bit offsets reach");
  Contraction c = parse(gemm);
  CHECK_THROWS_WITH_AS(bind(c, "A", {4, 2}, {}, 0xfffffffffffffff0),
                       doctest::Contains("tensor A at address 0xfffffffffffffff0 spans bytes [0, 32) from there: "
                                         "beyond the 64-bit address space"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(row_major_strides({2, 4611686018427387904, 4}),
                       doctest::Contains("dense strides of shape [2,4611686018427387904,4]: a stride is beyond"),
                       InvalidArgument);
  CHECK(row_major_strides({4611686018427387904, 4}) == std::vector<std::int64_t>{4, 1});  // no stride overflows
  CHECK_THROWS_AS(column_major_strides({4, 4611686018427387904, 2}), InvalidArgument);
  // Strides of magnitude 2^63 (no int64 has it) sort and compare without undefined behaviour.
  check_rejects("C(m,n) = A(m,n) | C:f32[2,2]{-9223372036854775808,1} A:f32[2,2]",
                "tensor C spans elements [-9223372036854775808, 2) of 4 bytes: more bytes than 64-bit offsets reach");
}

TEST_CASE("GEMM and CONV descriptions refuse impossible parameters and sizes beyond 64 bits") {
  CHECK(output_size(32, 3, 2, 1, 1) == 16);
  CHECK(output_size(32, 3, 1, 0, 15) == 2);
  // A stride of 0 divided by zero (SIGFPE); dilation 20 gave P = Q = -8; padding -1 was accepted.
  CHECK_THROWS_WITH_AS(output_size(32, 3, 0, 1, 1),
                       doctest::Contains("stride 0, padding 1, dilation 1: the stride and the dilation must be at "
                                         "least 1, the padding at least 0"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(output_size(32, 3, 1, 0, 20),
                       doctest::Contains("the dilated filter (1 + dilation x (filter - 1) = 1 + 20 x (3 - 1) = 41) is "
                                         "larger than the padded input (in + 2 x pad = 32 + 2 x 0 = 32)"),
                       InvalidArgument);
  CHECK_THROWS_AS(output_size(0, 3, 1, 1, 1), InvalidArgument);
  CHECK_THROWS_WITH_AS(dense_conv(DType::f32, 8, 16, 32, 32, 32, 3, 3, 0), doctest::Contains("stride 0"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(dense_conv(DType::f32, 8, 16, 32, 32, 32, 3, 3, 1, -1), doctest::Contains("padding -1"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(dense_conv(DType::f32, 8, 16, 32, 32, 32, 3, 3, 1, 1, 0), doctest::Contains("dilation 0"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(dense_conv(DType::f32, 8, 16, 32, 64, 32, 3, 3, 1, 0, 20),
                       doctest::Contains("the 3 x 3 filter (dilation 20) does not fit the 32 x 64 input padded by 0: "
                                         "no output (the dilated filter, 1 + dilation x (r - 1) = 41, is larger than "
                                         "the padded input, h + 2 x pad = 32)"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(dense_conv(DType::f32, 0, 16, 32, 32, 32, 3, 3),
                       doctest::Contains("n=0 c=16 h=32 w=32 k=32 r=3 s=3: every size must be at least 1"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(dense_conv(DType::f32, 1 << 21, 1, 1 << 21, 1 << 22, 1, 1, 1),
                       doctest::Contains("the input's elements = N x C x H x W = 2097152 x 1 x 2097152 x "
                                         "4194304 is beyond 9223372036854775807"),
                       InvalidArgument);
  // N*P*Q = 2^64 wrapped to 0 and such a problem passed for legal.
  Conv huge;
  huge.n = std::int64_t{1} << 21, huge.p = std::int64_t{1} << 21, huge.q = std::int64_t{1} << 22;
  CHECK_THROWS_WITH_AS(implicit_gemm(huge),
                       doctest::Contains("the implicit GEMM's M = N x P x Q = 2097152 x 2097152 x 4194304 is beyond"),
                       InvalidArgument);
  CHECK(implicit_gemm(dense_conv(DType::f32, 8, 16, 32, 32, 64, 3, 3, 1, 1)).m == 8 * 32 * 32);
  CHECK_THROWS_WITH_AS(dense_gemm(DType::f32, std::int64_t{1} << 32, std::int64_t{1} << 32, 1, false, false),
                       doctest::Contains("dense_gemm: C holds 4294967296 x 4294967296 elements, beyond"),
                       InvalidArgument);
  // Broadcast operands (stride 0) bound no extent by their memory: the fused K of 2^32 x 2^32 overflows.
  CHECK_THROWS_WITH_AS(analyze(parse("C(m,n) = sum(k,j, A(m,k,j) * B(k,j,n)) | C:f32[2,2]{1,2} "
                                     "A:f32[2,4294967296,4294967296]{1,0,0} B:f32[4294967296,4294967296,2]{0,0,1}")),
                       doctest::Contains("the K dimension fused of indices"), InvalidArgument);
}
