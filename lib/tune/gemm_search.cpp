#include <isaac/error.hpp>
#include <isaac/tune/ensemble.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/occupancy.hpp>
#include <isaac/tune/search.hpp>

#include "tune/float_net.hpp"
#include "tune/select_best.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <queue>
#include <span>
#include <string_view>

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
    throw InvalidArgument("the model's features are not this isaac's GEMM features: train it again, or carry it over with `isaac-tune extend`");
  if (model.mlp.layers().empty()) throw InvalidArgument("the model has no layers");
}

struct Scored {
  float score;
  std::uint64_t id;  // base index << 8 | split index: ties go to the earlier set
  bool operator<(const Scored& o) const { return score != o.score ? score > o.score : id < o.id; }
};

// The best `capacity` offers, the worst of them on top.
struct BestOf {
  explicit BestOf(std::size_t capacity) : capacity(capacity) {}
  std::size_t capacity;
  std::priority_queue<Scored> heap;
  bool wants(float score) const {
    return capacity > 0 && (heap.size() < capacity || score >= heap.top().score);
  }
  void offer(const Scored& s) {  // after wants()
    if (heap.size() < capacity) heap.push(s);
    else if (s < heap.top()) {
      heap.pop();
      heap.push(s);
    }
  }
  std::vector<Scored> drain() {  // best first
    std::vector<Scored> out;
    for (; !heap.empty(); heap.pop()) out.push_back(heap.top());
    std::reverse(out.begin(), out.end());
    return out;
  }
};

Eigen::Index feature_column(std::string_view name) {
  const auto& names = gemm_feature_names();
  return Eigen::Index(std::find(names.begin(), names.end(), name) - names.begin());
}

// The wave fill (tune/occupancy.hpp) couples a base set with its split, through the blocks KG
// multiplies: what the split adds to the first layer is measured with it at zero, and the search adds
// each split's own. (Blocks per SM are the base set's: occupancy.hpp.)
std::vector<double> without_wave_fill(std::vector<double> rows, Eigen::Index inputs) {
  const auto at = std::size_t(feature_column("wave_fill"));
  for (std::size_t r = 0; r < rows.size(); r += std::size_t(inputs)) rows[r + at] = 0;
  return rows;
}

}  // namespace

