// expect: isaac: an index on the right-hand side is neither an output index nor summed over
// k is summed inside the sum but used again outside it.
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  auto program = isaac::compile(C(m, n) = sum(k, A(m, k) * B(k, n)) + A(m, k));
}
