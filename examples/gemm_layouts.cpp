// One GEMM, C = A B, with its operands stored in each layout: transposition is a stride pattern, and
// pattern analysis turns every one into the BLAS column-major description the code generator takes
// (a row-major C becomes C^T = B^T A^T). Code generation is not wired yet: the CPU reference runs it.
#include <isaac/isaac.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace isaac;
using namespace isaac::dsl;

int main() {
  Index<'m'> m;
  Index<'n'> n;
  Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  Scalar alpha("alpha"), beta("beta");
  const Program gemm = compile(C(m, n) = alpha * sum(k, A(m, k) * B(k, n)) + beta * C(m, n));
  std::printf("statement: %s\n\n", ir::to_string(gemm.ir()).c_str());

  const std::int64_t M = 6, N = 4, K = 5;
  const std::vector<std::int64_t> column_major_a{1, M}, row_major_a{K, 1};
  const std::vector<std::int64_t> column_major_b{1, K}, row_major_b{N, 1};
  const std::vector<std::int64_t> column_major_c{1, M}, row_major_c{N, 1};
  int failures = 0;
  for (bool a_row_major : {false, true})
    for (bool b_row_major : {false, true})
      for (bool c_row_major : {false, true}) {
        ir::Contraction bound = gemm.ir();
        ir::bind(bound, "A", {M, K}, a_row_major ? row_major_a : column_major_a);
        ir::bind(bound, "B", {K, N}, b_row_major ? row_major_b : column_major_b);
        ir::bind(bound, "C", {M, N}, c_row_major ? row_major_c : column_major_c);
        const ir::Pattern pattern = ir::analyze(bound);
        std::printf("A %s, B %s, C %s\n  %s\n  %s: %s (A=%s B=%s C=%s)\n", a_row_major ? "row-major" : "col-major",
                    b_row_major ? "row-major" : "col-major", c_row_major ? "row-major" : "col-major",
                    ir::to_string(bound).c_str(), std::string(ir::name(pattern.kind)).c_str(),
                    ir::to_string(pattern.gemm).c_str(), pattern.a.c_str(), pattern.b.c_str(), pattern.c.c_str());

        // A(i, l) = i + l, B(l, j) = l - j, C(i, j) = 1; alpha = 2, beta = 3.
        std::vector<double> a(M * K), b(K * N), c(M * N, 1.0);
        const auto& sa = ir::tensor(bound, "A").strides;
        const auto& sb = ir::tensor(bound, "B").strides;
        const auto& sc = ir::tensor(bound, "C").strides;
        for (std::int64_t i = 0; i < M; ++i)
          for (std::int64_t l = 0; l < K; ++l) a[i * sa[0] + l * sa[1]] = double(i + l);
        for (std::int64_t l = 0; l < K; ++l)
          for (std::int64_t j = 0; j < N; ++j) b[l * sb[0] + j * sb[1]] = double(l - j);
        ir::evaluate(bound, {{"A", a.data()}, {"B", b.data()}}, c.data(), {{"alpha", 2.0}, {"beta", 3.0}});
        for (std::int64_t i = 0; i < M; ++i)
          for (std::int64_t j = 0; j < N; ++j) {
            double expected = 3.0;
            for (std::int64_t l = 0; l < K; ++l) expected += 2.0 * double(i + l) * double(l - j);
            if (std::abs(c[i * sc[0] + j * sc[1]] - expected) > 1e-9) ++failures;
          }
        std::printf("  C(5,3) = %g\n\n", c[5 * sc[0] + 3 * sc[1]]);
      }
  std::printf("%s\n", failures == 0 ? "all layouts agree with the formula" : "MISMATCH");
  return failures == 0 ? 0 : 1;
}
