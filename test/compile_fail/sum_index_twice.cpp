// expect: isaac: sum lists an index twice
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k;
  Tensor<float, 2> A("A"), B("B"), C("C");
  auto program = isaac::compile(C(m, n) = sum(k, k, A(m, k) * B(k, n)));
}
