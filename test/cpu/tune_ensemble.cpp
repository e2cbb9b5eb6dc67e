// Ensembles of models (tune/ensemble.hpp): a merged ensemble predicts its members' mean, its first
// member ranks as that member does, damaged ensembles are refused, model files keep them, and the
// searches rank with the first member, then the whole ensemble over that member's best.
#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/ensemble.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/model_file.hpp>
#include <isaac/tune/search.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace isaac;
using namespace isaac::tune;

namespace {

// Members with random weights (one seed each) and the normalisation of these rows.
std::vector<Mlp> members_on(const std::vector<double>& x, int features, const std::vector<int>& hidden, int count) {
  Samples s;
  s.features = features;
  s.x = x;
  s.y.assign(x.size() / size_t(features), 1.0);
  std::vector<Mlp> out;
  for (int m = 0; m < count; ++m) {
    out.emplace_back(features, hidden, 100 + m);
    out.back().fit_normalisation(s);
    out.back().target_mean = 1.5, out.back().target_scale = 0.7;
  }
  return out;
}

std::vector<double> random_rows(size_t rows, int features, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-3, 3);
  std::vector<double> x(rows * size_t(features));
  for (double& v : x) v = u(rng);
  return x;
}

Model ensemble_model(const std::vector<Mlp>& members, std::vector<std::string> features, const char* name) {
  Model model;
  model.template_name = name;
  model.features = std::move(features);
  model.mlp = merge_ensemble(members);
  model.ensemble = int(members.size());
  return model;
}

// The search's expected order: the first member's best `pool` sets, re-ranked by the ensemble.
std::vector<size_t> expected_order(const std::vector<double>& first, const std::vector<double>& whole, size_t pool) {
  std::vector<size_t> order(first.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] > first[b]; });
  order.resize(std::min(order.size(), pool));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return whole[a] > whole[b]; });
  return order;
}

}  // namespace

TEST_CASE("a merged ensemble predicts its members' mean, and its first member ranks as member 0") {
  for (const std::vector<int>& hidden : {std::vector<int>{8}, std::vector<int>{6, 4}}) {
    CAPTURE(hidden_to_string(hidden));
    const auto x = random_rows(50, 5, 1);
    const auto members = members_on(x, 5, hidden, 3);
    const Mlp merged = merge_ensemble(members);
    CHECK(merged.layers().front().outputs == 3 * hidden.front());
    std::vector<std::vector<double>> own;
    for (const Mlp& m : members) own.push_back(m.predict(x.data(), 50));
    const auto mean = merged.predict(x.data(), 50);
    const auto first = first_member(merged, 3).predict(x.data(), 50);
    for (size_t r = 0; r < 50; ++r) {
      CHECK(mean[r] == doctest::Approx((own[0][r] + own[1][r] + own[2][r]) / 3).epsilon(1e-12));
      // Member 0 up to the constant of the averaged output bias.
      CHECK(first[r] - own[0][r] == doctest::Approx(first[0] - own[0][0]).epsilon(1e-12));
    }
    CHECK_NOTHROW(check_ensemble(merged, 3));
    CHECK(merge_ensemble({members[1]}).predict(x.data(), 50) == own[1]);  // an ensemble of one is that network
  }
}

TEST_CASE("ensembles that are not side by side networks are refused with why") {
  const auto x = random_rows(20, 4, 2);
  auto members = members_on(x, 4, {6, 4}, 2);
  const Mlp merged = merge_ensemble(members);
  CHECK_THROWS_WITH_AS(check_ensemble(merged, 5), doctest::Contains("not a multiple"), InvalidArgument);
  Mlp joined = merged;
  joined.layers()[1].weights[1 * size_t(joined.layers()[1].inputs) + 7] = 0.5;  // a unit of member 0 reads member 1
  CHECK_THROWS_WITH_AS(check_ensemble(joined, 2), doctest::Contains("joins units of two ensemble members"),
                       InvalidArgument);
  CHECK_THROWS_AS(check_ensemble(merged, 0), InvalidArgument);
  Mlp other = members[1];
  other.feature_mean[0] += 1;
  CHECK_THROWS_WITH_AS(merge_ensemble({members[0], other}), doctest::Contains("normalisation"), InvalidArgument);
  CHECK_THROWS_WITH_AS(merge_ensemble({members[0], members_on(x, 4, {5, 4}, 1)[0]}), doctest::Contains("layer sizes"),
                       InvalidArgument);
  CHECK_THROWS_AS(merge_ensemble({Mlp(4, {}, 1), Mlp(4, {}, 2)}), InvalidArgument);
}

