// The model search (issue 6, "Search"): the two-level space is exactly the legal space, the fast
// legality verdict agrees with the explained one, and the search's scores and ranking are the
// model's own predictions over the whole space.
#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/tune/mlp.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/occupancy.hpp>
#include <isaac/tune/model_file.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/load_siblings.hpp>
#include <isaac/tune/split_siblings.hpp>
#include <isaac/tune/spread.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <tuple>

using namespace isaac;
using namespace isaac::tune;

namespace {

// A model with random weights and a normalisation fitted on some 500 of the legal sets: its ranking
// is arbitrary but fixed, which is all the search needs to be checked against predict().
template <class Params, class FeaturesOf>
Model random_model_over(std::vector<std::string> names, const std::vector<Params>& space, FeaturesOf features_of,
                        const std::vector<int>& hidden, std::uint64_t seed) {
  Model model;
  model.features = std::move(names);
  model.mlp = Mlp(int(model.features.size()), hidden, seed);
  std::vector<Params> some;
  for (size_t i = 0; i < space.size(); i += space.size() / 500 + 1) some.push_back(space[i]);
  Samples s;
  s.features = int(model.features.size());
  s.x = features_of(some);
  s.y.assign(some.size(), 1.0);
  model.mlp.fit_normalisation(s);
  model.mlp.target_mean = 1.5, model.mlp.target_scale = 0.7;
  return model;
}

Model random_model(const ir::Gemm& problem, const std::vector<int>& hidden, std::uint64_t seed) {
  return random_model_over(gemm_feature_names(), lower::gemm_space(problem),
                           [&](const auto& some) { return gemm_features(problem, some); }, hidden, seed);
}

Model random_conv_model(const ir::Conv& problem, const std::vector<int>& hidden, std::uint64_t seed) {
  Model model = random_model_over(conv_feature_names(), lower::conv_space(problem),
                                  [&](const auto& some) { return conv_features(problem, some); }, hidden, seed);
  model.template_name = "conv";
  return model;
}

// What the per-split and per-kind pools add to the best `top` of a ranking (positions into the space,
// best first): each split's and each kind's best `per_split` positions that the top lacks, in the
// ranking's order.
template <class SplitOf, class KindOf>
std::vector<size_t> expected_extras(const std::vector<size_t>& order, size_t top, int per_split, SplitOf split_of,
                                    KindOf kind_of) {
  std::map<int, int> seen_split, seen_kind;
  std::vector<size_t> extras;
  for (size_t j = 0; j < order.size(); ++j) {
    const bool best_of_split = seen_split[split_of(order[j])]++ < per_split;
    const bool best_of_kind = seen_kind[kind_of(order[j])]++ < per_split;
    if ((best_of_split || best_of_kind) && j >= top) extras.push_back(order[j]);
  }
  return extras;
}

}  // namespace

TEST_CASE("the two-level space holds exactly the legal sets of the full enumeration") {
  for (const ir::Gemm& g : {ir::dense_gemm(ir::DType::f32, 300, 17, 61, true, false),
                            ir::dense_gemm(ir::DType::f64, 1024, 1024, 8, false, true)}) {
    CAPTURE(ir::to_string(g));
    const lower::GemmSpace space = lower::gemm_space_levels(g);
    REQUIRE(!space.bases.empty());
    std::size_t checked = 0;
    for (size_t i = 0; i < space.bases.size(); i += 7) {
      lower::GemmParams p = space.bases[i];
      CHECK(lower::check_gemm(g, p).legal);
      const auto& splits = space.splits_of(p);
      for (int kg : {1, 2, 4, 8, 16, 32, 64, 128, 256})
        for (int sw : {1, 8}) {
          p.kg = kg, p.sw = sw;
          const bool listed = std::any_of(splits.begin(), splits.end(),
                                          [&](auto s) { return s.kg == kg && s.sw == sw; });
          CHECK(listed == lower::check_gemm(g, p).legal);
          ++checked;
        }
    }
    CHECK(checked > 1000);
    CHECK(lower::gemm_space(g).size() == space.size());
  }
}

TEST_CASE("gemm_legal agrees with check_gemm, legal or not") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f16, 97, 130, 33, false, false);
  std::mt19937_64 rng(5);
  auto pick = [&](std::initializer_list<int> values) { return *(values.begin() + rng() % values.size()); };
  int legal = 0;
  for (int i = 0; i < 20000; ++i) {
    lower::GemmParams p;
    p.ml = pick({8, 16, 32, 64, 128, 256}), p.nl = pick({16, 32, 64, 128, 256});
    p.ms = pick({1, 2, 3, 4, 8, 16}), p.ns = pick({1, 2, 4, 8, 16});
    p.u = pick({4, 8, 16, 32}), p.ks = pick({1, 2}), p.kl = pick({1, 2, 4}), p.kg = pick({1, 2, 8, 64});
    p.va = pick({1, 2, 4, 8}), p.vb = pick({1, 2, 4, 8}), p.la = pick({1, 2, 4, 8, 16, 32}),
    p.lb = pick({1, 2, 4, 8, 16, 32}), p.db = pick({0, 1}), p.acc32 = pick({0, 1});
    const lower::Legality explained = lower::check_gemm(g, p);
    REQUIRE(explained.legal == lower::gemm_legal(g, p));
    if (explained.legal) ++legal;
    else CHECK(!explained.reason.empty());
  }
  CHECK(legal > 0);
}

TEST_CASE("the search ranks the whole space by the model's own predictions") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f64, 200, 96, 700, false, true);
  // 13 and 70 hidden units: the scoring loops' widths (64 and 8 units at a time) with units left over.
  for (const std::vector<int>& hidden :
       {std::vector<int>{32}, std::vector<int>{13}, std::vector<int>{70}, std::vector<int>{16, 8}}) {
    const Model model = random_model(g, hidden, 11);
    // What the search ranks: the legal space less SW > 1 where the grid fits on the SMs at once.
    auto all = lower::gemm_space(g);
    std::erase_if(all, [&](const lower::GemmParams& p) { return p.sw > 1 && lower::gemm_grid_fits_at_once(g, p); });
    const auto predicted = model.mlp.predict(gemm_features(g, all).data(), all.size());
    std::vector<size_t> order(all.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return predicted[a] > predicted[b]; });

    SearchReport report;
    const auto ranked = rank_gemm_space(g, {}, model, 20, &report);
    CAPTURE(tune::hidden_to_string(hidden));
    REQUIRE(ranked.size() == 20);
    CHECK(report.legal_sets == lower::gemm_space(g).size());
    CHECK(all.size() < report.legal_sets);  // the problem has grids that fit at once
    for (size_t i = 0; i < ranked.size(); ++i) {
      // Each score is the model's prediction for that set (float against double)...
      const double own = std::exp(model.mlp.predict(gemm_features(g, ranked[i].params).data(), 1)[0]);
      CHECK(ranked[i].predicted_tflops == doctest::Approx(own).epsilon(1e-4));
      if (i) CHECK(ranked[i].predicted_tflops <= ranked[i - 1].predicted_tflops);
      // ...and the i-th best of the whole space, up to float rounding.
      CHECK(ranked[i].predicted_tflops == doctest::Approx(std::exp(predicted[order[i]])).epsilon(1e-4));
    }
    MESSAGE(fmt::format("hidden {}: {} legal sets, enumerated in {:.1f} ms, evaluated in {:.1f} ms",
                        tune::hidden_to_string(hidden), report.legal_sets, report.enumerate_ms, report.evaluate_ms));

    // With per-split pools: the same 20, then the best 3 of each KG and of each TC that they lack, best
    // first.
    const auto pooled = rank_gemm_space(g, {}, model, 20, nullptr, 3);
    const auto extra =
        expected_extras(order, 20, 3, [&](size_t i) { return all[i].kg; }, [&](size_t i) { return all[i].tc; });
    REQUIRE(pooled.size() == 20 + extra.size());
    CHECK(extra.size() > 3);
    for (size_t i = 0; i < pooled.size(); ++i) {
      const size_t want = i < 20 ? order[i] : extra[i - 20];
      CAPTURE(i);
      CHECK(pooled[i].params.kg == all[want].kg);
      CHECK(pooled[i].params.tc == all[want].tc);
      CHECK(pooled[i].predicted_tflops == doctest::Approx(std::exp(predicted[want])).epsilon(1e-4));
    }
  }
}

