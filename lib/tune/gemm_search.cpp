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
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
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

// The best `capacity` offers. It keeps up to twice as many and then drops the worse half at once:
// a heap spent more time on the sets that enter it than the whole-space pass spent on its other
// bookkeeping (in enumeration order, many do before it fills with the best).
struct BestOf {
  explicit BestOf(std::size_t capacity)
      : capacity(capacity),
        floor(capacity == 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity()) {}
  std::size_t capacity;
  float floor;  // what a set must score to enter: the worst of the best `capacity` when last trimmed
  std::vector<Scored> kept;
  bool wants(float score) const { return score >= floor; }
  void offer(const Scored& s) {  // after wants()
    kept.push_back(s);
    if (kept.size() == 2 * capacity) trim();
  }
  std::vector<Scored> drain() {  // best first
    std::sort(kept.begin(), kept.end());
    if (kept.size() > capacity) kept.resize(capacity);
    return std::move(kept);
  }

 private:
  void trim() {
    std::nth_element(kept.begin(), kept.begin() + std::ptrdiff_t(capacity - 1), kept.end());
    kept.resize(capacity);
    floor = kept.back().score;
  }
};

// The best `kept` sets, and the best `per_split` of each split level (KG) and of each kind of kernel
// (TC). Once they fill, almost no set enters any of them: what it takes to enter one is tabled per
// kind and level, so that an offer is one comparison.
class Pools {
 public:
  Pools(size_t kept, size_t split_levels, size_t per_split)
      : best(kept),
        of_split(split_levels, BestOf(per_split)),
        of_kind{BestOf(per_split), BestOf(per_split), BestOf(per_split)},
        floor_(of_kind.size() * split_levels) {
    update_floors();
  }
  void offer(float score, std::uint64_t id, std::uint8_t level, int kind) {
    if (score >= floor_[size_t(kind) * of_split.size() + level]) [[unlikely]]
      enter(score, id, level, kind);
  }
  BestOf best;
  std::vector<BestOf> of_split;
  std::array<BestOf, 3> of_kind;

 private:
  __attribute__((noinline)) void enter(float score, std::uint64_t id, std::uint8_t level, int kind) {
    if (best.wants(score)) best.offer({score, id});
    if (of_split[level].wants(score)) of_split[level].offer({score, id});
    if (of_kind[size_t(kind)].wants(score)) of_kind[size_t(kind)].offer({score, id});
    update_floors();
  }
  void update_floors() {
    for (size_t kind = 0; kind < of_kind.size(); ++kind)
      for (size_t level = 0; level < of_split.size(); ++level)
        floor_[kind * of_split.size() + level] = std::min({best.floor, of_kind[kind].floor, of_split[level].floor});
  }
  std::vector<float> floor_;  // by kind, then split level
};

Eigen::Index feature_column(std::string_view name) {
  const auto& names = gemm_feature_names();
  return Eigen::Index(std::find(names.begin(), names.end(), name) - names.begin());
}

// The wave fill and the SM balance (tune/occupancy.hpp) couple a base set with its split, through the
// blocks KG multiplies: what the split adds to the first layer is measured with them at zero, and the
// search adds each split's own. (Blocks per SM are the base set's: occupancy.hpp.)
std::vector<double> without_split_occupancy(std::vector<double> rows, Eigen::Index inputs) {
  const auto fill = std::size_t(feature_column("wave_fill")), balance = std::size_t(feature_column("sm_balance"));
  for (std::size_t r = 0; r < rows.size(); r += std::size_t(inputs)) rows[r + fill] = 0, rows[r + balance] = 0;
  return rows;
}

}  // namespace

