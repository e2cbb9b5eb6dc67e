// The CPU reference against hand-computed results (padding included), against itself along its two
// paths (reference_gemm and the generic loop nest), and against the clock.
#include <doctest/doctest.h>
#include <isaac/isaac.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>

using namespace isaac;
using namespace isaac::dsl;

namespace {

Index<'m'> m;
Index<'n'> n;
Index<'k'> k;
Index<'b'> b;
Index<'c'> c;
Index<'p'> p;
Index<'q'> q;
Index<'r'> r;
Index<'s'> s;

std::vector<double> random_values(std::size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> values(count);
  for (double& v : values) v = uniform(generator);
  return values;
}

std::vector<double> storage_for(const ir::Tensor& t, unsigned seed) {
  const ir::Span span = ir::span_of(t);
  return random_values(static_cast<std::size_t>(span.end - span.begin), seed);
}

// C(i, j) = sum_l opA(i, l) * opB(l, j), column-major as in ir::Gemm, one batch.
std::vector<double> naive_gemm(const ir::Gemm& g, const double* a, const double* bm) {
  std::vector<double> result(static_cast<std::size_t>(g.m * g.n));
  for (std::int64_t j = 0; j < g.n; ++j)
    for (std::int64_t i = 0; i < g.m; ++i) {
      double total = 0;
      for (std::int64_t l = 0; l < g.k; ++l)
        total += (g.a_trans ? a[l + i * g.lda] : a[i + l * g.lda]) * (g.b_trans ? bm[j + l * g.ldb] : bm[l + j * g.ldb]);
      result[i + j * g.m] = total;
    }
  return result;
}

}  // namespace

TEST_CASE("GEMM by hand, with alpha and beta") {
  Tensor<float, 2> A("A"), B("B"), C("C");
  Scalar alpha("alpha"), beta("beta");
  ir::Contraction gemm = compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n)).ir();
  for (const char* name : {"A", "B", "C"}) ir::bind(gemm, name, {2, 2});
  const double a[] = {1, 2, 3, 4}, bm[] = {5, 6, 7, 8};
  double out[] = {1, 1, 1, 1};
  ir::evaluate(gemm, {{"A", a}, {"B", bm}}, out, {{"alpha", 2}, {"beta", 1}});
  CHECK(std::vector<double>(out, out + 4) == std::vector<double>{39, 45, 87, 101});
  CHECK_THROWS_WITH_AS(ir::evaluate(gemm, {{"A", a}, {"B", bm}}, out, {{"alpha", 2}}),
                       doctest::Contains("no value for scalar parameter beta"), InvalidArgument);
  CHECK_THROWS_WITH_AS(ir::evaluate(gemm, {{"A", a}}, out, {{"alpha", 2}, {"beta", 1}}),
                       doctest::Contains("no host array for input B"), InvalidArgument);
}

TEST_CASE("1-D convolution by hand: taps outside the input read zero") {
  Tensor<double, 1> X("X"), W("W"), Y("Y");
  ir::Contraction conv = compile(Y(p) = sum(r, X(p + r - 1) * W(r))).ir();
  ir::bind(conv, "X", {4});
  ir::bind(conv, "W", {3});
  ir::bind(conv, "Y", {4});
  const double x[] = {1, 2, 3, 4}, w[] = {1, 10, 100};
  double y[4] = {};
  ir::evaluate(conv, {{"X", x}, {"W", w}}, y);
  CHECK(std::vector<double>(y, y + 4) == std::vector<double>{210, 321, 432, 43});
  // Reversed output (stride -1): element 0 sits at the end of the array.
  ir::bind(conv, "Y", {4}, {-1});
  double reversed[4] = {};
  ir::evaluate(conv, {{"X", x}, {"W", w}}, reversed + 3);
  CHECK(std::vector<double>(reversed, reversed + 4) == std::vector<double>{43, 432, 321, 210});
}

