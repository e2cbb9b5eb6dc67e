// Pattern analysis: every problem of the benchmark sets is recognised with its exact description,
// every layout is canonicalised to BLAS form, and everything else is "neither" with its reason.
#include <doctest/doctest.h>
#include <isaac/isaac.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

using namespace isaac;
using namespace isaac::dsl;

#ifndef ISAAC_BENCH_PROBLEMS_DIR
#error "ISAAC_BENCH_PROBLEMS_DIR names the folder holding gemm_problems.csv and conv_problems.csv"
#endif

namespace doctest {
template <>
struct StringMaker<ir::Gemm> {
  static String convert(const ir::Gemm& g) {
    return fmt::format("{} strides={}/{}/{}", ir::to_string(g), g.stride_a, g.stride_b, g.stride_c).c_str();
  }
};
template <>
struct StringMaker<ir::Conv> {
  static String convert(const ir::Conv& conv) { return ir::to_string(conv).c_str(); }
};
}  // namespace doctest

namespace {

Index<'m'> m;
Index<'n'> n;
Index<'k'> k;
Index<'b'> b;
Index<'j'> j;
Index<'c'> c;
Index<'p'> p;
Index<'q'> q;
Index<'r'> r;
Index<'s'> s;

// The rows of a benchmark CSV (comments and the header skipped), each as column name -> text.
std::vector<std::map<std::string, std::string>> read_problems(const std::string& file) {
  std::ifstream in(std::string(ISAAC_BENCH_PROBLEMS_DIR) + "/" + file);
  REQUIRE_MESSAGE(in.good(), "cannot open ", file, " in ", ISAAC_BENCH_PROBLEMS_DIR);
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

std::int64_t number(const std::map<std::string, std::string>& row, const std::string& column) {
  return std::stoll(row.at(column));
}

ir::Pattern analyze_bound(ir::Contraction contraction,
                          const std::vector<std::pair<std::string, std::vector<std::vector<std::int64_t>>>>& shapes) {
  for (const auto& [name, shape_and_strides] : shapes)
    if (std::any_of(contraction.tensors.begin(), contraction.tensors.end(), [&](const ir::Tensor& t) { return t.name == name; }))
      ir::bind(contraction, name, shape_and_strides[0], shape_and_strides.size() > 1 ? shape_and_strides[1]
                                                                                   : std::vector<std::int64_t>{});
  return ir::analyze(contraction);
}

const ir::Contraction& gemm_statement() {
  static Tensor<float, 2> A("A"), B("B"), C("C");
  static Scalar alpha("alpha"), beta("beta");
  static const ir::Contraction statement =
      compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n)).ir();
  return statement;
}

}  // namespace

TEST_CASE("every GEMM of the benchmark set, written in the DSL with BLAS strides") {
  const auto problems = read_problems("gemm_problems.csv");
  CHECK(problems.size() == 18);
  for (const auto& row : problems) {
    const std::int64_t M = number(row, "m"), N = number(row, "n"), K = number(row, "k");
    const bool at = number(row, "at") != 0, bt = number(row, "bt") != 0;
    INFO(row.at("suite"), " m=", M, " n=", N, " k=", K, " at=", at, " bt=", bt);
    const ir::Pattern pattern =
        analyze_bound(gemm_statement(), {{"A", {{M, K}, at ? std::vector<std::int64_t>{K, 1} : std::vector<std::int64_t>{1, M}}},
                                         {"B", {{K, N}, bt ? std::vector<std::int64_t>{N, 1} : std::vector<std::int64_t>{1, K}}},
                                         {"C", {{M, N}, {1, M}}}});
    REQUIRE(pattern.kind == ir::PatternKind::gemm);
    CHECK(pattern.gemm == ir::dense_gemm(ir::DType::f32, M, N, K, at, bt));
    CHECK(pattern.a == "A");
    CHECK(pattern.b == "B");
    REQUIRE(pattern.linear_epilogue);
    CHECK(ir::to_string(pattern.linear_epilogue->alpha) == "alpha");
    CHECK(ir::to_string(pattern.linear_epilogue->beta) == "beta");
    // The description's own contraction maps back to it.
    const ir::Pattern again = ir::analyze(ir::gemm_contraction(pattern.gemm));
    CHECK(again.gemm == pattern.gemm);
  }
}

