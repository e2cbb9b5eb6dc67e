#include <isaac/error.hpp>
#include <isaac/tune/model_features.hpp>

#include <doctest/doctest.h>

#include <random>

using namespace isaac;
using namespace isaac::tune;

namespace {

// A trained-looking model over features a, b, c: random weights and a normalisation that is not the
// identity, so that a feature read from the wrong column would show.
Model model_over(std::vector<std::string> features) {
  Model m;
  m.template_name = "conv";
  m.features = std::move(features);
  m.mlp = Mlp(int(m.features.size()), {8, 4}, 5);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (std::size_t i = 0; i < m.features.size(); ++i) {
    m.mlp.feature_mean[i] = u(rng);
    m.mlp.feature_scale[i] = u(rng);
  }
  m.mlp.target_mean = 3, m.mlp.target_scale = 0.5;
  return m;
}

}  // namespace

TEST_CASE("a model carried to more features predicts what it did, whatever the new ones hold") {
  const Model old = model_over({"a", "b", "c"});
  // New features before, between and after the old ones, and the old ones in another order.
  const std::vector<std::string> names = {"x", "c", "a", "y", "b", "z"};
  const Model wider = with_features(old, names);
  CHECK(wider.features == names);
  CHECK(wider.mlp.inputs() == 6);
  CHECK(wider.template_name == "conv");
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 10);
  for (int trial = 0; trial < 20; ++trial) {
    const double a = n(rng), b = n(rng), c = n(rng);
    const std::vector<double> before = {a, b, c};
    const std::vector<double> after = {n(rng), c, a, n(rng), b, n(rng)};
    CHECK(wider.mlp.predict(after.data(), 1)[0] == doctest::Approx(old.mlp.predict(before.data(), 1)[0]).epsilon(1e-12));
  }
  // Carried again to the same list, it is unchanged.
  const Model again = with_features(wider, names);
  CHECK(again.mlp.parameters() == wider.mlp.parameters());
}

TEST_CASE("a model cannot lose a feature on the way") {
  const Model old = model_over({"a", "b", "c"});
  CHECK_THROWS_WITH_AS(with_features(old, {"a", "c", "d"}),
                       doctest::Contains("the model's feature \"b\" is not among the 3 features"), InvalidArgument);
}
