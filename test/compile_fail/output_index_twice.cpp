// expect: isaac: an index appears twice in the output
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m;
  Tensor<float, 2> A("A"), C("C");
  auto program = isaac::compile(C(m, m) = A(m, m));
}
