// expect: isaac: sums do not nest
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k; Index<'j'> j;
  Tensor<float, 3> A("A");
  Tensor<float, 1> C("C");
  auto program = isaac::compile(C(m) = sum(k, sum(j, A(m, k, j))));
}