TEST_CASE("the search adds each split's wave fill and SM balance to its base set's blocks per SM") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f16, 384, 256, 2048, false, false);
  auto all = lower::gemm_space(g);
  std::erase_if(all, [&](const lower::GemmParams& p) { return p.sw > 1 && lower::gemm_grid_fits_at_once(g, p); });
  const auto& names = gemm_feature_names();
  const auto fill_at = size_t(std::ranges::find(names, "wave_fill") - names.begin());
  const auto balance_at = size_t(std::ranges::find(names, "sm_balance") - names.begin());
  std::set<double> fills, balances;
  for (size_t i = 0; i < all.size(); i += 97) {
    const auto x = gemm_features(g, all[i]);
    fills.insert(x[fill_at]);
    balances.insert(x[balance_at]);
  }
  CHECK(fills.size() > 10);
  CHECK(balances.size() > 10);
  const Model model = random_model(g, {32}, 12);
  const auto predicted = model.mlp.predict(gemm_features(g, all).data(), all.size());
  std::vector<double> best(predicted.begin(), predicted.end());
  std::ranges::sort(best, std::greater<>());
  const auto ranked = rank_gemm_space(g, {}, model, 50);
  REQUIRE(ranked.size() == 50);
  for (size_t i = 0; i < ranked.size(); ++i) {
    CAPTURE(i);
    const double own = std::exp(model.mlp.predict(gemm_features(g, ranked[i].params).data(), 1)[0]);
    CHECK(ranked[i].predicted_tflops == doctest::Approx(own).epsilon(1e-4));
    CHECK(ranked[i].predicted_tflops == doctest::Approx(std::exp(best[i])).epsilon(1e-4));
  }
}

TEST_CASE("a split that runs a deep TMA pipeline fills one block per SM, in the features and in the search") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f16, 384, 256, 2048, false, false);
  auto all = lower::gemm_space(g);
  std::erase_if(all, [&](const lower::GemmParams& p) { return p.sw > 1 && lower::gemm_grid_fits_at_once(g, p); });
  const auto& names = gemm_feature_names();
  const auto fill_at = size_t(std::ranges::find(names, "wave_fill") - names.begin());
  const auto resident_at = size_t(std::ranges::find(names, "log2_resident_blocks") - names.begin());
  // 64 x 64 tiles: 24 blocks, three per SM in the standard pipeline; split 5 ways, 120 blocks that
  // each read 7 K tiles through a deep pipeline, one per SM.
  lower::GemmParams deep = lower::parse_gemm_params(
      "ML=64,NL=64,MS=8,NS=4,U=64,KS=1,KL=1,KG=5,VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1");
  lower::fit_gemm_pipeline_depth(g, deep);
  REQUIRE(deep.st >= lower::gemm_min_deep_stages);
  CHECK(lower::gemm_runs_deep_pipeline(g, deep));
  const auto x = gemm_features(g, deep);
  CHECK(x[resident_at] > 1);  // the base set's count, more than one block per SM
  CHECK(x[fill_at] == doctest::Approx(120.0 / 132));
  lower::GemmParams standard = deep;
  standard.kg = 8;  // 192 blocks do not fit at once: the standard pipeline
  lower::fit_gemm_pipeline_depth(g, standard);
  CHECK_FALSE(lower::gemm_runs_deep_pipeline(g, standard));
  CHECK(gemm_features(g, standard)[fill_at] == doctest::Approx(wave_fill(192, int(std::exp2(x[resident_at])), {})));

  // A model that ranks TMA sets first, then by the wave fill, best at 120 / 132 (a tent of two units:
  // x - 1/2 up to the peak, then down twice as fast): the search's per-split fills must be the features'.
  Model model = random_model(g, {8}, 13);
  const auto tma_at = size_t(std::ranges::find(names, "tma") - names.begin());
  model.mlp.feature_mean[fill_at] = 0, model.mlp.feature_scale[fill_at] = 1;
  model.mlp.feature_mean[tma_at] = 0, model.mlp.feature_scale[tma_at] = 1;
  auto& first = model.mlp.layers()[0];
  std::ranges::fill(first.weights, 0.0);
  std::ranges::fill(first.bias, 0.0);
  first.weights[fill_at] = 1, first.bias[0] = -0.5;
  first.weights[size_t(first.inputs) + fill_at] = 1, first.bias[1] = -120.0 / 132;
  first.weights[2 * size_t(first.inputs) + tma_at] = 1;
  auto& out = model.mlp.layers()[1];
  std::ranges::fill(out.weights, 0.0);
  out.weights[0] = 1, out.weights[1] = -2, out.weights[2] = 10;
  const auto predicted = model.mlp.predict(gemm_features(g, all).data(), all.size());
  std::vector<double> best(predicted.begin(), predicted.end());
  std::ranges::sort(best, std::greater<>());
  const auto ranked = rank_gemm_space(g, {}, model, 200);
  REQUIRE(ranked.size() == 200);
  int deep_ranked = 0;
  for (size_t i = 0; i < ranked.size(); ++i) {
    CAPTURE(i);
    CHECK(ranked[i].predicted_tflops == doctest::Approx(std::exp(best[i])).epsilon(1e-4));
    deep_ranked += lower::gemm_runs_deep_pipeline(g, ranked[i].params);
  }
  CHECK(deep_ranked > 0);
}

