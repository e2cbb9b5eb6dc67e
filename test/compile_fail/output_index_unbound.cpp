// expect: isaac: an output index is never bound on the right-hand side
// n indexes the output but nothing on the right.
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  auto program = isaac::compile(C(m, n) = sum(k, A(m, k) * B(k, m)));
}