TEST_CASE("model files keep the ensemble and refuse a damaged one") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 64, 64, 64, false, false);
  const auto sets = lower::gemm_space(g);
  const auto x = gemm_features(g, std::span(sets).first(std::min<size_t>(sets.size(), 200)));
  const Model model = ensemble_model(members_on(x, int(gemm_feature_names().size()), {6}, 3), gemm_feature_names(), "gemm");
  const Model back = model_from_json(model_to_json(model));
  CHECK(back.ensemble == 3);
  CHECK(back.mlp.predict(x.data(), 1) == model.mlp.predict(x.data(), 1));
  std::string text = model_to_json(model);
  const auto at = text.find("\"ensemble\": 3");
  REQUIRE(at != std::string::npos);
  CHECK_THROWS_WITH_AS(model_from_json(std::string(text).replace(at, 13, "\"ensemble\": 4"), "m.json"),
                       doctest::Contains("m.json: hidden layer 0 has 18 units, not a multiple"), InvalidArgument);
  CHECK_THROWS_WITH_AS(model_from_json(std::string(text).replace(at, 13, "\"ensemble\": 0"), "m.json"),
                       doctest::Contains("\"ensemble\" must be"), InvalidArgument);
  // Files from before ensembles are one network.
  CHECK(model_from_json(std::string(text).replace(at, 15, "")).ensemble == 1);
}

TEST_CASE("the GEMM search ranks with the first member, then the ensemble over that member's best") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 300, 200, 500, false, true);
  // What the search ranks: the legal space less SW > 1 where the grid fits on the SMs at once.
  auto all = lower::gemm_space(g);
  std::erase_if(all, [&](const lower::GemmParams& p) { return p.sw > 1 && lower::gemm_grid_fits_at_once(g, p); });
  const auto x = gemm_features(g, all);
  REQUIRE(all.size() > size_t(2 * ensemble_pool));
  const Model model = ensemble_model(members_on(x, int(gemm_feature_names().size()), {16}, 3), gemm_feature_names(), "gemm");
  const auto first = first_member(model.mlp, 3).predict(x.data(), all.size());
  const auto whole = model.mlp.predict(x.data(), all.size());
  const auto order = expected_order(first, whole, size_t(ensemble_pool));

  const auto ranked = rank_gemm_space(g, {}, model, 10);
  REQUIRE(ranked.size() == 10);
  for (size_t i = 0; i < ranked.size(); ++i) {
    const double own = std::exp(model.mlp.predict(gemm_features(g, ranked[i].params).data(), 1)[0]);
    CHECK(ranked[i].predicted_tflops == doctest::Approx(own).epsilon(1e-4));
    if (i) CHECK(ranked[i].predicted_tflops <= ranked[i - 1].predicted_tflops * (1 + 1e-6));
    CHECK(ranked[i].predicted_tflops == doctest::Approx(std::exp(whole[order[i]])).epsilon(1e-4));
  }

  // The per-split and per-kind pools: the first member's best 2 of each KG and of each TC, scored by
  // the whole ensemble, after the same 10, less those among them.
  std::map<int, std::vector<size_t>> best_of_split, best_of_kind;
  std::vector<size_t> by_first(all.size());
  std::iota(by_first.begin(), by_first.end(), size_t(0));
  std::stable_sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) { return first[a] > first[b]; });
  for (size_t i : by_first) {
    if (auto& b = best_of_split[all[i].kg]; b.size() < 2) b.push_back(i);
    if (auto& b = best_of_kind[all[i].tc]; b.size() < 2) b.push_back(i);
  }
  CHECK(best_of_kind.size() == 3);  // f32 FMA, TC=1 and TC=2 sets
  const std::set<size_t> top(order.begin(), order.begin() + 10);
  std::set<size_t> pools;
  for (const auto* groups : {&best_of_split, &best_of_kind})
    for (const auto& [key, b] : *groups)
      for (size_t i : b)
        if (!top.contains(i)) pools.insert(i);
  const auto pooled = rank_gemm_space(g, {}, model, 10, nullptr, 2);
  REQUIRE(pooled.size() == 10 + pools.size());
  for (size_t i = 0; i < pooled.size(); ++i) {
    CAPTURE(i);
    if (i < 10) {
      CHECK(pooled[i].params.str() == ranked[i].params.str());
      continue;
    }
    if (i > 10) CHECK(pooled[i].predicted_tflops <= pooled[i - 1].predicted_tflops * (1 + 1e-6));
    CHECK(std::ranges::any_of(pools, [&](size_t j) {
      return all[j].kg == pooled[i].params.kg && all[j].tc == pooled[i].params.tc &&
             pooled[i].predicted_tflops == doctest::Approx(std::exp(whole[j])).epsilon(1e-4);
    }));
  }
}

TEST_CASE("the CONV search ranks with the first member, then the ensemble over that member's best") {
  const ir::Conv v = ir::dense_conv(ir::DType::f32, 4, 16, 20, 20, 32, 3, 3, 1, 1, 1, ir::ImageLayout::chwn,
                                    ir::FilterLayout::crsk);
  const auto all = lower::conv_space(v);
  const auto x = conv_features(v, all);
  const Model model = ensemble_model(members_on(x, int(conv_feature_names().size()), {16}, 3), conv_feature_names(), "conv");
  const auto first = first_member(model.mlp, 3).predict(x.data(), all.size());
  const auto whole = model.mlp.predict(x.data(), all.size());
  const auto order = expected_order(first, whole, size_t(ensemble_pool));
  const auto ranked = rank_conv_space(v, {}, {}, model, 10);
  REQUIRE(ranked.size() == 10);
  for (size_t i = 0; i < ranked.size(); ++i) {
    CHECK(ranked[i].params == all[order[i]]);
    CHECK(ranked[i].predicted_tflops == doctest::Approx(std::exp(whole[order[i]])).epsilon(1e-4));  // float search
  }
}