TEST_CASE("2-D convolution by hand: stride 2, padding 1") {
  Tensor<float, 4> I("I"), F("F"), O("O");
  ir::Contraction conv =
      compile(O(b, k, p, q) = sum(c, r, s, I(b, c, 2 * p + r - 1, 2 * q + s - 1) * F(k, c, r, s))).ir();
  ir::bind(conv, "I", {1, 1, 3, 3});
  ir::bind(conv, "F", {2, 1, 2, 2});
  ir::bind(conv, "O", {1, 2, 2, 2});
  const double image[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const double filters[] = {1, 1, 1, 1,  // sums the window
                            1, 10, 100, 1000};
  double out[8] = {};
  ir::evaluate(conv, {{"I", image}, {"F", filters}}, out);
  // Window of O(p, q): rows 2p-1 and 2p, columns 2q-1 and 2q.
  CHECK(std::vector<double>(out, out + 4) == std::vector<double>{1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9});
  CHECK(std::vector<double>(out + 4, out + 8) ==
        std::vector<double>{1000 * 1, 100 * 2 + 1000 * 3, 10 * 4 + 1000 * 7, 1 * 5 + 10 * 6 + 100 * 8 + 1000 * 9});
}

TEST_CASE("epilogues, element-wise statements and a scalar output, by hand") {
  Tensor<double, 2> A("A"), B("B"), C("C");
  Tensor<double, 1> bias("bias"), x("x");
  Tensor<double, 0> d("d");
  SUBCASE("relu of the sum plus a bias") {
    ir::Contraction statement = compile(C(m, n) = relu(sum(k, A(m, k) * B(k, n)) + bias(n))).ir();
    for (const char* name : {"A", "B", "C"}) ir::bind(statement, name, {2, 2});
    ir::bind(statement, "bias", {2});
    const double a[] = {1, 2, 3, 4}, bm[] = {5, 6, 7, 8}, beta[] = {-20, -50};
    double out[4] = {};
    ir::evaluate(statement, {{"A", a}, {"B", bm}, {"bias", beta}}, out);
    CHECK(std::vector<double>(out, out + 4) == std::vector<double>{0, 0, 23, 0});
  }
  SUBCASE("element-wise: the output read back, a transposed input") {
    ir::Contraction statement = compile(C(m, n) = C(m, n) / 2 - maximum(A(m, n), B(n, m))).ir();
    for (const char* name : {"A", "B", "C"}) ir::bind(statement, name, {2, 2});
    const double a[] = {1, 2, 3, 4}, bm[] = {4, 3, 2, 1};
    double out[] = {10, 20, 30, 40};
    ir::evaluate(statement, {{"A", a}, {"B", bm}}, out);
    CHECK(std::vector<double>(out, out + 4) == std::vector<double>{5 - 4, 10 - 2, 15 - 3, 20 - 4});
  }
  SUBCASE("a dot product into a rank-0 output") {
    ir::Contraction statement = compile(d() = sum(k, x(k) * x(k)) + 1).ir();
    ir::bind(statement, "x", {3});
    const double values[] = {1, 2, 3};
    double out = 0;
    ir::evaluate(statement, {{"x", values}}, &out);
    CHECK(out == 15);
  }
}

TEST_CASE("the GEMM path and the generic path agree in every layout") {
  Tensor<double, 2> A("A"), B("B"), C("C");
  Tensor<double, 1> ones("ones");
  Scalar alpha("alpha"), beta("beta");
  const ir::Contraction fast = compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n)).ir();
  // The extra factor of ones makes the body no GEMM, so the generic loop nest runs.
  const ir::Contraction generic =
      compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n) * ones(k)) + beta * C(m, n)).ir();
  const std::int64_t M = 37, N = 19, K = 23;
  const std::vector<double> all_ones(K, 1.0);
  for (bool a_row_major : {false, true})
    for (bool b_row_major : {false, true})
      for (bool c_row_major : {false, true}) {
        CAPTURE(a_row_major);
        CAPTURE(b_row_major);
        CAPTURE(c_row_major);
        auto bind_all = [&](ir::Contraction statement) {
          ir::bind(statement, "A", {M, K}, a_row_major ? std::vector<std::int64_t>{K + 3, 1} : std::vector<std::int64_t>{1, M + 2});
          ir::bind(statement, "B", {K, N}, b_row_major ? std::vector<std::int64_t>{N, 1} : std::vector<std::int64_t>{1, K});
          ir::bind(statement, "C", {M, N}, c_row_major ? std::vector<std::int64_t>{N + 1, 1} : std::vector<std::int64_t>{1, M});
          if (statement.tensors.size() == 4) ir::bind(statement, "ones", {K});
          return statement;
        };
        const ir::Contraction f = bind_all(fast), g = bind_all(generic);
        CHECK(ir::analyze(f).kind == ir::PatternKind::gemm);
        std::vector<double> a = storage_for(ir::tensor(f, "A"), 1), bm = storage_for(ir::tensor(f, "B"), 2);
        std::vector<double> c_fast = storage_for(ir::tensor(f, "C"), 3), c_generic = c_fast;
        const ir::ScalarValues scalars{{"alpha", 1.5}, {"beta", -0.5}};
        ir::evaluate(f, {{"A", a.data()}, {"B", bm.data()}}, c_fast.data(), scalars);
        ir::evaluate(g, {{"A", a.data()}, {"B", bm.data()}, {"ones", all_ones.data()}}, c_generic.data(), scalars);
        for (std::size_t i = 0; i < c_fast.size(); ++i) REQUIRE(c_fast[i] == doctest::Approx(c_generic[i]).epsilon(1e-12));
      }
}

