#include <isaac/error.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/ensemble.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/search.hpp>

#include "tune/float_net.hpp"
#include "tune/select_best.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

namespace isaac::tune {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

namespace {

void check_conv_model(const Model& model) {
  if (model.template_name != "conv")
    throw InvalidArgument(fmt::format("the CONV search needs a CONV model; this one is for the \"{}\" template",
                                      model.template_name));
  if (model.features != conv_feature_names())
    throw InvalidArgument("the model's features are not this isaac's CONV features: train it again, or carry it over with `isaac-tune extend`");
}

// The template's whole space: the direct sets, then both Winograd kernels'.
std::vector<lower::ConvParams> whole_space(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                           const lower::DeviceLimits& device) {
  std::vector<lower::ConvParams> space = lower::conv_space(problem, epilogue, device);
  for (const lower::ConvParams& p : lower::winograd_space(problem, epilogue, device)) space.push_back(p);
  for (const lower::ConvParams& p : lower::winograd_product_space(problem, epilogue, device)) space.push_back(p);
  return space;
}

}  // namespace

std::vector<RankedConv> rank_conv_space(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                        const lower::DeviceLimits& device, const Model& model, int top,
                                        SearchReport* report, int per_split) {
  check_conv_model(model);
  if (auto legal = lower::check_conv_problem(problem, device); !legal) throw InvalidArgument(legal.reason);
  if (top < 1) throw InvalidArgument(fmt::format("rank_conv_space: top={} must be at least 1", top));
  if (per_split < 0) throw InvalidArgument(fmt::format("rank_conv_space: per_split={} must be 0 or more", per_split));
  auto start = std::chrono::steady_clock::now();
  const std::vector<lower::ConvParams> space = whole_space(problem, epilogue, device);
  SearchReport local;
  local.enumerate_ms = ms_since(start);
  local.legal_sets = space.size();
  start = std::chrono::steady_clock::now();
  // An ensemble ranks the whole space with its first member, then itself over that member's best.
  const FloatNet net = float_net(model.ensemble > 1 ? first_member(model.mlp, model.ensemble) : model.mlp);
  const Eigen::Index inputs = model.mlp.inputs();
  const int hidden = int(net.first.rows());
  std::vector<float> score(space.size());
  // In chunks, so that the feature rows stay in cache and no large buffer is allocated.
  VectorF problem_bias;
  for (size_t from = 0; from < space.size(); from += 4096) {
    const size_t n = std::min<size_t>(4096, space.size() - from);
    const auto x = conv_features(problem, std::span(space).subspan(from, n), device);
    MatrixF z(hidden, Eigen::Index(n));
    if (from == 0) problem_bias = bias_with_constant_inputs(net, x.data(), conv_problem_features);
    affine_rows(x.data() + conv_problem_features, n, int(inputs), int(inputs) - conv_problem_features,
                net.first.col(conv_problem_features).data(), problem_bias.data(), hidden, z.data());
    const Eigen::RowVectorXf y = rest_of_network(net, z);
    std::copy(y.begin(), y.end(), score.begin() + std::ptrdiff_t(from));
  }
  std::vector<size_t> order(space.size());
  std::iota(order.begin(), order.end(), 0);
  auto better = [&](size_t a, size_t b) { return score[a] != score[b] ? score[a] > score[b] : a < b; };
  // The per-split pools: the first member's best sets of each CG, then of each kind of kernel (TC).
  std::vector<size_t> pooled;
  {
    std::map<int, std::vector<size_t>> by_split, by_kind;
    for (size_t i = 0; i < space.size(); ++i) by_split[space[i].cg].push_back(i), by_kind[space[i].tc].push_back(i);
    for (auto* groups : {&by_split, &by_kind})
      for (auto& [key, members] : *groups) {
        const auto n = std::ptrdiff_t(std::min<size_t>(size_t(per_split), members.size()));
        std::partial_sort(members.begin(), members.begin() + n, members.end(), better);
        for (auto it = members.begin(); it != members.begin() + n; ++it)
          if (std::ranges::find(pooled, *it) == pooled.end()) pooled.push_back(*it);
      }
  }
  const size_t kept = std::min<size_t>(size_t(model.ensemble > 1 ? std::max(top, ensemble_pool) : top), order.size());
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(kept), order.end(), better);
  order.resize(kept);
  if (model.ensemble > 1) {
    std::vector<size_t> rescored = order;
    const std::set<size_t> in_order(order.begin(), order.end());
    for (size_t i : pooled)
      if (!in_order.contains(i)) rescored.push_back(i);
    std::vector<lower::ConvParams> pool;
    for (size_t i : rescored) pool.push_back(space[i]);
    const Eigen::RowVectorXf y = float_scores(float_net(model.mlp), conv_features(problem, pool, device), inputs);
    for (size_t j = 0; j < rescored.size(); ++j) score[rescored[j]] = y[Eigen::Index(j)];
    std::sort(order.begin(), order.end(), better);
  }
  order.resize(std::min<size_t>(size_t(top), order.size()));
  // Then the pools' sets that the best `top` lack.
  const std::set<size_t> taken(order.begin(), order.end());
  std::vector<size_t> extra;
  for (size_t i : pooled)
    if (!taken.contains(i)) extra.push_back(i);
  std::sort(extra.begin(), extra.end(), better);
  order.insert(order.end(), extra.begin(), extra.end());
  std::vector<RankedConv> ranked;
  for (size_t i : order) ranked.push_back({space[i], predicted_tflops(model.mlp, score[i])});
  local.evaluate_ms = ms_since(start);
  if (report) *report = local;
  return ranked;
}

