// expect: isaac: wrong number of indices
// A rank-2 tensor accessed with three indices.
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k;
  Tensor<float, 2> A("A"), C("C");
  auto program = isaac::compile(C(m, n) = A(m, n, k));
}