TEST_CASE("the CONV search ranks the whole space by the model's own predictions") {
  // f16 has the direct kernels only; a 3 x 3 f32 convolution of stride 1 adds the Winograd ones.
  const ir::Conv direct_only = ir::dense_conv(ir::DType::f16, 3, 24, 17, 13, 40, 3, 3, 1, 1, 1,
                                              ir::ImageLayout::nhwc, ir::FilterLayout::krsc);
  const ir::Conv with_winograd = ir::dense_conv(ir::DType::f32, 2, 19, 15, 11, 37, 3, 3, 1, 1, 1,
                                                ir::ImageLayout::nchw, ir::FilterLayout::kcrs);
  for (const ir::Conv& v : {direct_only, with_winograd}) {
    auto all = lower::conv_space(v);
    auto winograd = lower::winograd_space(v);
    CHECK(winograd.empty() == (v.dtype == ir::DType::f16));
    const auto product = lower::winograd_product_space(v);
    CHECK(product.empty() == (v.dtype == ir::DType::f16));
    winograd.insert(winograd.end(), product.begin(), product.end());
    all.insert(all.end(), winograd.begin(), winograd.end());
    const auto x = conv_features(v, all);
    for (const std::vector<int>& hidden : {std::vector<int>{32}, std::vector<int>{16, 8}}) {
      Model model;
      model.template_name = "conv";
      model.features = conv_feature_names();
      model.mlp = Mlp(int(model.features.size()), hidden, 5);
      Samples s;
      s.features = int(model.features.size());
      for (size_t i = 0; i < all.size(); i += all.size() / 500 + 1) {
        s.x.insert(s.x.end(), x.begin() + std::ptrdiff_t(i * size_t(s.features)),
                   x.begin() + std::ptrdiff_t((i + 1) * size_t(s.features)));
        s.y.push_back(1.0);
      }
      model.mlp.fit_normalisation(s);
      model.mlp.target_mean = 1.5, model.mlp.target_scale = 0.7;
      const auto predicted = model.mlp.predict(x.data(), all.size());
      std::vector<size_t> order(all.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return predicted[a] > predicted[b]; });

      SearchReport report;
      const auto ranked = rank_conv_space(v, {}, {}, model, 20, &report);
      CAPTURE(tune::hidden_to_string(hidden));
      REQUIRE(ranked.size() == 20);
      CHECK(report.legal_sets == all.size());
      for (size_t i = 0; i < ranked.size(); ++i) {
        // The model's prediction for that set, and the i-th best of the whole space (float against double).
        const double own = std::exp(model.mlp.predict(conv_features(v, ranked[i].params).data(), 1)[0]);
        CHECK(ranked[i].predicted_tflops == doctest::Approx(own).epsilon(1e-4));
        CHECK(ranked[i].predicted_tflops == doctest::Approx(std::exp(predicted[order[i]])).epsilon(1e-4));
        if (i) CHECK(ranked[i].predicted_tflops <= ranked[i - 1].predicted_tflops);
      }
      const auto pooled = rank_conv_space(v, {}, {}, model, 20, nullptr, 3);
      const auto extra =
          expected_extras(order, 20, 3, [&](size_t i) { return all[i].cg; }, [&](size_t i) { return all[i].tc; });
      REQUIRE(pooled.size() == 20 + extra.size());
      CHECK(!extra.empty());
      for (size_t i = 20; i < pooled.size(); ++i) {
        CAPTURE(i);
        CHECK(pooled[i].params.cg == all[extra[i - 20]].cg);
        CHECK(pooled[i].predicted_tflops == doctest::Approx(std::exp(predicted[extra[i - 20]])).epsilon(1e-4));
      }
      // The neighbours of a set the model ranks 11th or below, the first with more than 15 of them (so
      // that the search keeps its best 15): its best sets one step away, none of another kind.
      lower::ConvParams center;
      std::vector<double> near_predicted;
      for (size_t r = 10; r < ranked.size() && near_predicted.size() <= 15; ++r) {
        center = ranked[r].params;
        near_predicted.clear();
        for (size_t i = 0; i < all.size(); ++i)
          if (all[i] != center && tiling_step(tiling_of(center), tiling_of(all[i])))
            near_predicted.push_back(predicted[i]);
      }
      std::sort(near_predicted.begin(), near_predicted.end(), std::greater<>());
      REQUIRE(near_predicted.size() > 15);
      const auto near = rank_conv_neighbours(v, {}, {}, model, center, 15);
      REQUIRE(near.size() == 15);
      for (size_t i = 0; i < near.size(); ++i) {
        CAPTURE(i);
        CHECK(near[i].params != center);
        CHECK(near[i].params.wg == center.wg);
        CHECK(tiling_step(tiling_of(center), tiling_of(near[i].params)));
        CHECK(near[i].predicted_tflops == doctest::Approx(std::exp(near_predicted[i])).epsilon(1e-4));
      }
      MESSAGE(fmt::format("CONV {}, hidden {}: {} legal sets ({} Winograd), enumerated in {:.1f} ms, evaluated in "
                          "{:.1f} ms",
                          ir::name(v.dtype), tune::hidden_to_string(hidden), report.legal_sets, winograd.size(),
                          report.enumerate_ms, report.evaluate_ms));
    }
  }
}

TEST_CASE("the search refuses a model made for something else") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 64, 64, 64, false, false);
  Model model = random_model(g, {8}, 1);
  model.template_name = "conv";
  CHECK_THROWS_WITH_AS(rank_gemm_space(g, {}, model, 5), doctest::Contains("\"conv\" template"), InvalidArgument);
  model.template_name = "gemm";
  model.features.back() = "something_else";
  CHECK_THROWS_WITH_AS(rank_gemm_space(g, {}, model, 5), doctest::Contains("isaac-tune extend"), InvalidArgument);
  model.features = gemm_feature_names();
  CHECK_THROWS_AS(rank_gemm_space(g, {}, model, 0), InvalidArgument);
}

TEST_CASE("spread_over_tilings takes each tiling's best first, then the best sets left, in order") {
  const Tiling a{64, 64, 4, 4, 8, 1, 0}, b{128, 64, 8, 4, 8, 1, 0}, c{64, 64, 4, 4, 16, 1, 0};
  const std::vector<Tiling> ranked = {a, a, b, a, c, b};
  CHECK(spread_over_tilings(ranked, 3) == std::vector<std::size_t>{0, 2, 4});
  CHECK(spread_over_tilings(ranked, 5) == std::vector<std::size_t>{0, 2, 4, 1, 3});
  CHECK(spread_over_tilings(ranked, 9).size() == ranked.size());
  CHECK(spread_over_tilings({}, 4).empty());
  lower::GemmParams p, q;
  q.va = 2, q.la = 8, q.sw = 8, q.db = 0;  // loads and order only: the same tiling
  CHECK(tiling_of(p) == tiling_of(q));
  q.kg = 4;
  CHECK(tiling_of(p) != tiling_of(q));
}

