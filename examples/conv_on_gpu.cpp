// A convolution on the GPU: isaac chooses the parameters for the problem (its model ranks the whole
// legal space, the ten best are timed), compiles the kernel, and runs it; the result is checked
// against a float64 CPU reference, then timed.
//
//   example_conv_on_gpu      (f32, 4 images of 56 x 56 with 64 channels, 128 filters of 3 x 3, stride 2,
//                             padding 1, NHWC images and KRSC filters: a ResNet downsampling layer)
//
// With stride 2 no Winograd kernel applies, so every kernel isaac may choose sums the C*R*S products
// directly, and the error bound below holds for it (Winograd's transforms need their own: test/gpu/conv.cpp).
// Without a CUDA driver it prints why and exits 77, which ctest reports as skipped.
#include <isaac/conv.hpp>
#include <isaac/isaac.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tuning.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace isaac;

int main() try {
  std::string why;
  if (!runtime::driver_available(&why) || runtime::device_count() == 0) {
    std::printf("SKIPPED: this example runs on a GPU: %s\n", why.empty() ? "no CUDA device" : why.c_str());
    return 77;
  }
  const ir::Conv problem = ir::dense_conv(ir::DType::f32, /*n=*/4, /*c=*/64, /*h=*/56, /*w=*/56, /*k=*/128, /*r=*/3,
                                          /*s=*/3, /*stride=*/2, /*pad=*/1, /*dilation=*/1, ir::ImageLayout::nhwc,
                                          ir::FilterLayout::krsc);
  const runtime::DeviceInfo device = runtime::device_info();
  std::printf("%s on %s\n", ir::to_string(problem).c_str(), device.name.c_str());

  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> input(std::size_t(problem.n * problem.c * problem.h * problem.w));
  std::vector<float> filter(std::size_t(problem.k * problem.c * problem.r * problem.s));
  std::vector<float> output(std::size_t(problem.n * problem.k * problem.p * problem.q));
  for (auto* v : {&input, &filter, &output})
    for (float& x : *v) x = uniform(rng);
  runtime::Buffer di(input.size() * sizeof(float)), df(filter.size() * sizeof(float)),
      dout(output.size() * sizeof(float));
  di.upload(input.data(), di.bytes());
  df.upload(filter.data(), df.bytes());
  dout.upload(output.data(), dout.bytes());

  const ConvDecision decision = choose_conv(problem);
  std::printf("parameters %s\nchosen by  %s, %d kernels timed\n", decision.params.str().c_str(),
              decision.how.c_str(), decision.timed);
  if (decision.params.wg != 0) throw Error("a Winograd kernel was chosen for a stride-2 convolution");
  const CompiledConv conv(problem, decision.params);
  const double alpha = 1.5, beta = 0.5;
  runtime::Stream stream;
  conv.run(dout.ptr(), di.ptr(), df.ptr(), alpha, beta, stream);
  stream.synchronize();

  // The float64 reference, and a bound on f32's rounding error for each element: C*R*S products and
  // partial sums (and a split of the reduction, at most that many ways), each off by at most half a
  // unit in the last place.
  std::vector<float> result(output.size());
  dout.download(result.data(), dout.bytes());
  const auto& is = problem.input_strides;
  const auto& fs = problem.filter_strides;
  const auto& os = problem.output_strides;
  const std::int64_t reduction = problem.c * problem.r * problem.s;
  const double unit = std::ldexp(1.0, -24);
  double worst = 0;
  for (std::int64_t n = 0; n < problem.n; ++n)
    for (std::int64_t k = 0; k < problem.k; ++k)
      for (std::int64_t p = 0; p < problem.p; ++p)
        for (std::int64_t q = 0; q < problem.q; ++q) {
          const std::int64_t o = n * os[0] + k * os[1] + p * os[2] + q * os[3];
          double exact = beta * output[std::size_t(o)], magnitude = std::abs(exact);
          for (std::int64_t c = 0; c < problem.c; ++c)
            for (std::int64_t r = 0; r < problem.r; ++r)
              for (std::int64_t s = 0; s < problem.s; ++s) {
                const std::int64_t h = p * problem.stride_h + r * problem.dilation_h - problem.pad_h;
                const std::int64_t w = q * problem.stride_w + s * problem.dilation_w - problem.pad_w;
                if (h < 0 || h >= problem.h || w < 0 || w >= problem.w) continue;
                const double x = alpha * double(input[std::size_t(n * is[0] + c * is[1] + h * is[2] + w * is[3])]) *
                                 double(filter[std::size_t(k * fs[0] + c * fs[1] + r * fs[2] + s * fs[3])]);
                exact += x;
                magnitude += std::abs(x);
              }
          const double bound = 2.0 * double(reduction + 3) * unit * magnitude + unit * std::abs(exact);
          worst = std::max(worst, std::abs(double(result[std::size_t(o)]) - exact) / bound);
        }
  std::printf("against the float64 reference: the largest error is %.3f of its bound\n", worst);
  if (!(worst <= 1.0)) {
    std::printf("MISMATCH\n");
    return 1;
  }

  const runtime::Timing t = runtime::time_on_stream(
      [&](const runtime::Stream& s) { conv.run(dout.ptr(), di.ptr(), df.ptr(), alpha, beta, s); }, stream);
  const double flops = 2.0 * double(problem.n * problem.k * problem.p * problem.q) * double(reduction);
  std::printf("median %.4f ms, %.2f TFLOP/s\n", t.median_ms, flops / (t.median_ms * 1e9));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
