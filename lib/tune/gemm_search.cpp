#include <isaac/error.hpp>
#include <isaac/tune/ensemble.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/search.hpp>

#include "tune/float_net.hpp"
#include "tune/select_best.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <queue>
#include <span>

namespace isaac::tune {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void check_gemm_model(const Model& model) {
  if (model.template_name != "gemm")
    throw InvalidArgument(fmt::format("the GEMM search needs a GEMM model; this one is for the \"{}\" template",
                                      model.template_name));
  if (model.features != gemm_feature_names())
    throw InvalidArgument("the model's features are not this isaac's GEMM features: retrain it with this version");
  if (model.mlp.layers().empty()) throw InvalidArgument("the model has no layers");
}

struct Scored {
  float score;
  std::uint64_t id;  // base index << 8 | split index: ties go to the earlier set
  bool operator<(const Scored& o) const { return score != o.score ? score > o.score : id < o.id; }
};

}  // namespace

std::vector<Ranked> rank_gemm_space(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model,
                                    int top, SearchReport* report) {
  check_gemm_model(model);
  if (top < 1) throw InvalidArgument(fmt::format("rank_gemm_space: top={} must be at least 1", top));
  auto start = std::chrono::steady_clock::now();
  const lower::GemmSpace space = lower::gemm_space_levels(problem, device);
  SearchReport local;
  local.enumerate_ms = ms_since(start);
  local.legal_sets = space.size();
  start = std::chrono::steady_clock::now();

  // An ensemble ranks the whole space with its first member, then itself over that member's best.
  const FloatNet net = float_net(model.ensemble > 1 ? first_member(model.mlp, model.ensemble) : model.mlp);
  const int kept = model.ensemble > 1 ? std::max(top, ensemble_pool) : top;
  const Eigen::Index inputs = model.mlp.inputs();
  // In chunks, so that the feature rows stay in cache and no large buffer is allocated.
  MatrixF bases(net.first.rows(), Eigen::Index(space.bases.size()));
  for (size_t from = 0; from < space.bases.size(); from += 2048) {
    const size_t n = std::min<size_t>(2048, space.bases.size() - from);
    const std::vector<double> x = gemm_features(problem, std::span(space.bases).subspan(from, n));
    affine_rows(x.data(), n, int(inputs), net.first.data(), net.first_bias.data(), int(bases.rows()),
                bases.col(Eigen::Index(from)).data());
  }
  // Per U: what KG and SW add to the first layer, measured on one base set with that U.
  std::array<MatrixF, std::tuple_size_v<decltype(space.splits)>> deltas;
  for (size_t slot = 0; slot < deltas.size(); ++slot) {
    const auto& splits = space.splits[slot];
    if (splits.empty()) continue;
    auto it = std::find_if(space.bases.begin(), space.bases.end(), [&](const lower::GemmParams& b) {
      return &space.splits_of(b) == &splits;
    });
    std::vector<lower::GemmParams> variants;
    for (auto [kg, sw] : splits) {
      lower::GemmParams v = *it;
      v.kg = kg, v.sw = sw;
      variants.push_back(v);
    }
    MatrixF h = first_layer(net, gemm_features(problem, variants), inputs);
    const VectorF base = first_layer(net, gemm_features(problem, std::vector{*it}), inputs).col(0);
    deltas[slot] = h.colwise() - base;
  }

  std::priority_queue<Scored> best;  // the worst of the best on top
  auto offer = [&](float score, std::uint64_t id) {
    const Scored s{score, id};
    if (int(best.size()) < kept) best.push(s);
    else if (s < best.top()) {
      best.pop();
      best.push(s);
    }
  };
  if (net.weights.size() == 1) {
    // One hidden layer: each score is one fused pass over the hidden units, nothing materialised.
    const Eigen::VectorXf out = net.weights[0].row(0).transpose();
    const float out_bias = net.biases[0][0];
    for (size_t b = 0; b < space.bases.size(); ++b) {
      const auto& splits = space.splits_of(space.bases[b]);
      const MatrixF& delta = deltas[&splits - space.splits.data()];
      const float* base = bases.col(Eigen::Index(b)).data();
      for (size_t s = 0; s < splits.size(); ++s) {
        const float score =
            hidden_score(base, delta.col(Eigen::Index(s)).data(), out.data(), int(out.size()), out_bias);
        if (int(best.size()) < kept || score >= best.top().score) offer(score, std::uint64_t(b) << 8 | s);
      }
    }
  } else {
    constexpr Eigen::Index chunk = 4096;
    MatrixF z(bases.rows(), chunk);
    std::vector<std::uint64_t> ids(chunk);
    Eigen::Index filled = 0;
    auto flush = [&] {
      if (filled == 0) return;
      MatrixF part = z.leftCols(filled);
      const Eigen::RowVectorXf out = rest_of_network(net, part);
      for (Eigen::Index j = 0; j < filled; ++j) offer(out[j], ids[j]);
      filled = 0;
    };
    for (size_t b = 0; b < space.bases.size(); ++b) {
      const auto& splits = space.splits_of(space.bases[b]);
      const MatrixF& delta = deltas[&splits - space.splits.data()];
      for (size_t s = 0; s < splits.size(); ++s) {
        z.col(filled) = bases.col(Eigen::Index(b)) + delta.col(Eigen::Index(s));
        ids[filled++] = std::uint64_t(b) << 8 | s;
        if (filled == chunk) flush();
      }
    }
    flush();
  }

  std::vector<Scored> scored;
  while (!best.empty()) {
    scored.push_back(best.top());
    best.pop();
  }
  std::reverse(scored.begin(), scored.end());
  std::vector<lower::GemmParams> sets;
  for (const Scored& s : scored) {
    lower::GemmParams p = space.bases[s.id >> 8];
    const auto split = space.splits_of(p)[s.id & 0xff];
    p.kg = split.kg, p.sw = split.sw;
    lower::fit_gemm_pipeline_depth(problem, p, device);
    sets.push_back(p);
  }
  std::vector<Ranked> ranked;
  if (model.ensemble > 1 && !sets.empty()) {
    const FloatNet whole = float_net(model.mlp);
    const Eigen::RowVectorXf out = float_scores(whole, gemm_features(problem, sets), inputs);
    std::vector<size_t> order(sets.size());
    std::iota(order.begin(), order.end(), size_t(0));
    // Ties go to the first member's order.
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return out[Eigen::Index(a)] > out[Eigen::Index(b)]; });
    order.resize(std::min(order.size(), size_t(top)));
    for (size_t i : order) ranked.push_back({sets[i], predicted_tflops(model.mlp, out[Eigen::Index(i)])});
  } else {
    for (size_t i = 0; i < sets.size(); ++i) ranked.push_back({sets[i], predicted_tflops(model.mlp, scored[i].score)});
  }
  local.evaluate_ms = ms_since(start);
  if (report) *report = local;
  return ranked;
}

Selection select_gemm(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model, int top_k,
                      const GemmBenchmark& benchmark,
                      const std::function<void(const std::vector<Ranked>&)>& candidates) {
  return select_best<lower::GemmParams>(
      top_k, ir::to_string(problem),
      [&](int top, SearchReport* report) { return rank_gemm_space(problem, device, model, top, report); }, benchmark,
      candidates);
}

}  // namespace isaac::tune