TEST_CASE("random batched layouts: whatever pattern analysis makes of them computes the same") {
  Tensor<double, 3> A("A"), B("B"), C("C");
  Tensor<double, 1> ones("ones");
  const ir::Contraction fast = compile(C(b, m, n) = sum(k, A(b, m, k) * B(b, k, n))).ir();
  const ir::Contraction generic = compile(C(b, m, n) = sum(k, A(b, m, k) * B(b, k, n) * ones(k))).ir();
  std::mt19937 generator(42);
  auto pick = [&](std::vector<std::int64_t> choices) { return choices[generator() % choices.size()]; };
  // Dense strides for `shape` nested in a random order, each dimension padded by 0 or 1 element.
  auto random_strides = [&](const std::vector<std::int64_t>& shape) {
    std::vector<int> order{0, 1, 2};
    std::shuffle(order.begin(), order.end(), generator);
    std::vector<std::int64_t> strides(3);
    std::int64_t stride = 1;
    for (int d : order) {
      strides[d] = stride;
      stride *= shape[d] + pick({0, 0, 1});
    }
    return strides;
  };
  int gemms = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t batches = pick({1, 3}), M = pick({1, 2, 5}), N = pick({1, 3, 4}), K = pick({1, 2, 6});
    const auto a_strides = random_strides({batches, M, K}), b_strides = random_strides({batches, K, N});
    const auto c_strides = random_strides({batches, M, N});
    auto bind_all = [&](ir::Contraction statement) {
      ir::bind(statement, "A", {batches, M, K}, a_strides);
      ir::bind(statement, "B", {batches, K, N}, b_strides);
      ir::bind(statement, "C", {batches, M, N}, c_strides);
      if (statement.tensors.size() == 4) ir::bind(statement, "ones", {K});
      return statement;
    };
    const ir::Contraction f = bind_all(fast), g = bind_all(generic);
    const ir::Pattern pattern = ir::analyze(f);
    CAPTURE(ir::to_string(f));
    CAPTURE(pattern.reason);
    gemms += pattern.kind == ir::PatternKind::gemm;
    const std::vector<double> a = storage_for(ir::tensor(f, "A"), 20 + trial), bm = storage_for(ir::tensor(f, "B"), 21);
    const std::vector<double> all_ones(K, 1.0);
    std::vector<double> out_fast(static_cast<std::size_t>(ir::span_of(ir::tensor(f, "C")).end), 0.0);
    std::vector<double> out_generic = out_fast;
    ir::evaluate(f, {{"A", a.data()}, {"B", bm.data()}}, out_fast.data());
    ir::evaluate(g, {{"A", a.data()}, {"B", bm.data()}, {"ones", all_ones.data()}}, out_generic.data());
    for (std::size_t i = 0; i < out_fast.size(); ++i) REQUIRE(out_fast[i] == doctest::Approx(out_generic[i]).epsilon(1e-12));
    if (pattern.kind != ir::PatternKind::gemm) continue;
    // The description itself, on the user's arrays, as a GPU kernel would run it.
    std::vector<double> out_description(out_fast.size(), 0.0);
    ir::reference_gemm(pattern.gemm, 1, 0, pattern.a == "A" ? a.data() : bm.data(),
                       pattern.b == "B" ? bm.data() : a.data(), out_description.data());
    for (std::size_t i = 0; i < out_fast.size(); ++i)
      REQUIRE(out_description[i] == doctest::Approx(out_generic[i]).epsilon(1e-12));
  }
  MESSAGE(gemms, " of 300 random layouts were GEMMs");
  CHECK(gemms > 100);
}

