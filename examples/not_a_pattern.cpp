// Contractions that are neither GEMM nor CONV: pattern analysis says why, and the CPU reference still
// evaluates them (it runs anything the IR accepts).
#include <isaac/isaac.hpp>

#include <cstdio>
#include <vector>

using namespace isaac;
using namespace isaac::dsl;

int main() {
  Index<'m'> m;
  Index<'n'> n;
  Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  Tensor<float, 1> d("d");

  // A GEMM scaled along K by a third tensor: three factors in the product.
  ir::Contraction scaled = compile(C(m, n) = sum(k, A(m, k) * d(k) * B(k, n))).ir();
  ir::bind(scaled, "A", {2, 3});
  ir::bind(scaled, "B", {3, 2});
  ir::bind(scaled, "C", {2, 2});
  ir::bind(scaled, "d", {3});
  const ir::Pattern pattern = ir::analyze(scaled);
  std::printf("%s\n%s: %s\n", ir::to_string(scaled).c_str(), std::string(ir::name(pattern.kind)).c_str(),
              pattern.reason.c_str());
  const std::vector<double> a{1, 2, 3, 4, 5, 6}, b{1, 0, 0, 1, 1, 1}, weights{1, 10, 100};
  std::vector<double> c(4);
  ir::evaluate(scaled, {{"A", a.data()}, {"B", b.data()}, {"d", weights.data()}}, c.data());
  std::printf("C = [[%g, %g], [%g, %g]]\n\n", c[0], c[1], c[2], c[3]);
  const bool scaled_ok = c == std::vector<double>{301, 320, 604, 650};

  // A parsed contraction, as a tool takes it on its command line: a diagonal is no GEMM layout.
  const ir::Contraction diagonal = ir::parse("y(m) = sum(k, A(m,k) * A(k,k)) | y:f32[3]{1} A:f32[3,3]{3,1}");
  std::printf("%s\n%s: %s\n", ir::to_string(diagonal).c_str(),
              std::string(ir::name(ir::analyze(diagonal).kind)).c_str(), ir::analyze(diagonal).reason.c_str());

  // And an element-wise statement has nothing to contract.
  ir::Contraction elementwise = compile(C(m, n) = relu(A(m, n) - B(n, m))).ir();
  for (const char* name : {"A", "B", "C"}) ir::bind(elementwise, name, {2, 2});
  std::printf("%s\n%s: %s\n", ir::to_string(elementwise).c_str(),
              std::string(ir::name(ir::analyze(elementwise).kind)).c_str(), ir::analyze(elementwise).reason.c_str());
  std::printf("%s\n", scaled_ok ? "reference results as expected" : "MISMATCH");
  return scaled_ok ? 0 : 1;
}
