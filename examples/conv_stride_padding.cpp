// A convolution with stride 2 and padding 1, written as a contraction with affine coordinates:
// taps that fall outside the image read zero. Pattern analysis reads stride, padding and dilation off
// the coordinates and gives the implicit GEMM sizes and the tuner's input features.
#include <isaac/isaac.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace isaac;
using namespace isaac::dsl;

int main() {
  Index<'n'> n;
  Index<'k'> k;
  Index<'c'> c;
  Index<'p'> p;
  Index<'q'> q;
  Index<'r'> r;
  Index<'s'> s;
  Tensor<float, 4> I("I"), F("F"), O("O");
  const Program conv = compile(O(n, k, p, q) = sum(c, r, s, I(n, c, 2 * p + r - 1, 2 * q + s - 1) * F(k, c, r, s)));

  // NHWC images and KRSC filters: the statement names logical dimensions, the strides the layout.
  const ir::Conv shape = ir::dense_conv(ir::DType::f32, 2, 3, 7, 7, 4, 3, 3, 2, 1, 1, ir::ImageLayout::nhwc,
                                        ir::FilterLayout::krsc);
  auto strides = [](const std::array<std::int64_t, 4>& a) { return std::vector<std::int64_t>(a.begin(), a.end()); };
  ir::Contraction bound = conv.ir();
  ir::bind(bound, "I", {shape.n, shape.c, shape.h, shape.w}, strides(shape.input_strides));
  ir::bind(bound, "F", {shape.k, shape.c, shape.r, shape.s}, strides(shape.filter_strides));
  ir::bind(bound, "O", {shape.n, shape.k, shape.p, shape.q}, strides(shape.output_strides));
  const ir::Pattern pattern = ir::analyze(bound);
  const ir::ImplicitGemm gemm = ir::implicit_gemm(pattern.conv);
  std::printf("%s\n%s: %s\nimplicit GEMM: M = N*P*Q = %lld, N = K = %lld, K = C*R*S = %lld\nfeatures:",
              ir::to_string(bound).c_str(), std::string(ir::name(pattern.kind)).c_str(),
              ir::to_string(pattern.conv).c_str(), static_cast<long long>(gemm.m), static_cast<long long>(gemm.n),
              static_cast<long long>(gemm.k));
  const ir::InputFeatures features = ir::input_features(pattern.conv);
  for (std::size_t i = 0; i < features.names.size(); ++i)
    std::printf(" %s=%g", std::string(features.names[i]).c_str(), features.values[i]);
  std::printf("\n");

  // Every input element 1 and every filter tap 1: each output counts its taps inside the image.
  std::vector<double> image(shape.n * shape.c * shape.h * shape.w, 1.0), filters(shape.k * shape.c * 9, 1.0);
  std::vector<double> out(shape.n * shape.k * shape.p * shape.q);
  ir::evaluate(bound, {{"I", image.data()}, {"F", filters.data()}}, out.data());
  std::printf("O(0, 0, p, q): C (3) times the taps of each 3x3 window that fall inside the 7x7 image\n");
  auto taps_inside = [](std::int64_t output) {  // rows 2 * output - 1 .. 2 * output + 1 within 0 .. 6
    int inside = 0;
    for (std::int64_t tap = 2 * output - 1; tap <= 2 * output + 1; ++tap) inside += tap >= 0 && tap < 7;
    return inside;
  };
  int failures = 0;
  for (std::int64_t y = 0; y < shape.p; ++y) {
    for (std::int64_t x = 0; x < shape.q; ++x) {
      const double value = out[(y * shape.q + x) * shape.k];
      if (std::abs(value - 3.0 * taps_inside(y) * taps_inside(x)) > 1e-12) ++failures;
      std::printf(" %4g", value);
    }
    std::printf("\n");
  }
  std::printf("%s\n", failures == 0 ? "padding reads zero as expected" : "MISMATCH");
  return failures == 0 ? 0 : 1;
}
