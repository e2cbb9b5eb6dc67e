// expect: isaac: the output takes plain indices
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m; Index<'n'> n;
  Tensor<float, 2> A("A"), C("C");
  auto program = isaac::compile(C(m + 1, n) = A(m, n));
}