TEST_CASE("the implicit-GEMM path and the generic path agree on convolutions") {
  Tensor<double, 4> I("I"), F("F"), O("O");
  Tensor<double, 1> ones("ones");
  Scalar alpha("alpha");
  const ir::Contraction fast = compile(O(b, k, p, q) =
      alpha * sum(c, r, s, I(b, c, 2 * p + 2 * r - 1, q + s - 2) * F(k, c, r, s)) + O(b, k, p, q)).ir();
  const ir::Contraction generic = compile(O(b, k, p, q) =
      alpha * sum(c, r, s, I(b, c, 2 * p + 2 * r - 1, q + s - 2) * F(k, c, r, s) * ones(c)) + O(b, k, p, q)).ir();
  const std::vector<double> all_ones(5, 1.0);
  for (ir::ImageLayout image : {ir::ImageLayout::nchw, ir::ImageLayout::chwn, ir::ImageLayout::nhwc})
    for (ir::FilterLayout filter : {ir::FilterLayout::kcrs, ir::FilterLayout::crsk, ir::FilterLayout::krsc}) {
      ir::Conv shape = ir::dense_conv(ir::DType::f64, 2, 5, 9, 8, 3, 3, 4, 1, 0, 1, image, filter);
      shape.p = 5, shape.q = 7;  // taps past the last row and column too
      shape.output_strides = ir::dense_strides(image, {shape.n, shape.k, shape.p, shape.q});
      auto bind_all = [&](ir::Contraction statement) {
        auto vec = [](const std::array<std::int64_t, 4>& a) { return std::vector<std::int64_t>(a.begin(), a.end()); };
        ir::bind(statement, "I", {shape.n, shape.c, shape.h, shape.w}, vec(shape.input_strides));
        ir::bind(statement, "F", {shape.k, shape.c, shape.r, shape.s}, vec(shape.filter_strides));
        ir::bind(statement, "O", {shape.n, shape.k, shape.p, shape.q}, vec(shape.output_strides));
        if (statement.tensors.size() == 4) ir::bind(statement, "ones", {shape.c});
        return statement;
      };
      const ir::Contraction f = bind_all(fast), g = bind_all(generic);
      REQUIRE(ir::analyze(f).kind == ir::PatternKind::conv);
      const std::vector<double> in = storage_for(ir::tensor(f, "I"), 12), weights = storage_for(ir::tensor(f, "F"), 13);
      std::vector<double> out_fast = storage_for(ir::tensor(f, "O"), 14), out_generic = out_fast;
      ir::evaluate(f, {{"I", in.data()}, {"F", weights.data()}}, out_fast.data(), {{"alpha", 0.75}});
      ir::evaluate(g, {{"I", in.data()}, {"F", weights.data()}, {"ones", all_ones.data()}}, out_generic.data(),
                   {{"alpha", 0.75}});
      for (std::size_t i = 0; i < out_fast.size(); ++i)
        REQUIRE(out_fast[i] == doctest::Approx(out_generic[i]).epsilon(1e-12));
    }
}

TEST_CASE("reference_gemm against a naive loop: transpositions, padding, batches, beta = 0") {
  for (bool at : {false, true})
    for (bool bt : {false, true}) {
      ir::Gemm g = ir::dense_gemm(ir::DType::f32, 70, 9, 300, at, bt, 3);
      g.lda += 5, g.ldb += 1, g.ldc += 2;
      g.stride_a = g.lda * (at ? g.m : g.k) + 7, g.stride_b = 0, g.stride_c = g.ldc * g.n;
      const ir::GemmStorage storage = ir::gemm_storage(g);
      const std::vector<double> a = random_values(storage.a, 4), bm = random_values(storage.b, 5);
      std::vector<double> out(storage.c, std::numeric_limits<double>::quiet_NaN());
      ir::reference_gemm(g, 0.5, 0.0, a.data(), bm.data(), out.data());
      for (std::int64_t batch = 0; batch < g.batch; ++batch) {
        const std::vector<double> expected = naive_gemm(g, a.data() + batch * g.stride_a, bm.data() + batch * g.stride_b);
        for (std::int64_t j = 0; j < g.n; ++j)
          for (std::int64_t i = 0; i < g.m; ++i)
            REQUIRE(out[batch * g.stride_c + i + j * g.ldc] == doctest::Approx(0.5 * expected[i + j * g.m]).epsilon(1e-12));
      }
    }
  ir::Gemm bad = ir::dense_gemm(ir::DType::f32, 8, 8, 8, false, false);
  bad.lda = 4;
  CHECK_THROWS_WITH_AS(ir::reference_gemm(bad, 1, 0, nullptr, nullptr, nullptr),
                       doctest::Contains("lda is smaller than the rows of A as stored"), InvalidArgument);
}