TEST_CASE("grid_split_siblings: legal sets that differ only in KG, KG = 1 first, then the nearest splits") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 1024, 1024, 1024, false, true);
  const lower::GemmParams best = lower::parse_gemm_params(
      "ML=128,NL=64,MS=8,NS=8,U=16,KS=1,KL=1,KG=8,VA=4,VB=4,LA=32,LB=16,DB=1,SW=8,ACC=32,TC=0");
  REQUIRE(lower::check_gemm(g, best));
  auto kgs = [](const std::vector<lower::GemmParams>& sets) {
    std::vector<int> out;
    for (const auto& p : sets) out.push_back(p.kg);
    return out;
  };
  const auto siblings = grid_split_siblings(g, best, {}, 5);
  // 128 blocks unsplit: KG = 10 and 12 would pass 8 blocks per SM, which the space holds for powers
  // of two alone (lower::gemm_split_in_space).
  CHECK(kgs(siblings) == std::vector<int>{1, 6, 5, 4, 16});
  for (lower::GemmParams p : siblings) {
    CHECK(lower::check_gemm(g, p));
    p.kg = best.kg;
    CHECK(p.str() == best.str());
  }
  CHECK(grid_split_siblings(g, best, {}, 0).empty());
  // K = 64 in tiles of U = 16 splits at most 4 ways: larger KG are illegal and skipped.
  const ir::Gemm short_k = ir::dense_gemm(ir::DType::f32, 1024, 1024, 64, false, true);
  lower::GemmParams one = best;
  one.kg = 1;
  CHECK(kgs(grid_split_siblings(short_k, one, {}, 5)) == std::vector<int>{2, 3, 4});
}

TEST_CASE("load_width_siblings: legal sets that differ only in VA and VB (with LA, LB), the nearest widths first") {
  // f64 DeepBench-F 2560x64: the model's first choice and, among its siblings, the brute force's
  // winner's widths (VA=1, VB=2; docs/tuning-history.md, round 36).
  const ir::Gemm g = ir::dense_gemm(ir::DType::f64, 2560, 64, 2560, false, false);
  const lower::GemmParams best = lower::parse_gemm_params(
      "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=10,VA=2,VB=1,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1");
  REQUIRE(lower::check_gemm(g, best));
  // 8-byte elements load at most two at a time: three other width pairs.
  const auto siblings = load_width_siblings(g, best, {}, 4);
  REQUIRE(siblings.size() == 3);
  std::vector<std::pair<int, int>> widths;
  for (lower::GemmParams p : siblings) {
    CHECK(lower::check_gemm(g, p));
    widths.emplace_back(p.va, p.vb);
    CHECK(p.la * p.va == best.la * best.va);  // the same 64 elements along M, in narrower or wider copies
    CHECK(p.lb * p.vb == best.lb * best.vb);
    p.va = best.va, p.vb = best.vb, p.la = best.la, p.lb = best.lb;
    CHECK(p.str() == best.str());
  }
  // One step of a factor of two first (narrower first on a tie), then two.
  CHECK(widths == std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {1, 2}});
  CHECK(load_width_siblings(g, best, {}, 1).size() == 1);
  CHECK(load_width_siblings(g, best, {}, 0).empty());
  // A TMA set's threads copy nothing: no siblings.
  const ir::Gemm h = ir::dense_gemm(ir::DType::f16, 1024, 1024, 1024, false, true);
  const lower::GemmParams tma = lower::parse_gemm_params(
      "ML=128,NL=128,MS=8,NS=8,U=64,KS=1,KL=1,KG=1,VA=8,VB=8,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=6");
  CHECK(load_width_siblings(h, tma, {}, 4).empty());
}

TEST_CASE("load_width_siblings for CONV: sets of conv_space that differ only in VI and VF (with LI, LF)") {
  // f16 Conv3 (CHWN): the model's first choice loads the input eight halves at a time; the brute
  // force's winner of the same tile shape loads four (docs/tuning-history.md, round 62).
  const ir::Conv v = ir::dense_conv(ir::DType::f16, 16, 16, 26, 242, 32, 3, 3, 1, 0, 1, ir::ImageLayout::chwn,
                                    ir::FilterLayout::crsk);
  const lower::ConvParams best =
      lower::parse_conv_params("PL=128,KL=32,PS=8,KS=4,U=32,CS=1,CL=1,CG=1,VI=8,VF=4,LI=16,LF=8,DB=1,TC=1");
  REQUIRE_FALSE(lower::outside_conv_space(v, best));
  const auto siblings = load_width_siblings(v, best, {}, 16);
  REQUIRE(siblings.size() >= 3);
  std::vector<std::pair<int, int>> widths;
  for (lower::ConvParams p : siblings) {
    CHECK_FALSE(lower::outside_conv_space(v, p));
    widths.emplace_back(p.vi, p.vf);
    CHECK(p.li * p.vi == best.li * best.vi);  // the same 128 pixels along N, in narrower copies
    p.vi = best.vi, p.vf = best.vf, p.li = best.li, p.lf = best.lf;
    CHECK(p.str() == best.str());
  }
  // One step of a factor of two first, the narrower first on a tie: the winner's widths lead.
  CHECK(widths.front() == std::pair{4, 4});
  CHECK(widths[1] == std::pair{8, 2});
  CHECK(std::ranges::find(widths, std::pair{8, 4}) == widths.end());
  CHECK(load_width_siblings(v, best, {}, 2).size() == 2);
  CHECK(load_width_siblings(v, best, {}, 0).empty());
  // A TMA set's copies are whole tiles: no siblings.
  const ir::Conv nhwc = ir::dense_conv(ir::DType::f16, 8, 128, 58, 58, 256, 3, 3, 1, 0, 1, ir::ImageLayout::nhwc,
                                       ir::FilterLayout::krsc);
  const lower::ConvParams tma =
      lower::parse_conv_params("PL=128,KL=256,PS=8,KS=16,U=64,CS=1,CL=1,CG=1,VI=8,VF=8,LI=8,LF=8,DB=1,TC=2");
  REQUIRE(lower::conv_tma(nhwc, tma));
  CHECK(load_width_siblings(nhwc, tma, {}, 4).empty());
}

