// expect: isaac: an index is not a value
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'m'> m;
  Tensor<float, 1> A("A"), C("C");
  auto program = isaac::compile(C(m) = m * A(m));
}
