// expect: isaac: a reduction index appears in the output
// k is summed over and kept at once.
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  auto program = isaac::compile(C(m, k) = sum(k, A(m, k) * B(k, n)));
}