TEST_CASE("candidate_sets hedges the last candidates against splitting the reduction, only where the first splits") {
  // Twelve tilings split 8 ways (distinct thread tiles), then one each split 4, 2 and 1 ways.
  std::vector<Ranked> pool;
  auto add = [&](int ms, int kg) {
    lower::GemmParams p;
    p.ms = ms, p.kg = kg;
    pool.push_back({p, 0});
  };
  for (int ms = 1; ms <= 12; ++ms) add(ms, 8);
  add(20, 4), add(21, 2), add(22, 1);
  auto kgs = [](const std::vector<Ranked>& c) {
    std::vector<int> v;
    for (const Ranked& r : c) v.push_back(r.params.kg);
    return v;
  };
  const auto hedged = candidate_sets(pool, 10, 12);
  // A first choice split 2 ways: every hedge is a set that does not split.
  {
    std::vector<Ranked> twos;
    for (int ms = 1; ms <= 12; ++ms) {
      lower::GemmParams p;
      p.ms = ms, p.kg = ms <= 10 ? 2 : 1;
      twos.push_back({p, 0});
    }
    lower::GemmParams third;
    third.ms = 13, third.kg = 1;
    twos.push_back({third, 0});
    CHECK(kgs(candidate_sets(twos, 10, 10)) == std::vector<int>{2, 2, 2, 2, 2, 2, 2, 1, 1, 1});
  }
  CHECK(kgs(hedged) == std::vector<int>{8, 8, 8, 8, 8, 8, 8, 4, 2, 1, 8, 8});
  CHECK(hedged[6].params.ms == 7);
  CHECK(hedged[10].params.ms == 8);  // the spares continue the spread order
  // Two of the ten left to neighbours: the hedges stay, two spread tilings go to the spares.
  CHECK(kgs(candidate_sets(pool, 10, 12, 2)) == std::vector<int>{8, 8, 8, 8, 8, 4, 2, 1, 8, 8, 8, 8});
  // A first choice that does not split is not hedged: the spread order as it is.
  std::rotate(pool.begin(), pool.end() - 1, pool.end());
  const auto plain = candidate_sets(pool, 10, 12);
  CHECK(plain.front().params.kg == 1);
  for (std::size_t i = 1; i < plain.size(); ++i) CHECK(plain[i].params.ms == int(i));
  // Two candidates leave no room for a hedge: 8, 8 first although 4 and 2 follow.
  CHECK(kgs(candidate_sets(std::vector<Ranked>(pool.end() - 4, pool.end()), 2, 4)) == std::vector<int>{8, 8, 4, 2});
}

TEST_CASE("candidate_sets times the best set of a kind of kernel the spread lacks, if the model rates it close") {
  // Twelve mma.sync tilings (TC=1) predicted 10.0, 9.9, ..., then a wgmma set (TC=2) at `wgmma`
  // TFLOP/s and an FMA set (TC=0) at 8.4.
  auto pool_with = [](double wgmma, int kg) {
    std::vector<Ranked> pool;
    for (int ms = 1; ms <= 12; ++ms) {
      lower::GemmParams p;
      p.ms = ms, p.kg = kg, p.tc = 1;
      pool.push_back({p, 10.0 - 0.1 * (ms - 1)});
    }
    lower::GemmParams w, f;
    w.ms = 20, w.tc = 2, w.kg = kg;
    f.ms = 21, f.tc = 0, f.kg = kg;
    pool.push_back({w, wgmma});
    pool.push_back({f, 8.4});
    return pool;
  };
  auto tcs = [](const std::vector<Ranked>& c) {
    std::string s;
    for (const Ranked& r : c) s += char('0' + r.params.tc);
    return s;
  };
  // kind_hedge_share of the first's 10 TFLOP/s is 8.5: the wgmma set at 8.6 takes the last of the
  // eight plain places.
  CHECK(kind_hedge_share == 0.85);
  CHECK(tcs(candidate_sets(pool_with(8.6, 1), 10, 12, 2)) == "111111121111");
  CHECK(candidate_sets(pool_with(8.6, 1), 10, 12, 2)[7].params.ms == 20);
  // Rated below that, or already among the plain places: the spread as it is.
  CHECK(tcs(candidate_sets(pool_with(8.4, 1), 10, 12, 2)) == "111111111111");
  auto early = pool_with(8.6, 1);
  std::rotate(early.begin() + 3, early.end() - 2, early.end() - 1);  // the wgmma set fourth
  CHECK(tcs(candidate_sets(early, 10, 12, 2)) == "111211111111");
  // Where the first splits K, the kind hedge comes before the three split hedges; none of which
  // exist here, so the spares follow.
  const auto split = candidate_sets(pool_with(9.0, 8), 10, 12, 2);
  CHECK(tcs(split) == "111121111111");
  // The last plain place already holds a kind the places before lack: it stays, as the kind hedge.
  auto fma_eighth = pool_with(8.6, 1);
  fma_eighth.back().predicted_tflops = 8.9;
  std::rotate(fma_eighth.begin() + 7, fma_eighth.end() - 1, fma_eighth.end());  // the FMA set eighth
  CHECK(tcs(candidate_sets(fma_eighth, 10, 12, 2)) == "111111101111");
  // One candidate leaves no place for it.
  CHECK(tcs(candidate_sets(pool_with(9.9, 1), 1, 1)) == "1");
}

TEST_CASE("best_of_other_kinds: the model's best sets of each kind of kernel but its first choice's") {
  std::vector<Ranked> ranked;
  auto add = [&](int tc, int ms, double predicted) {
    lower::GemmParams p;
    p.tc = tc, p.ms = ms;
    ranked.push_back({p, predicted});
  };
  add(2, 1, 5.0), add(1, 2, 9.0), add(0, 3, 4.0), add(2, 4, 7.0), add(2, 5, 8.0), add(0, 6, 6.0), add(1, 7, 9.5);
  ranked.push_back(ranked[4]);  // another variant of the TC=2 tiling rated 8: not a second tiling
  ranked.back().params.sw = 8, ranked.back().predicted_tflops = 7.5;
  auto of = [](const std::vector<Ranked>& r) {
    std::vector<std::pair<int, int>> v;
    for (const Ranked& x : r) v.push_back({x.params.tc, x.params.ms});
    return v;
  };
  // The first choice is TC=1 (9.5): the two best tilings of TC=2 and of TC=0, fastest first.
  CHECK(of(best_of_other_kinds(ranked, 2)) == std::vector<std::pair<int, int>>{{2, 5}, {2, 4}, {0, 6}, {0, 3}});
  CHECK(of(best_of_other_kinds(ranked, 1)) == std::vector<std::pair<int, int>>{{2, 5}, {0, 6}});
  CHECK(best_of_other_kinds(ranked, 0).empty());
  CHECK(best_of_other_kinds(std::vector<Ranked>{}, 3).empty());
}

TEST_CASE("tiling_step: the same tiling, or one group changed by at most a factor of two") {
  //                  ML  NL  MS NS  U  KG TC
  const Tiling from{64, 32, 4, 2, 32, 8, 0, 0, 0};
  auto with = [&](std::initializer_list<std::pair<int, int>> changes) {
    Tiling t = from;
    for (auto [i, v] : changes) t[std::size_t(i)] = v;
    return tiling_step(from, t);
  };
  CHECK(with({}) == Step::variant);
  CHECK(with({{0, 32}, {2, 2}}) == Step::rows);  // block and thread rows halved together
  CHECK(with({{2, 8}}) == Step::rows);
  CHECK(with({{1, 16}, {3, 1}}) == Step::columns);
  CHECK(with({{4, 64}}) == Step::depth);
  CHECK(with({{5, 6}}) == Step::split);  // 8 -> 6: the uneven splits are steps too
  CHECK(with({{5, 10}}) == Step::split);
  CHECK(with({{4, 64}, {5, 4}}) == std::nullopt);  // two groups
  CHECK(with({{0, 16}}) == std::nullopt);          // a factor of four
  CHECK(with({{5, 32}}) == std::nullopt);
  CHECK(with({{6, 1}}) == std::nullopt);  // the tensor cores: another kernel
  CHECK(with({{7, 1}}) == std::nullopt);  // Winograd
}