std::vector<Ranked> rank_gemm_space(const ir::Gemm& problem, const lower::DeviceLimits& device, const Model& model,
                                    int top, SearchReport* report, int per_split) {
  check_gemm_model(model);
  if (auto legal = lower::check_gemm_problem(problem, device); !legal) throw InvalidArgument(legal.reason);
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
  const Eigen::Index balance_column = feature_column("sm_balance");
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
    MatrixF h = first_layer(net, without_split_occupancy(gemm_features(problem, variants, device), inputs), inputs);
    const VectorF base =
        first_layer(net, without_split_occupancy(gemm_features(problem, std::vector{*it}, device), inputs), inputs).col(0);
    deltas[slot] = h.colwise() - base;
  }

  // Per U slot, the split level (an index into kg_values) of each of its splits.
  std::vector<int> kg_values;
  std::array<std::vector<std::uint8_t>, std::tuple_size_v<decltype(space.splits)>> levels;
  size_t most_splits = 0;
  for (size_t slot = 0; slot < levels.size(); ++slot) {
    for (auto [kg, sw] : space.splits[slot]) {
      auto it = std::ranges::find(kg_values, kg);
      if (it == kg_values.end()) it = kg_values.insert(it, kg);
      levels[slot].push_back(std::uint8_t(it - kg_values.begin()));
    }
    most_splits = std::max(most_splits, space.splits[slot].size());
  }
  Pools pools(size_t(kept), kg_values.size(), size_t(per_split));
  // The base sets' first layers, a chunk at a time so that they stay in cache, with the part of the
  // problem's own features folded into the bias once; and with each, the slots of a wave (SMs x its
  // blocks per SM) for the wave fill of its splits.
  constexpr size_t base_chunk = 1024;
  MatrixF bases(net.first.rows(), Eigen::Index(base_chunk));
  std::array<std::uint64_t, base_chunk> slots{};
  // Per base set: whether a deep pipeline's footprint fits it unsplit (bit 0) and split (bit 1), for
  // the wave fill of its splits that run one (gemm_wave_fill). A split stages no stores.
  std::array<std::uint8_t, base_chunk> deep_fits{};
  VectorF problem_bias;
  auto first_layers = [&](size_t from, size_t n) {
    std::vector<double> x = gemm_features(problem, std::span(space.bases).subspan(from, n), device);
    for (size_t i = 0; i < n; ++i) {
      double* row = x.data() + i * size_t(inputs);
      slots[i] = std::uint64_t(sms.count) * std::uint64_t(std::lround(std::exp2(row[resident_column])));
      row[fill_column] = 0;
      row[balance_column] = 0;
      const lower::GemmParams& base = space.bases[from + i];
      deep_fits[i] = 0;
      if (base.tma && base.db) {
        lower::GemmParams split = base;
        split.kg = 2;
        deep_fits[i] = std::uint8_t(lower::gemm_deep_pipeline_fits(problem, base, device) |
                                    lower::gemm_deep_pipeline_fits(problem, split, device) << 1);
      }
    }
    if (from == 0) problem_bias = bias_with_constant_inputs(net, x.data(), gemm_problem_features);
    affine_rows(x.data() + gemm_problem_features, n, int(inputs), int(inputs) - gemm_problem_features,
                net.first.col(gemm_problem_features).data(), problem_bias.data(), int(bases.rows()), bases.data());
  };
  const VectorF fill_weights = net.first.col(fill_column);
  const VectorF balance_weights = net.first.col(balance_column);
  // Calls visit(base index, its first layer, its U slot, its ranked splits) for every base set. SW > 1
  // is not ranked where the grid fits on the SMs at once (lower::gemm_grid_fits_at_once): where KG is
  // at most the SMs over the base set's blocks. Nor are the splits the space leaves out
  // (lower::gemm_split_in_space). Which splits are ranked, their wave fills and SM balances depend only
  // on the base set's blocks, its wave and its U slot: the space's base sets share a few hundred of
  // these, whose lists a small cache keeps, each split with all it adds to the first layer.
  struct RankedSplits {
    std::int64_t blocks = -1;
    std::uint64_t wave = 0;
    size_t slot = 0;
    std::uint8_t deep = 0;
    int count = 0;
    const std::uint8_t* splits = nullptr;  // into the U slot's splits
    const float* columns = nullptr;        // what each adds to the first layer, its rows apart
  };
  const Eigen::Index hidden = net.first.rows();
  constexpr size_t cached_lists = 256;
  std::vector<RankedSplits> cache(cached_lists);
  std::vector<std::uint8_t> cached_splits(cached_lists * most_splits);
  std::vector<float> cached_columns(cached_lists * most_splits * size_t(hidden));
  auto ranked_splits = [&](std::int64_t blocks, std::uint64_t wave, size_t slot, std::uint8_t deep,
                           int u) -> const RankedSplits& {
    const size_t at = size_t(std::uint64_t(blocks) * 0x9E3779B97F4A7C15ull ^ wave * 0xC2B2AE3D27D4EB4Full ^ slot ^
                             std::uint64_t(deep) << 20) %
                      cached_lists;
    RankedSplits& list = cache[at];
    if (list.blocks == blocks && list.wave == wave && list.slot == slot && list.deep == deep) return list;
    std::uint8_t* splits_out = cached_splits.data() + at * most_splits;
    float* columns_out = cached_columns.data() + at * most_splits * size_t(hidden);
    list = {blocks, wave, slot, deep, 0, splits_out, columns_out};
    const std::int64_t k_tiles = (problem.k + u - 1) / u;
    const auto& splits = space.splits[slot];
    const std::int64_t at_once = device.sm_count / std::max<std::int64_t>(1, blocks);
    const std::int64_t uneven_max = lower::gemm_max_uneven_split(blocks, device);
    for (size_t s = 0; s < splits.size(); ++s) {
      if (splits[s].sw > 1 && splits[s].kg <= at_once) continue;
      if (!lower::gemm_split_within(splits[s].kg, uneven_max)) continue;
      const std::uint64_t launched = std::uint64_t(blocks) * std::uint64_t(splits[s].kg);
      const bool runs_deep = (deep >> (splits[s].kg > 1 ? 1 : 0) & 1) && launched <= std::uint64_t(device.sm_count) &&
                             (k_tiles + splits[s].kg - 1) / splits[s].kg >= lower::gemm_min_deep_stages;
      const float fill = runs_deep ? float(launched) / float(sms.count)
                                   : float(launched) / float((launched + wave - 1) / wave * wave);
      const float balance = float(sm_balance(double(launched), sms));
      Eigen::Map<VectorF>(columns_out + size_t(list.count) * size_t(hidden), hidden) =
          deltas[slot].col(Eigen::Index(s)) + fill * fill_weights + balance * balance_weights;
      splits_out[list.count++] = std::uint8_t(s);
    }
    return list;
  };
  auto for_each_base = [&](auto&& visit) {
    for (size_t from = 0; from < space.bases.size(); from += base_chunk) {
      const size_t n = std::min(base_chunk, space.bases.size() - from);
      first_layers(from, n);
      for (size_t b = from; b < from + n; ++b) {
        const size_t slot = size_t(&space.splits_of(space.bases[b]) - space.splits.data());
        visit(b, bases.col(Eigen::Index(b - from)).data(), slot,
              ranked_splits(lower::gemm_grid_blocks(problem, space.bases[b]), slots[b - from], slot, deep_fits[b - from],
                            space.bases[b].u));
      }
    }
  };
  if (net.weights.size() == 1) {
    // One hidden layer: each score is one fused pass over the hidden units, nothing materialised.
    const Eigen::VectorXf out = net.weights[0].row(0).transpose();
    const float out_bias = net.biases[0][0];
    std::vector<float> scores(most_splits);
    for_each_base([&](size_t b, const float* base, size_t slot, const RankedSplits& list) {
      split_scores(base, list.columns, int(hidden), list.count, out.data(), out_bias, scores.data());
      for (int i = 0; i < list.count; ++i)
        pools.offer(scores[size_t(i)], std::uint64_t(b) << 8 | list.splits[i], levels[slot][list.splits[i]],
                    space.bases[b].tc);
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
        pools.offer(out[j], ids[size_t(j)], split_levels[size_t(j)], space.bases[ids[size_t(j)] >> 8].tc);
      filled = 0;
    };
    for_each_base([&](size_t b, const float* base, size_t slot, const RankedSplits& list) {
      for (int i = 0; i < list.count; ++i) {
        z.col(filled) = Eigen::Map<const VectorF>(base, hidden) +
                        Eigen::Map<const VectorF>(list.columns + size_t(i) * size_t(hidden), hidden);
        ids[size_t(filled)] = std::uint64_t(b) << 8 | list.splits[i];
        split_levels[size_t(filled++)] = levels[slot][list.splits[i]];
        if (filled == chunk) flush();
      }
    });
    flush();
  }

  // The overall best, then the per-split pools' sets that are not among them.
  std::vector<Scored> scored = pools.best.drain();
  const std::size_t overall = scored.size();
  std::vector<bool> pooled(overall, false);  // in a per-split pool
  {
    std::map<std::uint64_t, std::size_t> position;
    for (std::size_t i = 0; i < overall; ++i) position[scored[i].id] = i;
    std::vector<BestOf*> others;
    for (BestOf& pool : pools.of_split) others.push_back(&pool);
    for (BestOf& pool : pools.of_kind) others.push_back(&pool);
    for (BestOf* pool : others)
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
      if (!lower::gemm_split_within(kg, uneven_max)) continue;
      lower::GemmParams p = base;
      p.kg = kg, p.sw = sw;
      if (!tiling_step(from, tiling_of(p))) continue;
      lower::fit_gemm_pipeline_depth(problem, p, device);
      // SW alone is no step: in the H200's candidate timings (docs/tuning-history.md, round 34) the sets
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