std::vector<RankedConv> rank_conv_neighbours(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                             const lower::DeviceLimits& device, const Model& model,
                                             const lower::ConvParams& center, int top) {
  check_conv_model(model);
  if (top < 1) throw InvalidArgument(fmt::format("rank_conv_neighbours: top={} must be at least 1", top));
  const Tiling from = tiling_of(center);
  std::vector<lower::ConvParams> near;
  for (const lower::ConvParams& p : whole_space(problem, epilogue, device))
    if (p != center && tiling_step(from, tiling_of(p))) near.push_back(p);
  return best_scored(model.mlp, near, conv_features(problem, near, device), top);
}

std::vector<lower::ConvParams> winograd_candidates(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                                   const lower::DeviceLimits& device) {
  // The Winograd sets that won f32 sweeps on the H100 (bench/results/conv-sweep-winners.csv and the
  // sweep before it). WG=1: for 3 x 3, one plane per group of threads (CL=16) with thread tiles of
  // 32-64; for 5 x 5, 9 planes per group of small tiles. WG=2: the batched product's GEMM tiles.
  static const char* const sets[] = {
      "PL=16,KL=32,PS=4,KS=16,U=8,CL=16,DB=0,WG=1",
      "PL=32,KL=32,PS=4,KS=16,U=8,CL=16,DB=0,WG=1",
      "PL=32,KL=32,PS=8,KS=8,U=8,CL=16,DB=0,WG=1",
      "PL=16,KL=32,PS=4,KS=8,U=16,CL=16,DB=0,WG=1",
      "PL=16,KL=32,PS=8,KS=4,U=16,CL=16,DB=0,WG=1",
      "PL=16,KL=16,PS=2,KS=4,U=8,CL=4,DB=1,WG=1",
      "PL=16,KL=32,PS=2,KS=4,U=16,CL=4,DB=0,WG=1",
      "PL=64,KL=64,PS=4,KS=8,U=16,VI=4,VF=4,LI=16,LF=16,DB=1,WG=2",
      "PL=64,KL=16,PS=4,KS=8,U=32,CL=2,VI=4,VF=4,LI=16,LF=4,DB=1,WG=2",
      "PL=64,KL=64,PS=8,KS=8,U=64,CS=2,CL=4,VI=2,VF=4,LI=32,LF=16,DB=1,WG=2",
      "PL=64,KL=64,PS=8,KS=8,U=16,VI=4,VF=4,LI=16,LF=16,DB=0,WG=2",
      "PL=64,KL=128,PS=8,KS=8,U=16,VI=4,VF=4,LI=16,LF=32,DB=1,WG=2",
      "PL=128,KL=64,PS=8,KS=8,U=16,CS=4,VI=4,VF=2,LI=32,LF=32,DB=0,WG=2",
      "PL=128,KL=32,PS=8,KS=8,U=16,CS=2,VI=4,VF=1,LI=32,LF=32,DB=1,WG=2",
      "PL=64,KL=64,PS=8,KS=8,U=32,CS=2,CL=2,VI=4,VF=4,LI=16,LF=16,DB=1,WG=2"};
  std::vector<lower::ConvParams> out;
  for (const char* text : sets)
    if (lower::ConvParams p = lower::parse_conv_params(text); lower::conv_legal(problem, p, epilogue, device))
      out.push_back(p);
  if (!out.empty()) return out;
  // None fits (other filter sizes, f64): the single-stage sets of 16 tiles with the largest thread
  // tiles, as most of those winners are.
  std::vector<lower::ConvParams> space = lower::winograd_space(problem, epilogue, device);
  std::stable_sort(space.begin(), space.end(), [](const lower::ConvParams& a, const lower::ConvParams& b) {
    auto key = [](const lower::ConvParams& p) { return std::tuple(p.db, p.pl != 16, -p.ps * p.ks); };
    return key(a) < key(b);
  });
  space.resize(std::min<std::size_t>(space.size(), 3));
  return space;
}

ConvSelection select_conv(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                          const lower::DeviceLimits& device, const Model& model, int top_k,
                          const Benchmark<lower::ConvParams>& benchmark,
                          const std::function<void(const std::vector<RankedConv>&)>& candidates) {
  const std::vector<lower::ConvParams> winograd =
      top_k > 0 ? winograd_candidates(problem, epilogue, device) : std::vector<lower::ConvParams>{};
  // The Winograd sets are announced with the first pass: they compile while it runs.
  bool winograd_announced = false;
  auto announce = [&](const std::vector<RankedConv>& ranked) {
    if (!candidates) return;
    candidates(ranked);
    if (std::exchange(winograd_announced, true)) return;
    std::vector<RankedConv> extra;
    for (const lower::ConvParams& p : winograd)
      if (std::ranges::none_of(ranked, [&](const RankedConv& r) { return r.params == p; })) extra.push_back({p, 0});
    if (!extra.empty()) candidates(extra);
  };
  return select_best<lower::ConvParams>(
      top_k, ir::to_string(problem),
      [&](int top, SearchReport* report) {
        return rank_conv_space(problem, epilogue, device, model, top, report, per_split_pool);
      },
      benchmark, announce,
      [&](const lower::ConvParams& center) {
        return rank_conv_neighbours(problem, epilogue, device, model, center, neighbour_pool);
      },
      winograd);
}

}  // namespace isaac::tune