TEST_CASE("every CONV of the benchmark set, in every layout") {
  const auto problems = read_problems("conv_problems.csv");
  CHECK(problems.size() == 14);
  Tensor<float, 4> I("I"), F("F"), O("O");
  const ir::Contraction statement = compile(O(b, k, p, q) = sum(c, r, s, I(b, c, p + r, q + s) * F(k, c, r, s))).ir();
  for (const auto& row : problems) {
    const std::int64_t N = number(row, "n"), P = number(row, "p"), Q = number(row, "q"), K = number(row, "k"),
                       C = number(row, "c"), R = number(row, "r"), S = number(row, "s");
    INFO(row.at("name"));
    for (ir::ImageLayout image : {ir::ImageLayout::nchw, ir::ImageLayout::chwn, ir::ImageLayout::nhwc})
      for (ir::FilterLayout filter : {ir::FilterLayout::kcrs, ir::FilterLayout::crsk, ir::FilterLayout::krsc}) {
        const ir::Conv expected = ir::dense_conv(ir::DType::f32, N, C, P + R - 1, Q + S - 1, K, R, S, 1, 0, 1, image, filter);
        REQUIRE(expected.p == P);
        REQUIRE(expected.q == Q);
        auto vec = [](const std::array<std::int64_t, 4>& a) { return std::vector<std::int64_t>(a.begin(), a.end()); };
        const ir::Pattern pattern = analyze_bound(statement, {{"I", {{N, C, P + R - 1, Q + S - 1}, vec(expected.input_strides)}},
                                                              {"F", {{K, C, R, S}, vec(expected.filter_strides)}},
                                                              {"O", {{N, K, P, Q}, vec(expected.output_strides)}}});
        REQUIRE_MESSAGE(pattern.kind == ir::PatternKind::conv, pattern.reason);
        // With extents of 1 (c = 1, or r = s = 1) several layouts describe the same memory: the
        // first that fits is reported, with the strides unchanged.
        const ir::Conv& found = pattern.conv;
        ir::Conv same_memory = expected;
        same_memory.input_layout = found.input_layout;
        same_memory.filter_layout = found.filter_layout;
        same_memory.output_layout = found.output_layout;
        CHECK(found == same_memory);
        if (C > 1 && R * S > 1) CHECK(found == expected);
        CHECK(ir::implicit_gemm(pattern.conv).m == N * P * Q);
        CHECK(ir::implicit_gemm(pattern.conv).n == K);
        CHECK(ir::implicit_gemm(pattern.conv).k == C * R * S);
        CHECK(ir::analyze(ir::conv_contraction(expected)).conv == found);
      }
  }
}

