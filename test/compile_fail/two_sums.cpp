// expect: isaac: a statement holds at most one sum
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'k'> k; Index<'j'> j;
  Tensor<float, 2> A("A");
  Tensor<float, 1> C("C");
  auto program = isaac::compile(C(m) = sum(k, A(m, k)) + sum(j, A(m, j)));
}