TEST_CASE("pick_neighbours takes the best, then the best of each kind of step, then the rest") {
  const lower::GemmParams center = [] {
    lower::GemmParams p;
    p.ml = 64, p.nl = 32, p.ms = 4, p.ns = 2, p.u = 32, p.kg = 8;
    return p;
  }();
  std::vector<Ranked> ranked;
  auto add = [&](auto change) {
    lower::GemmParams p = center;
    change(p);
    ranked.push_back({p, 0});
  };
  add([](lower::GemmParams& p) { p.va = 2; });                  // 0 variant
  add([](lower::GemmParams& p) { p.vb = 2; });                  // 1 variant
  add([](lower::GemmParams& p) { p.u = 64; });                  // 2 depth
  add([](lower::GemmParams& p) { p.u = 16; });                  // 3 depth
  add([](lower::GemmParams& p) { p.u = 64, p.kg = 4; });       // 4 not a neighbour
  add([](lower::GemmParams& p) { p.kg = 6; });                  // 5 split
  const auto picked = pick_neighbours(tiling_of(center), ranked, 5);
  REQUIRE(picked.size() == 5);
  CHECK(picked[0].params == ranked[0].params);
  CHECK(picked[1].params == ranked[2].params);
  CHECK(picked[2].params == ranked[5].params);
  CHECK(picked[3].params == ranked[1].params);
  CHECK(picked[4].params == ranked[3].params);
  CHECK(pick_neighbours(tiling_of(center), ranked, 2).size() == 2);
}

TEST_CASE("rank_gemm_neighbours: the model's best neighbours of a set over the whole space") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f64, 200, 96, 700, false, true);
  const Model model = random_model(g, {32}, 11);
  auto all = lower::gemm_space(g);
  std::erase_if(all, [&](const lower::GemmParams& p) { return p.sw > 1 && lower::gemm_grid_fits_at_once(g, p); });
  const lower::GemmParams center = rank_gemm_space(g, {}, model, 40).back().params;
  std::vector<lower::GemmParams> near;
  for (lower::GemmParams p : all) {
    lower::fit_gemm_pipeline_depth(g, p);
    lower::GemmParams same_order = p;
    same_order.sw = center.sw;
    if (same_order != center && tiling_step(tiling_of(center), tiling_of(p))) near.push_back(p);
  }
  REQUIRE(near.size() > 50);
  auto predicted = model.mlp.predict(gemm_features(g, near).data(), near.size());
  std::sort(predicted.begin(), predicted.end(), std::greater<>());
  const auto ranked = rank_gemm_neighbours(g, {}, model, center, 30);
  REQUIRE(ranked.size() == 30);
  for (size_t i = 0; i < ranked.size(); ++i) {
    CAPTURE(i);
    CHECK(tiling_step(tiling_of(center), tiling_of(ranked[i].params)));
    lower::GemmParams same_order = ranked[i].params;
    same_order.sw = center.sw;
    CHECK(same_order != center);
    CHECK(ranked[i].predicted_tflops == doctest::Approx(std::exp(predicted[i])).epsilon(1e-4));
  }
  CHECK(rank_gemm_neighbours(g, {}, model, center, int(near.size()) + 10).size() == near.size());
}

TEST_CASE("select_gemm re-benchmarks the top k spread over tilings, then neighbours of the fastest, and skips "
          "candidates that fail") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 512, 512, 512, false, false);
  const Model model = random_model(g, {16}, 3);
  std::vector<Ranked> candidates, near;
  auto bench = [&](const lower::GemmParams& p) {
    REQUIRE(candidates.size() > 3);
    if (p == candidates[1].params) throw Error("launch failed");
    return p == candidates[3].params ? 1.0 : 2.0;
  };
  int calls = 0;
  auto counted = [&](const lower::GemmParams& p) { return ++calls, bench(p); };
  auto record = [&](const std::vector<Ranked>& c) { (candidates.empty() ? candidates : near) = c; };
  // The "GPU" prefers the 4th candidate and cannot run the 2nd. Of 5, the last is a neighbour.
  const Selection s = select_gemm(g, {}, model, 5, counted, record);
  REQUIRE(candidates.size() == 4);  // the first pass is announced, not its spares
  REQUIRE(near.size() == 1);        // then the neighbour
  const auto best = rank_gemm_space(g, {}, model, 1);
  CHECK(candidates[0].params == best[0].params);
  std::set<Tiling> tilings;
  for (const Ranked& r : candidates) tilings.insert(tiling_of(r.params));
  CHECK(tilings.size() == candidates.size());
  for (const Ranked& r : near) {
    CHECK(tiling_step(tiling_of(candidates[3].params), tiling_of(r.params)));
    CHECK(std::ranges::none_of(candidates, [&](const Ranked& c) { return c.params == r.params; }));
  }
  CHECK(s.params == candidates[3].params);
  CHECK(s.rank == 3);
  CHECK(s.benchmarked == 5);
  CHECK(calls == 7);  // 5 in the first pass (a spare for the failure), the neighbour, the fastest again
  REQUIRE(s.timed.size() == 5);
  CHECK(s.timed[1].rank == 2);
  CHECK(s.timed[3].rank == 4);  // the spare, after the failure
  CHECK(s.timed[4].params == near[0].params);
  CHECK(s.timed[4].rank == 13);
  REQUIRE(s.failures.size() == 1);
  CHECK(s.failures[0].find("launch failed") != std::string::npos);
  // A faster neighbour is chosen.
  candidates.clear(), near.clear();
  auto neighbour_wins = [&](const lower::GemmParams& p) {
    return !near.empty() && p == near[0].params ? 0.5 : bench(p);
  };
  const Selection refined = select_gemm(g, {}, model, 5, neighbour_wins, record);
  CHECK(refined.params == near[0].params);
  CHECK(refined.rank == 13);
  CHECK(refined.predicted_tflops == doctest::Approx(near[0].predicted_tflops));
  const Selection trusted = select_gemm(g, {}, model, 0, counted);
  CHECK(trusted.params == best[0].params);
  CHECK(trusted.measured_ms < 0);
  CHECK_THROWS_WITH_AS(select_gemm(g, {}, model, 3, [](const lower::GemmParams&) -> double { throw Error("no"); }),
                       doctest::Contains("could run"), Error);
}

