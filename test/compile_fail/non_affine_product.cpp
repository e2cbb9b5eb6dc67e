// expect: isaac: non-affine index expression: .* not multiply two indices
// p * r is not affine: a convolution coordinate is stride * p + r - pad.
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Index<'p'> p; Index<'r'> r;
  Tensor<float, 1> X("X"), W("W"), Y("Y");
  auto program = isaac::compile(Y(p) = sum(r, X(p * r) * W(r)));
}
