// expect: isaac: an index on the right-hand side is neither an output index nor summed over
// k is used but neither kept nor summed.
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  auto program = isaac::compile(C(m, n) = A(m, k) * B(k, n));
}