TEST_CASE("select_gemm gives one neighbour place to the fastest set of another kind of kernel, where one was timed") {
  // f16 on sm_80: FMA and mma.sync sets. The random models whose first pass holds both kinds (the
  // kind hedge) time one neighbour of the fastest and one of the fastest of the other kind.
  const ir::Gemm g = ir::dense_gemm(ir::DType::f16, 512, 512, 512, false, false);
  lower::DeviceLimits sm80;
  sm80.sm = 80;
  int mixed = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const Model model = random_model(g, {16}, seed);
    std::vector<std::vector<Ranked>> announced;
    std::optional<lower::GemmParams> other_fastest;
    // The first candidate is the fastest; the first of the other kind comes second.
    auto bench = [&](const lower::GemmParams& p) {
      const std::vector<Ranked>& first = announced.front();
      if (p == first.front().params) return 1.0;
      if (p.tc != first.front().params.tc && (!other_fastest || p == *other_fastest)) {
        other_fastest = p;
        return 1.5;
      }
      return 2.0;
    };
    const Selection s =
        select_gemm(g, sm80, model, 10, bench, [&](const std::vector<Ranked>& c) { announced.push_back(c); });
    CAPTURE(seed);
    REQUIRE(announced.size() >= 2);
    const std::set<int> kinds = [&] {
      std::set<int> k;
      for (const Ranked& r : announced[0]) k.insert(r.params.tc);
      return k;
    }();
    CHECK(s.benchmarked == 10);
    if (kinds.size() == 1) {
      REQUIRE(announced.size() == 2);
      CHECK(announced[1].size() == 2);
      continue;
    }
    ++mixed;
    REQUIRE(announced.size() == 3);
    REQUIRE(announced[1].size() == 1);
    REQUIRE(announced[2].size() == 1);
    REQUIRE(other_fastest);
    CHECK(tiling_step(tiling_of(announced[0].front().params), tiling_of(announced[1][0].params)));
    CHECK(tiling_step(tiling_of(*other_fastest), tiling_of(announced[2][0].params)));
    CHECK(announced[2][0].params.tc == other_fastest->tc);
    CHECK(s.timed.back().params == announced[2][0].params);
  }
  CHECK(mixed > 0);
}

TEST_CASE("select_gemm takes no neighbours where the model's first choice is a wgmma set") {
  // The shipped f16 model's first choice for 4096^3 on sm_90 is a TC=2 set; the f64 model's for
  // 2560x64x2560 is not.
  lower::DeviceLimits sm90;
  sm90.sm = 90;
  CHECK_FALSE(neighbours_pay(Tiling{128, 256, 16, 8, 64, 1, 2, 0, 0}));
  CHECK(neighbours_pay(Tiling{128, 256, 16, 8, 64, 1, 1, 0, 0}));
  for (auto [dtype, m, n, k, wgmma] : {std::tuple{ir::DType::f16, 4096, 4096, 4096, true},
                                        std::tuple{ir::DType::f64, 2560, 64, 2560, false}}) {
    const ir::Gemm g = ir::dense_gemm(dtype, m, n, k, false, true);
    const auto model = find_model("gemm", dtype, "NVIDIA H100 80GB HBM3", 90);
    REQUIRE(model);
    std::vector<std::vector<Ranked>> announced;
    const Selection s = select_gemm(
        g, sm90, model->model, 10, [](const lower::GemmParams&) { return 1.0; },
        [&](const std::vector<Ranked>& c) { announced.push_back(c); });
    CAPTURE(ir::to_string(g));
    CHECK((rank_gemm_space(g, sm90, model->model, 1).front().params.tc == 2) == wgmma);
    CHECK(s.benchmarked == 10);
    REQUIRE(announced.size() == (wgmma ? 1u : 2u));
    CHECK(announced[0].size() == (wgmma ? 10u : 8u));
    if (!wgmma) CHECK(announced[1].size() == 2u);
  }
}

TEST_CASE("select_gemm times the candidates close to the fastest again and keeps their lower time") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 512, 512, 512, false, false);
  const Model model = random_model(g, {16}, 3);
  std::vector<Ranked> candidates;
  std::map<std::string, std::vector<double>> times;  // per candidate, what each timing returns in turn
  std::map<std::string, int> calls;
  auto bench = [&](const lower::GemmParams& p) {
    const int call = calls[p.str()]++;
    const std::vector<double>& t = times.at(p.str());
    if (call >= int(t.size())) FAIL("timed more often than expected: " << p.str());
    if (t[std::size_t(call)] < 0) throw Error("launch failed");
    return t[std::size_t(call)];
  };
  auto record = [&](const std::vector<Ranked>& c) {
    candidates = c;
    for (const Ranked& r : c) times[r.params.str()] = {3.0};
    // The first pass makes candidate 0 look fastest; candidate 1 (8% slower) is in fact faster;
    // candidate 2 is close but fails its second run; candidate 3 is 20% slower: not timed again.
    times[c[0].params.str()] = {1.00, 1.00};
    times[c[1].params.str()] = {1.08, 0.90};
    times[c[2].params.str()] = {1.05, -1};
    times[c[3].params.str()] = {1.20};
  };
  const Selection s = select_gemm(g, {}, model, 4, bench, record);
  CHECK(s.params == candidates[1].params);
  CHECK(s.rank == 1);
  CHECK(s.measured_ms == doctest::Approx(0.90));
  CHECK(calls[candidates[3].params.str()] == 1);
  REQUIRE(s.timed.size() == 3);  // the candidate that failed its second run is dropped
  CHECK(s.benchmarked == 3);
  REQUIRE(s.failures.size() == 1);
  CHECK(s.failures[0].find("second timing") != std::string::npos);
  CHECK(s.timed[0].ms == doctest::Approx(1.00));
  CHECK(s.timed[2].rank == 3);
}

TEST_CASE("the heuristic choice (used without a model) is legal for every shape, 1 included") {
  for (ir::DType t : {ir::DType::f16, ir::DType::f32, ir::DType::f64})
    for (int layout = 0; layout < 4; ++layout)
      for (std::int64_t m : {1, 2, 17, 1000})
        for (std::int64_t n : {1, 3, 64, 999})
          for (std::int64_t k : {1, 5, 60000}) {
            const ir::Gemm g = ir::dense_gemm(t, m, n, k, layout & 1, layout & 2);
            CAPTURE(ir::to_string(g));
            lower::GemmParams p;
            REQUIRE_NOTHROW(p = heuristic_gemm(g, {}));
            CHECK(lower::check_gemm(g, p).legal);
          }
}

