// expect: isaac: sum over an index that its body never uses
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n; Index<'k'> k; Index<'j'> j;
  Tensor<float, 2> A("A"), B("B"), C("C");
  auto program = isaac::compile(C(m, n) = sum(k, j, A(m, k) * B(k, n)));
}
