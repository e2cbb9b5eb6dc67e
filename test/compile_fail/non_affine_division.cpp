// expect: isaac: non-affine index expression: .* not divide
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'p'> p;
  Tensor<float, 1> X("X"), Y("Y");
  auto program = isaac::compile(Y(p) = X(p / 2));
}