TEST_CASE("stride, padding and dilation are read off the affine maps") {
  Tensor<double, 4> I("I"), F("F"), O("O");
  const ir::Contraction statement =
      compile(O(b, k, p, q) = sum(c, r, s, I(b, c, 2 * p + 3 * r - 1, q + 2 * s - 2) * F(k, c, r, s))).ir();
  const ir::Pattern pattern = analyze_bound(statement, {{"I", {{2, 3, 9, 10}}}, {"F", {{4, 3, 3, 3}}}, {"O", {{2, 4, 4, 8}}}});
  REQUIRE(pattern.kind == ir::PatternKind::conv);
  const ir::Conv& conv = pattern.conv;
  CHECK(conv.dtype == ir::DType::f64);
  CHECK(conv.stride_h == 2);
  CHECK(conv.stride_w == 1);
  CHECK(conv.dilation_h == 3);
  CHECK(conv.dilation_w == 2);
  CHECK(conv.pad_h == 1);
  CHECK(conv.pad_w == 2);
  CHECK(conv.h == 9);
  CHECK(conv.p == 4);
  CHECK(ir::to_string(conv) == "f64 NCHW/KCRS/NCHW n=2 c=3 h=9 w=10 k=4 p=4 q=8 r=3 s=3 stride=2,1 pad=1,2 dilation=3,2");
  const ir::Conv dense = ir::dense_conv(ir::DType::f32, 1, 8, 32, 32, 16, 3, 3, 2, 1, 1, ir::ImageLayout::nhwc,
                                        ir::FilterLayout::krsc);
  CHECK(dense.p == 16);
  CHECK(ir::analyze(ir::conv_contraction(dense)).conv == dense);
}

TEST_CASE("GEMM layouts: transpositions, row-major C, padded leading dimensions, alignment") {
  const ir::Contraction& gemm = gemm_statement();
  SUBCASE("row-major A, B and C: C^T = B^T A^T, no transposition") {
    const ir::Pattern pattern = analyze_bound(gemm, {{"A", {{8, 5}}}, {"B", {{5, 6}}}, {"C", {{8, 6}}}});
    REQUIRE(pattern.kind == ir::PatternKind::gemm);
    CHECK(pattern.a == "B");
    CHECK(pattern.b == "A");
    CHECK(pattern.gemm == ir::dense_gemm(ir::DType::f32, 6, 8, 5, false, false));
  }
  SUBCASE("the order of the factors does not matter") {
    Tensor<float, 2> A("A"), B("B"), C("C");
    const ir::Pattern pattern = analyze_bound(compile(C(m, n) = sum(k, B(k, n) * A(m, k))).ir(),
                                              {{"A", {{8, 5}, {5, 1}}}, {"B", {{5, 6}, {1, 5}}}, {"C", {{8, 6}, {1, 8}}}});
    CHECK(pattern.a == "A");
    CHECK(pattern.gemm == ir::dense_gemm(ir::DType::f32, 8, 6, 5, true, false));
  }
  SUBCASE("row-major C with column-major A and B: both transposed after the swap") {
    const ir::Pattern pattern =
        analyze_bound(gemm, {{"A", {{8, 5}, {1, 8}}}, {"B", {{5, 6}, {1, 5}}}, {"C", {{8, 6}}}});
    CHECK(pattern.gemm == ir::dense_gemm(ir::DType::f32, 6, 8, 5, true, true));
  }
  SUBCASE("padded leading dimensions and the alignment of each operand") {
    ir::Contraction bound = gemm;
    ir::bind(bound, "A", {8, 5}, {1, 12}, 0x1008);
    ir::bind(bound, "B", {5, 6}, {7, 1}, 0x2004);
    ir::bind(bound, "C", {8, 6}, {1, 10}, 0x3000);
    const ir::Gemm g = ir::analyze(bound).gemm;
    CHECK(ir::to_string(g) == "f32 NT m=8 n=6 k=5 batch=1 lda=12 ldb=7 ldc=10 align=8/4/16");
    const ir::InputFeatures features = ir::input_features(g);
    CHECK(features.names == std::vector<std::string_view>{"m", "n", "k", "batch", "dtype_bytes", "a_trans", "b_trans",
                                                          "vector_a", "vector_b", "vector_c"});
    CHECK(features.values == std::vector<double>{8, 6, 5, 1, 4, 0, 1, 8, 4, 8});
  }
  SUBCASE("vectors: GEMV and a dot product are GEMMs with unit sizes") {
    Tensor<float, 2> A("A");
    Tensor<float, 1> x("x"), y("y");
    Tensor<float, 0> d("d");
    const ir::Pattern gemv = analyze_bound(compile(y(n) = sum(k, x(k) * A(k, n))).ir(), {{"A", {{5, 7}}}, {"x", {{5}}}, {"y", {{7}}}});
    REQUIRE(gemv.kind == ir::PatternKind::gemm);
    CHECK(ir::to_string(gemv.gemm) == "f32 NN m=7 n=1 k=5 batch=1 lda=7 ldb=5 ldc=7 align=16/16/16");
    CHECK(gemv.a == "A");
    const ir::Pattern dot = analyze_bound(compile(d() = sum(k, x(k) * y(k))).ir(), {{"x", {{5}}}, {"y", {{5}}}});
    REQUIRE(dot.kind == ir::PatternKind::gemm);
    CHECK(ir::to_string(dot.gemm) == "f32 NN m=1 n=1 k=5 batch=1 lda=1 ldb=5 ldc=1 align=16/16/16");
  }
}

