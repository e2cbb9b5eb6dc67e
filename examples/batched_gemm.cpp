// A batched GEMM: the index b appears in A, B and C, so it forms the batch group of the pattern.
// The same statement with the batch index innermost in memory is still a GEMM, fused differently.
#include <isaac/isaac.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace isaac;
using namespace isaac::dsl;

int main() {
  Index<'b'> b;
  Index<'m'> m;
  Index<'n'> n;
  Index<'k'> k;
  Tensor<double, 3> A("A"), B("B"), C("C");
  const Program batched = compile(C(b, m, n) = sum(k, A(b, m, k) * B(b, k, n)));

  const std::int64_t batches = 3, M = 4, N = 5, K = 6;
  ir::Contraction bound = batched.ir();
  ir::bind(bound, "A", {batches, M, K});  // dense row-major
  ir::bind(bound, "B", {batches, K, N});
  ir::bind(bound, "C", {batches, M, N});
  const ir::Pattern pattern = ir::analyze(bound);
  std::printf("%s\n%s: %s batch strides A=%lld B=%lld C=%lld\n", ir::to_string(bound).c_str(),
              std::string(ir::name(pattern.kind)).c_str(), ir::to_string(pattern.gemm).c_str(),
              static_cast<long long>(pattern.gemm.stride_a), static_cast<long long>(pattern.gemm.stride_b),
              static_cast<long long>(pattern.gemm.stride_c));

  // A[b](i, l) = b + i * l, B[b](l, j) = l + j.
  std::vector<double> a(batches * M * K), bm(batches * K * N), c(batches * M * N);
  for (std::int64_t s = 0; s < batches; ++s) {
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t l = 0; l < K; ++l) a[(s * M + i) * K + l] = double(s + i * l);
    for (std::int64_t l = 0; l < K; ++l)
      for (std::int64_t j = 0; j < N; ++j) bm[(s * K + l) * N + j] = double(l + j);
  }
  ir::evaluate(bound, {{"A", a.data()}, {"B", bm.data()}}, c.data());
  int failures = 0;
  for (std::int64_t s = 0; s < batches; ++s)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        double expected = 0;
        for (std::int64_t l = 0; l < K; ++l) expected += double(s + i * l) * double(l + j);
        if (std::abs(c[(s * M + i) * N + j] - expected) > 1e-9) ++failures;
      }
  std::printf("C[2](3, 4) = %g\n", c[(2 * M + 3) * N + 4]);

  // The ir::Gemm drives reference_gemm directly, as the GPU tests of the generator do.
  std::vector<double> via_description(c.size());
  ir::reference_gemm(pattern.gemm, 1.0, 0.0, pattern.a == "A" ? a.data() : bm.data(),
                     pattern.b == "B" ? bm.data() : a.data(), via_description.data());
  if (via_description != c) ++failures;

  // Batch innermost in memory: A(b, m, k) at b + batches * (m + M * k) and so on.
  ir::bind(bound, "A", {batches, M, K}, {1, batches, batches * M});
  ir::bind(bound, "B", {batches, K, N}, {1, batches, batches * K});
  ir::bind(bound, "C", {batches, M, N}, {1, batches, batches * M});
  const ir::Pattern interleaved = ir::analyze(bound);
  std::printf("batch innermost: %s: %s\n", std::string(ir::name(interleaved.kind)).c_str(),
              interleaved.kind == ir::PatternKind::gemm ? ir::to_string(interleaved.gemm).c_str()
                                                        : interleaved.reason.c_str());
  std::printf("%s\n", failures == 0 ? "results agree" : "MISMATCH");
  return failures == 0 ? 0 : 1;
}