std::vector<Ranked> rank_gemm_space(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model,
                                    int top, SearchReport* report, int per_split) {
  check_gemm_model(model);
  if (top < 1) throw InvalidArgument(fmt::format("rank_gemm_space: top={} must be at least 1", top));
  if (per_split < 0) throw InvalidArgument(fmt::format("rank_gemm_space: per_split={} must be 0 or more", per_split));
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
  const Multiprocessors sms = multiprocessors(device);
  const Eigen::Index resident_column = feature_column("log2_resident_blocks");
  const Eigen::Index fill_column = feature_column("wave_fill");
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
    MatrixF h = first_layer(net, without_wave_fill(gemm_features(problem, variants, device), inputs), inputs);
    const VectorF base =
        first_layer(net, without_wave_fill(gemm_features(problem, std::vector{*it}, device), inputs), inputs).col(0);
    deltas[slot] = h.colwise() - base;
  }

  BestOf best(static_cast<std::size_t>(kept));
  // Per U slot, the per-split pool of each of its splits: one pool per KG value.
  std::vector<int> kg_values;
  std::array<std::vector<std::uint8_t>, std::tuple_size_v<decltype(space.splits)>> levels;
  for (size_t slot = 0; slot < levels.size(); ++slot)
    for (auto [kg, sw] : space.splits[slot]) {
      auto it = std::ranges::find(kg_values, kg);
      if (it == kg_values.end()) it = kg_values.insert(it, kg);
      levels[slot].push_back(std::uint8_t(it - kg_values.begin()));
    }
  std::vector<BestOf> best_of_split(kg_values.size(), BestOf(static_cast<std::size_t>(per_split)));
  // Per U slot, whether each split's KG is not a power of two (lower::gemm_split_in_space).
  std::array<std::vector<bool>, std::tuple_size_v<decltype(space.splits)>> uneven_splits;
  for (size_t slot = 0; slot < uneven_splits.size(); ++slot)
    for (auto [kg, sw] : space.splits[slot]) uneven_splits[slot].push_back(!std::has_single_bit(unsigned(kg)));
  // And the best of each kind of kernel (TC), for the kind hedge (spread.hpp).
  std::array<BestOf, 3> best_of_kind{BestOf(std::size_t(per_split)), BestOf(std::size_t(per_split)),
                                     BestOf(std::size_t(per_split))};
  auto offer = [&](float score, std::uint64_t id, std::uint8_t level, int kind) {
    if (best.wants(score)) best.offer({score, id});
    if (best_of_split[level].wants(score)) best_of_split[level].offer({score, id});
    if (best_of_kind[std::size_t(kind)].wants(score)) best_of_kind[std::size_t(kind)].offer({score, id});
  };
  // The base sets' first layers, a chunk at a time so that they stay in cache, with the part of the
  // problem's own features folded into the bias once; and with each, the slots of a wave (SMs x its
  // blocks per SM) for the wave fill of its splits.
  constexpr size_t base_chunk = 1024;
  MatrixF bases(net.first.rows(), Eigen::Index(base_chunk));
  std::array<std::uint64_t, base_chunk> slots{};
  VectorF problem_bias;
  auto first_layers = [&](size_t from, size_t n) {
    std::vector<double> x = gemm_features(problem, std::span(space.bases).subspan(from, n), device);
    for (size_t i = 0; i < n; ++i) {
      double* row = x.data() + i * size_t(inputs);
      slots[i] = std::uint64_t(sms.count) * std::uint64_t(std::lround(std::exp2(row[resident_column])));
      row[fill_column] = 0;
    }
    if (from == 0) problem_bias = bias_with_constant_inputs(net, x.data(), gemm_problem_features);
    affine_rows(x.data() + gemm_problem_features, n, int(inputs), int(inputs) - gemm_problem_features,
                net.first.col(gemm_problem_features).data(), problem_bias.data(), int(bases.rows()), bases.data());
  };
  const VectorF fill_weights = net.first.col(fill_column);
  // Calls visit(base's first layer, split's delta, wave fill, id, split level, kind) for every set
  // ranked. SW > 1 is not ranked where the grid fits on the SMs at once
  // (lower::gemm_grid_fits_at_once): where KG is at most the SMs over the base set's blocks. Nor are
  // the splits the space leaves out (lower::gemm_split_in_space).
  auto for_each_set = [&](auto&& visit) {
    for (size_t from = 0; from < space.bases.size(); from += base_chunk) {
      const size_t n = std::min(base_chunk, space.bases.size() - from);
      first_layers(from, n);
      for (size_t b = from; b < from + n; ++b) {
        const auto& splits = space.splits_of(space.bases[b]);
        const size_t slot = size_t(&splits - space.splits.data());
        const MatrixF& delta = deltas[slot];
        const std::int64_t blocks = lower::gemm_grid_blocks(problem, space.bases[b]);
        const std::int64_t at_once = device.sm_count / std::max<std::int64_t>(1, blocks);
        const std::int64_t uneven_max = lower::gemm_max_uneven_split(blocks, device);
        const auto& uneven = uneven_splits[slot];
        const std::uint64_t wave = slots[b - from];
        for (size_t s = 0; s < splits.size(); ++s) {
          if (splits[s].sw > 1 && splits[s].kg <= at_once) continue;
          if (uneven[s] && splits[s].kg > uneven_max) continue;
          const std::uint64_t launched = std::uint64_t(blocks) * std::uint64_t(splits[s].kg);
          const float fill = float(launched) / float((launched + wave - 1) / wave * wave);
          visit(bases.col(Eigen::Index(b - from)).data(), delta.col(Eigen::Index(s)).data(), fill,
                std::uint64_t(b) << 8 | s, levels[slot][s], space.bases[b].tc);
        }
      }
    }
  };
  if (net.weights.size() == 1) {
    // One hidden layer: each score is one fused pass over the hidden units, nothing materialised.
    const Eigen::VectorXf out = net.weights[0].row(0).transpose();
    const float out_bias = net.biases[0][0];
    for_each_set([&](const float* base, const float* delta, float fill, std::uint64_t id, std::uint8_t level,
                     int kind) {
      offer(hidden_score(base, delta, fill, fill_weights.data(), out.data(), int(out.size()), out_bias), id, level,
            kind);
    });
  } else {
    constexpr Eigen::Index chunk = 4096;
    MatrixF z(bases.rows(), chunk);
    std::vector<std::uint64_t> ids(chunk);
    std::vector<std::uint8_t> split_levels(chunk);
    Eigen::Index filled = 0;
    auto flush = [&] {
      if (filled == 0) return;
      MatrixF part = z.leftCols(filled);
      const Eigen::RowVectorXf out = rest_of_network(net, part);
      for (Eigen::Index j = 0; j < filled; ++j)
        offer(out[j], ids[size_t(j)], split_levels[size_t(j)], space.bases[ids[size_t(j)] >> 8].tc);
      filled = 0;
    };
    for_each_set([&](const float* base, const float* delta, float fill, std::uint64_t id, std::uint8_t level, int) {
      const Eigen::Index rows = bases.rows();
      z.col(filled) =
          Eigen::Map<const VectorF>(base, rows) + Eigen::Map<const VectorF>(delta, rows) + fill * fill_weights;
      ids[size_t(filled)] = id;
      split_levels[size_t(filled++)] = level;
      if (filled == chunk) flush();
    });
    flush();
  }

  // The overall best, then the per-split pools' sets that are not among them.
  std::vector<Scored> scored = best.drain();
  const std::size_t overall = scored.size();
  std::vector<bool> pooled(overall, false);  // in a per-split pool
  {
    std::map<std::uint64_t, std::size_t> position;
    for (std::size_t i = 0; i < overall; ++i) position[scored[i].id] = i;
    std::vector<BestOf*> pools;
    for (BestOf& pool : best_of_split) pools.push_back(&pool);
    for (BestOf& pool : best_of_kind) pools.push_back(&pool);
    for (BestOf* pool : pools)
      for (const Scored& s : pool->drain())
        if (auto [it, added] = position.try_emplace(s.id, scored.size()); added) {
          scored.push_back(s);
          pooled.push_back(true);
        } else {
          pooled[it->second] = true;
        }
  }
  std::vector<lower::GemmParams> sets;
  for (const Scored& s : scored) {
    lower::GemmParams p = space.bases[s.id >> 8];
    const auto split = space.splits_of(p)[s.id & 0xff];
    p.kg = split.kg, p.sw = split.sw;
    lower::fit_gemm_pipeline_depth(problem, p, device);
    sets.push_back(p);
  }
  // An ensemble scores again with all of its members; ties go to the first member's order.
  std::vector<float> score(scored.size());
  for (size_t i = 0; i < scored.size(); ++i) score[i] = scored[i].score;
  if (model.ensemble > 1 && !sets.empty()) {
    const Eigen::RowVectorXf out = float_scores(float_net(model.mlp), gemm_features(problem, sets, device), inputs);
    for (size_t i = 0; i < sets.size(); ++i) score[i] = out[Eigen::Index(i)];
  }
  auto by_score = [&](size_t a, size_t b) { return score[a] > score[b]; };
  std::vector<size_t> order(overall);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), by_score);
  order.resize(std::min(order.size(), size_t(top)));
  std::vector<bool> taken(scored.size(), false);
  for (size_t i : order) taken[i] = true;
  std::vector<size_t> extra;
  for (size_t i = 0; i < scored.size(); ++i)
    if (pooled[i] && !taken[i]) extra.push_back(i);
  std::stable_sort(extra.begin(), extra.end(), by_score);
  order.insert(order.end(), extra.begin(), extra.end());
  std::vector<Ranked> ranked;
  for (size_t i : order) ranked.push_back({sets[i], predicted_tflops(model.mlp, score[i])});
  local.evaluate_ms = ms_since(start);
  if (report) *report = local;
  return ranked;
}