TEST_CASE("batched GEMM and fused index groups") {
  Tensor<float, 3> A("A"), B("B"), C("C");
  SUBCASE("batch outermost, row-major") {
    const ir::Pattern pattern = analyze_bound(compile(C(b, m, n) = sum(k, A(b, m, k) * B(b, k, n))).ir(),
                                              {{"A", {{4, 8, 5}}}, {"B", {{4, 5, 6}}}, {"C", {{4, 8, 6}}}});
    REQUIRE(pattern.kind == ir::PatternKind::gemm);
    ir::Gemm expected = ir::dense_gemm(ir::DType::f32, 6, 8, 5, false, false, 4);
    CHECK(pattern.gemm == expected);
  }
  SUBCASE("batch innermost in A, shared B (batch stride 0)") {
    Tensor<float, 2> W("W");
    const ir::Pattern pattern = analyze_bound(compile(C(m, n, b) = sum(k, A(m, k, b) * W(k, n))).ir(),
                                              {{"A", {{8, 5, 3}, {3, 24, 1}}}, {"W", {{5, 6}, {1, 5}}},
                                               {"C", {{8, 6, 3}, {3, 24, 1}}}});
    REQUIRE(pattern.kind == ir::PatternKind::gemm);  // b indexes A and C only: it joins M
    CHECK(ir::to_string(pattern.gemm) == "f32 NN m=24 n=6 k=5 batch=1 lda=24 ldb=5 ldc=24 align=16/16/16");
  }
  SUBCASE("two M indices fuse when their strides nest alike") {
    Tensor<float, 2> W("W");
    const ir::Contraction statement = compile(C(m, j, n) = sum(k, A(m, j, k) * W(k, n))).ir();
    const ir::Pattern fused = analyze_bound(statement, {{"A", {{4, 3, 5}, {1, 4, 12}}}, {"W", {{5, 6}, {1, 5}}},
                                                        {"C", {{4, 3, 6}, {1, 4, 12}}}});
    REQUIRE(fused.kind == ir::PatternKind::gemm);
    CHECK(fused.gemm == ir::dense_gemm(ir::DType::f32, 12, 6, 5, false, false));
    const ir::Pattern split = analyze_bound(statement, {{"A", {{4, 3, 5}, {3, 1, 12}}}, {"W", {{5, 6}, {1, 5}}},
                                                        {"C", {{4, 3, 6}, {1, 4, 12}}}});
    CHECK(split.kind == ir::PatternKind::neither);
    CHECK(split.reason == "indices j,m of the M group cannot fuse into one dimension: in C index j has stride 4 and "
                          "extent 3, so m would need stride 12, not 1");
  }
}