TEST_CASE("a batched GEMM through the DSL matches reference_gemm on its description") {
  Tensor<double, 3> A("A"), B("B"), C("C");
  ir::Contraction statement = compile(C(b, m, n) = sum(k, A(b, m, k) * B(b, k, n))).ir();
  ir::bind(statement, "A", {3, 5, 4});
  ir::bind(statement, "B", {3, 4, 6});
  ir::bind(statement, "C", {3, 5, 6});
  const ir::Pattern pattern = ir::analyze(statement);
  REQUIRE(pattern.kind == ir::PatternKind::gemm);
  std::vector<double> a = random_values(60, 6), bm = random_values(72, 7), out(90), expected(90);
  ir::evaluate(statement, {{"A", a.data()}, {"B", bm.data()}}, out.data());
  // Row-major C = A B is column-major C^T = B^T A^T: the description takes B as its A.
  ir::reference_gemm(pattern.gemm, 1, 0, bm.data(), a.data(), expected.data());
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == doctest::Approx(expected[i]).epsilon(1e-12));
}

TEST_CASE("fast enough to check GPU results: 2560 x 128 x 2560 and a padded convolution") {
  using clock = std::chrono::steady_clock;
  Tensor<float, 2> A("A"), B("B"), C("C");
  ir::Contraction gemm = compile(C(m, n) = sum(k, A(m, k) * B(k, n))).ir();
  ir::bind(gemm, "A", {2560, 2560}, {1, 2560});
  ir::bind(gemm, "B", {2560, 128}, {1, 2560});
  ir::bind(gemm, "C", {2560, 128}, {1, 2560});
  const std::vector<double> a = random_values(2560 * 2560, 8), bm = random_values(2560 * 128, 9);
  std::vector<double> out(2560 * 128);
  auto start = clock::now();
  ir::evaluate(gemm, {{"A", a.data()}, {"B", bm.data()}}, out.data());
  const double gemm_seconds = std::chrono::duration<double>(clock::now() - start).count();
  MESSAGE("GEMM 2560x128x2560 in float64: ", gemm_seconds, " s");
  CHECK(gemm_seconds < 2.0);
  double spot = 0;
  for (int l = 0; l < 2560; ++l) spot += a[17 + l * 2560] * bm[l + 99 * 2560];
  CHECK(out[17 + 99 * 2560] == doctest::Approx(spot).epsilon(1e-12));

  Tensor<float, 4> I("I"), F("F"), O("O");
  ir::Contraction conv = compile(O(b, k, p, q) = sum(c, r, s, I(b, c, p + r - 1, q + s - 1) * F(k, c, r, s))).ir();
  ir::bind(conv, "I", {8, 64, 28, 28});
  ir::bind(conv, "F", {64, 64, 3, 3});
  ir::bind(conv, "O", {8, 64, 28, 28});
  const std::vector<double> image = random_values(8 * 64 * 28 * 28, 10), filters = random_values(64 * 64 * 9, 11);
  std::vector<double> conv_out(8 * 64 * 28 * 28);
  start = clock::now();
  ir::evaluate(conv, {{"I", image.data()}, {"F", filters.data()}}, conv_out.data());
  const double conv_seconds = std::chrono::duration<double>(clock::now() - start).count();
  MESSAGE("CONV 8x64x28x28, 64 filters 3x3, padding 1, in float64: ", conv_seconds, " s");
  CHECK(conv_seconds < 2.0);
  double corner = 0;  // O(0, 0, 0, 0): taps (0..1, 0..1) of every channel
  for (int ch = 0; ch < 64; ++ch)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) corner += image[ch * 784 + y * 28 + x] * filters[ch * 9 + (y + 1) * 3 + (x + 1)];
  CHECK(conv_out[0] == doctest::Approx(corner).epsilon(1e-12));
}
