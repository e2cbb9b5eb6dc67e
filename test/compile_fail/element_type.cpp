// expect: isaac: a tensor's element type is float, double
#include <isaac/isaac.hpp>
using namespace isaac::dsl;
int main() {
  Tensor<int, 2> A("A");
}