TEST_CASE("the epilogue: linear (alpha, beta) or the contraction's own") {
  Tensor<float, 2> A("A"), B("B"), C("C");
  Tensor<float, 1> bias("bias");
  Scalar alpha("alpha"), beta("beta");
  const std::vector<std::pair<std::string, std::vector<std::vector<std::int64_t>>>> shapes{
      {"A", {{8, 5}, {1, 8}}}, {"B", {{5, 6}, {1, 5}}}, {"C", {{8, 6}, {1, 8}}}, {"bias", {{8}}}};
  const auto scaled = analyze_bound(compile(C(m, n) = C(m, n) * beta - sum(k, 2 * A(m, k) * B(k, n) / alpha)).ir(), shapes);
  REQUIRE(scaled.linear_epilogue);
  CHECK(ir::to_string(scaled.linear_epilogue->alpha) == "-(2 / alpha)");
  CHECK(ir::to_string(scaled.linear_epilogue->beta) == "beta");
  const auto plain = analyze_bound(compile(C(m, n) = sum(k, A(m, k) * B(k, n))).ir(), shapes);
  CHECK(ir::to_string(plain.linear_epilogue->alpha) == "1");
  CHECK(ir::to_string(plain.linear_epilogue->beta) == "0");
  const auto biased = analyze_bound(compile(C(m, n) = relu(sum(k, A(m, k) * B(k, n)) + bias(m))).ir(), shapes);
  CHECK(biased.kind == ir::PatternKind::gemm);
  CHECK_FALSE(biased.linear_epilogue);
}

TEST_CASE("neither, and why") {
  Tensor<float, 2> A("A"), B("B"), C("C"), D("D");
  Tensor<double, 2> B64("B");
  Tensor<float, 1> x("x");
  auto reason = [&](const ir::Contraction& contraction) {
    ir::Contraction bound = contraction;
    for (const ir::Tensor& t : contraction.tensors) ir::bind(bound, t.name, std::vector<std::int64_t>(t.rank, 6));
    const ir::Pattern pattern = ir::analyze(bound);
    CHECK(pattern.kind == ir::PatternKind::neither);
    return pattern.reason;
  };
  CHECK(reason(compile(C(m, n) = A(m, n) + B(m, n)).ir()) ==
        "there is no sum: the statement is element-wise, with nothing to contract");
  CHECK(reason(compile(C(m, n) = sum(k, A(m, k) * B(k, n) * x(k))).ir()) ==
        "the sum's body A(m,k) * B(k,n) * x(k) is a product of 3 tensor(s); GEMM and CONV multiply two");
  CHECK(reason(compile(C(m, n) = sum(k, A(m, k) * B(k, n) + D(m, k) * B(k, n))).ir()) ==
        "the sum's body A(m,k) * B(k,n) + D(m,k) * B(k,n) is not a product of tensors (GEMM and CONV multiply two)");
  CHECK(reason(compile(C(m, n) = sum(k, relu(A(m, k)) * B(k, n))).ir()) ==
        "the sum's body relu(A(m,k)) * B(k,n) is not a product of tensors (GEMM and CONV multiply two)");
  CHECK(reason(compile(C(m, n) = sum(k, A(k, k) * B(m, n))).ir()) ==
        "A(k,k) uses an index twice (a diagonal), which no GEMM layout expresses");
  CHECK(reason(compile(C(m, n) = sum(k, j, A(m, k) * B(j, n))).ir()) ==
        "index k is summed within A alone (a reduction of one operand), not in a product");
  CHECK(reason(compile(C(m, n) = sum(k, x(k) * A(k, m)) + D(m, n)).ir()) ==
        "output index n indexes neither x nor A: the result is broadcast along it");
  CHECK(reason(compile(C(m, n) = sum(k, A(m, k) * B64(k, n))).ir()) ==
        "mixed element types (A f32, B f64, C f32): ir::Gemm takes one");
  CHECK(reason(compile(C(m, n) = sum(k, A(m, k + 1) * B(k, n))).ir()) ==
        "not a 2-D convolution: A(m,k+1) has rank 2; a 2-D convolution takes rank-4 input, filter and output");

  const ir::Pattern strided = analyze_bound(gemm_statement(), {{"A", {{8, 5}, {2, 16}}}, {"B", {{5, 6}}}, {"C", {{8, 6}, {1, 8}}}});
  CHECK(strided.reason == "A(m,k) is not a BLAS layout: it needs unit stride along m or k, with the other stride at "
                          "least the extent of the first, but has strides 2 and 16");

  Tensor<float, 4> I("I"), F("F"), O("O");
  Index<'f'> f;
  auto conv_reason = [&](const ir::Contraction& contraction) {
    ir::Contraction bound = contraction;
    for (const ir::Tensor& t : contraction.tensors) ir::bind(bound, t.name, {4, 4, 4, 4});
    return ir::analyze(bound).reason;
  };
  CHECK(conv_reason(compile(O(b, f, p, q) = sum(c, r, s, I(b, c, p + r + 1, q + s) * F(f, c, r, s))).ir()) ==
        "not a 2-D convolution: input coordinate p+r+1 of I(b,c,p+r+1,q+s) has a stride or dilation below 1 or a "
        "negative padding");
  CHECK(conv_reason(compile(O(b, f, p, q) = sum(c, r, s, I(b, c, p - r, q + s) * F(f, c, r, s))).ir()).find(
            "has a stride or dilation below 1") != std::string::npos);
  CHECK(conv_reason(compile(O(b, f, p, q) = sum(c, r, s, I(b, c, p + r, q + s) * F(f, c + 1, r, s))).ir()) ==
        "both I(b,c,p+r,q+s) and F(f,c+1,r,s) have affine coordinates; a convolution has one input and one filter "
        "indexed plainly");
  CHECK(conv_reason(compile(O(b, f, p, q) = sum(c, r, I(b, c, p + r, q) * F(f, c, r, q))).ir()) ==
        "not a 2-D convolution: input coordinate q of I(b,c,p+r,q) is neither the image index (output only) nor the "
        "channel (summed with the filter)");
}

