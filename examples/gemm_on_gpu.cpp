// The program a user writes first: C = alpha A B + beta C in the DSL, compiled by isaac and run on the
// GPU, checked against a float64 CPU reference, then timed.
//
//   example_gemm_on_gpu [M N K]      (default 1000 700 300: none of them a multiple of a tile)
//
// The first call of the program with a shape chooses its parameters: the shipped model ranks the
// whole legal space, its ten favourite sets are compiled in parallel and timed, and the fastest is
// kept (in memory, and in the tuning database for the next process). Later calls only launch.
// Without a CUDA driver it prints why and exits 77, which ctest reports as skipped.
#include <isaac/isaac.hpp>
#include <isaac/runtime/timer.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace isaac;
using namespace isaac::dsl;

namespace {

std::int64_t size_argument(const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 1 || value > 4096)
    throw InvalidArgument(std::string("a size must be an integer from 1 to 4096 (the reference runs on the CPU), ") +
                          "not '" + text + "'");
  return value;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 1 && argc != 4) {
    std::fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
    return 2;
  }
  const std::int64_t M = argc == 4 ? size_argument(argv[1]) : 1000;
  const std::int64_t N = argc == 4 ? size_argument(argv[2]) : 700;
  const std::int64_t K = argc == 4 ? size_argument(argv[3]) : 300;
  std::string why;
  if (!runtime::driver_available(&why) || runtime::device_count() == 0) {
    std::printf("SKIPPED: this example runs on a GPU: %s\n", why.empty() ? "no CUDA device" : why.c_str());
    return 77;
  }

  Index<'m'> m;
  Index<'n'> n;
  Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  Scalar alpha("alpha"), beta("beta");
  const Program gemm = compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n));

  // Row-major operands with entries in [-1, 1].
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(std::size_t(M * K)), b(std::size_t(K * N)), c(std::size_t(M * N));
  for (auto* v : {&a, &b, &c})
    for (float& x : *v) x = uniform(rng);
  runtime::Buffer da(a.size() * sizeof(float)), db(b.size() * sizeof(float)), dc(c.size() * sizeof(float));
  da.upload(a.data(), da.bytes());
  db.upload(b.data(), db.bytes());
  dc.upload(c.data(), dc.bytes());
  const DeviceTensors tensors{
      {"A", {da.ptr(), {M, K}, {}}}, {"B", {db.ptr(), {K, N}, {}}}, {"C", {dc.ptr(), {M, N}, {}}}};
  const double alpha_value = 1.5, beta_value = 0.5;
  const ir::ScalarValues scalars{{"alpha", alpha_value}, {"beta", beta_value}};

  const runtime::DeviceInfo device = runtime::device_info();
  std::printf("C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n), f32, M=%lld N=%lld K=%lld on %s\n",
              (long long)M, (long long)N, (long long)K, device.name.c_str());
  runtime::Stream stream;
  const auto start = std::chrono::steady_clock::now();
  gemm(stream, tensors, scalars);
  stream.synchronize();
  const double first_call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [problem, decision] : gemm.decisions()) {
    std::printf("first call: %.2f s (choosing the parameters, compiling and running)\n", first_call_s);
    std::printf("  problem    %s\n  parameters %s\n  chosen by  %s, %d kernels timed\n", problem.c_str(),
                decision.params.str().c_str(), decision.how.c_str(), decision.timed);
  }

  // The float64 reference, and a bound on f32's rounding error for each element: the products and
  // the partial sums of K terms (and of the split of K, at most K ways), each off by at most half a
  // unit in the last place.
  std::vector<float> result(c.size());
  dc.download(result.data(), dc.bytes());
  const double unit = std::ldexp(1.0, -24);
  double worst = 0;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double exact = beta_value * c[std::size_t(i * N + j)], magnitude = std::abs(exact);
      for (std::int64_t l = 0; l < K; ++l) {
        const double p = alpha_value * double(a[std::size_t(i * K + l)]) * double(b[std::size_t(l * N + j)]);
        exact += p;
        magnitude += std::abs(p);
      }
      const double bound = 2.0 * double(K + 3) * unit * magnitude + unit * std::abs(exact);
      worst = std::max(worst, std::abs(double(result[std::size_t(i * N + j)]) - exact) / bound);
    }
  std::printf("against the float64 reference: the largest error is %.3f of its bound\n", worst);
  if (!(worst <= 1.0)) {
    std::printf("MISMATCH\n");
    return 1;
  }

  // Later calls only launch: median of 25 runs with the L2 flushed before each.
  const runtime::Timing t = runtime::time_on_stream([&](const runtime::Stream& s) { gemm(s, tensors, scalars); },
                                                    stream);
  std::printf("later calls: median %.4f ms, %.2f TFLOP/s\n", t.median_ms,
              2.0 * double(M) * double(N) * double(K) / (t.median_ms * 1e9));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