// Before round 47 no GEMM model had seen a batched GEMM: it rated 64 GEMMs of 512^3 at a sixteenth
// of one (1.2 TFLOP/s against 19.5 in f32). A batch is more parallel work for the same tiles, so the
// model's best set for it must be rated at least as fast as its best set for one such GEMM.
TEST_CASE("the shipped GEMM models rate a batch of GEMMs at least as fast as one of them") {
  lower::DeviceLimits sm90;
  sm90.sm = 90;
  for (ir::DType dtype : {ir::DType::f16, ir::DType::f32, ir::DType::f64}) {
    const auto model = find_model("gemm", dtype, "NVIDIA H100 80GB HBM3", 90);
    REQUIRE(model);
    const auto best = [&](std::int64_t batch) {
      return rank_gemm_space(ir::dense_gemm(dtype, 512, 512, 512, false, false, batch), sm90, model->model, 1)
          .front()
          .predicted_tflops;
    };
    CAPTURE(ir::name(dtype));
    CHECK(best(64) >= best(1));
  }
}

TEST_CASE("select_gemm races the short kernels close to the fastest, and stops timing those clearly slower") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 512, 512, 512, false, false);
  const Model model = random_model(g, {16}, 3);
  std::vector<Ranked> candidates;
  // Per candidate: its time in the first pass, in the second timing, and in every turn of the race.
  struct Script {
    double first, second, race;
  };
  std::map<std::string, Script> scripts;
  std::map<std::string, int> calls;
  auto bench = [&](const lower::GemmParams& p) {
    const Script& s = scripts.at(p.str());
    const int call = calls[p.str()]++;
    if (call == 0) return s.first;
    if (call == 1) return s.second;
    if (s.race < 0) throw Error("launch failed");
    return s.race;
  };
  auto script = [&](std::vector<Script> first_ones) {
    return [&, first_ones](const std::vector<Ranked>& c) {  // the first pass, then the neighbours
      for (const Ranked& r : c) {
        scripts[r.params.str()] = candidates.size() < first_ones.size() ? first_ones[candidates.size()]
                                                                          : Script{0.030, 0.030, 0.030};
        candidates.push_back(r);
      }
    };
  };
  const int rounds = std::min(race_rounds, int(std::ceil(race_ms / (runs_per_timing * 0.019))));
  REQUIRE(rounds > 3);

  SUBCASE("the race reverses the first passes' order") {
    // Candidate 0 looks fastest, 1 and 2 are within race_margin; in the race 1 is fastest and 0 and 2
    // are clearly slower: both leave it after three turns. Candidate 3 (5% slower) is no finalist.
    const Selection s = select_gemm(g, {}, model, 4, bench,
                                    script({{0.0190, 0.0191, 0.0195}, {0.0193, 0.0192, 0.0185},
                                            {0.0194, 0.0195, 0.0200}, {0.0200, 0.0201, 0.0150}}));
    CHECK(s.params == candidates[1].params);
    CHECK(s.measured_ms == doctest::Approx(0.0185));
    CHECK(calls[candidates[0].params.str()] == 2 + 3);
    CHECK(calls[candidates[1].params.str()] == 2 + 3);
    CHECK(calls[candidates[2].params.str()] == 2 + 3);
    CHECK(calls[candidates[3].params.str()] == 2);
    REQUIRE(s.timed.size() == 4);
    CHECK(s.timed[0].ms == doctest::Approx(0.0195));  // the race's time replaces the first passes'
    CHECK(s.timed[3].ms == doctest::Approx(0.0200));
  }
  SUBCASE("finalists as fast as each other run every turn") {
    const Selection s = select_gemm(g, {}, model, 4, bench,
                                    script({{0.0190, 0.0190, 0.0186}, {0.0191, 0.0191, 0.0185}}));
    CHECK(s.params == candidates[1].params);
    CHECK(calls[candidates[0].params.str()] == 2 + rounds);
    CHECK(calls[candidates[1].params.str()] == 2 + rounds);
  }
  SUBCASE("at most race_finalists_max finalists, the fastest") {
    // Six candidates within race_margin, the later ones faster: the first two are left out.
    const std::size_t close_ones = race_finalists_max + 2;
    std::vector<Script> close;
    for (std::size_t i = 0; i < close_ones; ++i) {
      const double ms = 0.0190 + 0.00001 * double(close_ones - i);
      close.push_back({ms, ms, 0.0190});
    }
    select_gemm(g, {}, model, 10, bench, script(close));
    for (std::size_t i = 0; i < close_ones; ++i)
      CHECK_MESSAGE((calls[candidates[i].params.str()] > 2) == (i >= 2), i);
  }
  SUBCASE("a finalist that fails a turn is dropped, and the race goes on without it") {
    const Selection s = select_gemm(g, {}, model, 4, bench,
                                    script({{0.0190, 0.0190, -1}, {0.0191, 0.0191, 0.0189}}));
    CHECK(s.params == candidates[1].params);
    CHECK(s.measured_ms == doctest::Approx(0.0189));
    CHECK(s.timed.size() == 3);
    CHECK(s.benchmarked == 3);
    REQUIRE(s.failures.size() == 1);
    CHECK(s.failures[0].find("(race): launch failed") != std::string::npos);
  }
  SUBCASE("where every finalist fails, the fastest of the others is chosen") {
    const Selection s = select_gemm(g, {}, model, 4, bench,
                                    script({{0.0190, 0.0190, -1}, {0.0191, 0.0191, -1}, {0.0250, 0.0250, 0.0250}}));
    CHECK(s.params == candidates[2].params);
    CHECK(s.failures.size() == 2);
  }
}

TEST_CASE("select_gemm races no kernel that its first timings measured for long enough") {
  const ir::Gemm g = ir::dense_gemm(ir::DType::f32, 512, 512, 512, false, false);
  const Model model = random_model(g, {16}, 3);
  std::map<std::string, int> calls;
  const double long_enough = race_ms / runs_per_timing;
  auto bench = [&](const lower::GemmParams& p) { return ++calls[p.str()], long_enough; };
  select_gemm(g, {}, model, 4, bench);
  REQUIRE(calls.size() == 4);
  for (const auto& [params, count] : calls) CHECK_MESSAGE(count == 2, params);
}

TEST_CASE("select_conv times the Winograd hedges besides the model's candidates") {
  const ir::Conv v = ir::dense_conv(ir::DType::f32, 2, 19, 15, 11, 37, 3, 3, 1, 1, 1, ir::ImageLayout::nchw,
                                    ir::FilterLayout::kcrs);
  const lower::ConvEpilogue epilogue{};
  const std::vector<lower::ConvParams> hedges = winograd_candidates(v, epilogue, {});
  REQUIRE(!hedges.empty());
  const Model model = random_conv_model(v, {16}, 7);
  std::map<std::string, int> calls;
  // The last hedge is the fastest, by far.
  auto bench = [&](const lower::ConvParams& p) { return ++calls[p.str()], p == hedges.back() ? 0.5 : 1.0; };
  const ConvSelection c = select_conv(v, epilogue, {}, model, 4, bench);
  CHECK(c.params == hedges.back());
  CHECK(c.rank >= c.listed);
  CHECK(c.predicted_tflops == 0);
  for (const lower::ConvParams& h : hedges) CHECK(calls[h.str()] >= 1);
  CHECK(c.benchmarked == int(c.timed.size()));
  CHECK(c.timed.size() == calls.size());
}