TEST_CASE("layout names and dense strides") {
  CHECK(ir::parse_image_layout("nhwc") == ir::ImageLayout::nhwc);
  CHECK(ir::parse_filter_layout("CRSK") == ir::FilterLayout::crsk);
  CHECK(ir::name(ir::ImageLayout::chwn) == "CHWN");
  CHECK_THROWS_WITH_AS(ir::parse_image_layout("NWHC"), doctest::Contains("expected NCHW, CHWN or NHWC"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(ir::parse_filter_layout("KSRC"), doctest::Contains("expected KCRS, CRSK or KRSC"),
                       InvalidArgument);
  CHECK(ir::dense_strides(ir::ImageLayout::chwn, {2, 3, 4, 5}) == std::array<std::int64_t, 4>{1, 40, 10, 2});
  CHECK(ir::column_major_strides({2, 3, 4}) == std::vector<std::int64_t>{1, 2, 6});
  CHECK(ir::row_major_strides({2, 3, 4}) == std::vector<std::int64_t>{12, 4, 1});
  CHECK(ir::output_size(7, 3, 2, 1, 1) == 4);
}

TEST_CASE("CONV input features") {
  const ir::Conv conv = ir::dense_conv(ir::DType::f16, 8, 64, 56, 56, 128, 3, 3, 1, 1, 1, ir::ImageLayout::nhwc,
                                       ir::FilterLayout::krsc);
  const ir::InputFeatures features = ir::input_features(conv);
  REQUIRE(features.names.size() == features.values.size());
  std::map<std::string_view, double> by_name;
  for (std::size_t i = 0; i < features.names.size(); ++i) by_name[features.names[i]] = features.values[i];
  CHECK(by_name["p"] == 56);
  CHECK(by_name["pad_h"] == 1);
  CHECK(by_name["dtype_bytes"] == 2);
  CHECK(by_name["input_layout"] == 2);
  CHECK(by_name["vector_input"] == 16);
}