std::vector<Ranked> rank_gemm_neighbours(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model,
                                         const lower::GemmParams& center, int top) {
  check_gemm_model(model);
  if (top < 1) throw InvalidArgument(fmt::format("rank_gemm_neighbours: top={} must be at least 1", top));
  const lower::GemmSpace space = lower::gemm_space_levels(problem, device);
  const Tiling from = tiling_of(center);
  std::vector<lower::GemmParams> near;
  for (const lower::GemmParams& base : space.bases) {
    Tiling t = tiling_of(base);
    t[5] = from[5];
    if (!tiling_step(from, t)) continue;  // more than a step away whatever its split
    // The splits rank_gemm_space ranks: SW > 1 only where the grid does not fit at once.
    const std::int64_t blocks = lower::gemm_grid_blocks(problem, base);
    const std::int64_t at_once = device.sm_count / std::max<std::int64_t>(1, blocks);
    const std::int64_t uneven_max = lower::gemm_max_uneven_split(blocks, device);
    for (auto [kg, sw] : space.splits_of(base)) {
      if (sw > 1 && kg <= at_once) continue;
      if ((kg & (kg - 1)) != 0 && kg > uneven_max) continue;  // not a power of two (gemm_split_in_space)
      lower::GemmParams p = base;
      p.kg = kg, p.sw = sw;
      if (!tiling_step(from, tiling_of(p))) continue;
      lower::fit_gemm_pipeline_depth(problem, p, device);
      // SW alone is no step: in the H200's candidate timings (docs/tuning.md, round 34) the sets
      // that differed from the fastest only in SW ran within noise of it.
      lower::GemmParams same_order = p;
      same_order.sw = center.sw;
      if (same_order != center) near.push_back(p);
    }
  }
  return best_scored(model.mlp, near, gemm_features(problem, near, device), top);
}

Selection select_gemm(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model, int top_k,
                      const GemmBenchmark& benchmark,
                      const std::function<void(const std::vector<Ranked>&)>& candidates) {
  return select_best<lower::GemmParams>(
      top_k, ir::to_string(problem),
      [&](int top, SearchReport* report) { return rank_gemm_space(problem, device, model, top, report, per_split_pool); },
      benchmark, candidates,
      [&](const lower::GemmParams& center) {
        return rank_gemm_neighbours(problem, device, model, center, neighbour_pool);
      });
}

}  // namespace isaac::tune
