#include "sampling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <map>
#include <random>

namespace isaac::bench {

std::int64_t output_tiles(const ir::Gemm& g, const lower::GemmParams& p) {
  return ((g.m + p.ml - 1) / p.ml) * ((g.n + p.nl - 1) / p.nl);
}

std::string Sample::summary() const {
  std::map<int, int> kg;
  int acc16 = 0, tc = 0;
  for (const auto& p : params) {
    ++kg[p.kg];
    acc16 += p.acc32 == 0;
    tc += p.tc;
  }
  std::string kgs;
  for (auto [k, n] : kg) kgs += fmt::format("{}KG={}:{}", kgs.empty() ? "" : " ", k, n);
  return fmt::format("space {} ({:.1f} s), sensible {}, sample {}{} [{}]{}", space, space_seconds, sensible,
                     params.size(), few_tiles ? " (few tiles: KG>1 favoured)" : "", kgs,
                     acc16 ? fmt::format(", ACC=16: {}", acc16) : "") + (tc ? fmt::format(", TC=1: {}", tc) : "");
}

namespace {

// `want` sets of `pool`: anchors first, then the KG groups interleaved to their shares (see sampling.hpp).
std::vector<lower::GemmParams> draw_part(const ir::Gemm& g, const std::vector<lower::GemmParams>& pool,
                                         const SampleOptions& o, std::size_t want, std::mt19937_64& rng, int elem,
                                         bool few_tiles) {
  // Anchors first: the classic register-blocked shapes (64 or 128 square-ish block tiles, 8x4 or 8x8
  // thread tiles, U=8 (U=32 on tensor cores), 16-byte loads, double buffering, no K split), which large
  // problems want; timed first, they also let the pruning of slow candidates start early.
  auto anchor = [&](const lower::GemmParams& p) {
    return p.kg == 1 && p.kl == 1 && p.ks == 1 && p.u == (p.tc ? 32 : 8) && p.db == 1 && (p.ml == 64 || p.ml == 128) &&
           (p.nl == 64 || p.nl == 128) && p.ms * p.ns >= 32 && p.va * elem == 16 && p.vb * elem == 16;
  };
  std::vector<lower::GemmParams> anchors;
  for (const auto& p : pool)
    if (anchor(p)) anchors.push_back(p);
  std::shuffle(anchors.begin(), anchors.end(), rng);
  anchors.resize(std::min({anchors.size(), static_cast<std::size_t>(std::max(o.anchors, 0)), want}));
  auto is_anchor = [&](const lower::GemmParams& p) {
    return std::find(anchors.begin(), anchors.end(), p) != anchors.end();
  };
  std::vector<lower::GemmParams> out = anchors;

  // The groups, each shuffled with the seed.
  std::array<std::vector<lower::GemmParams>, 3> groups;
  for (const auto& p : pool) {
    if (is_anchor(p)) continue;
    std::int64_t blocks = output_tiles(g, p) * p.kg;
    int group = p.kg == 1 ? 0 : (double(blocks) >= 0.4 * o.sm_count && blocks <= 4 * o.sm_count ? 1 : 2);
    groups[group].push_back(p);
  }
  // Each group shuffled, then half of it (where it has them) from sets with large thread tiles
  // (MS x NS >= 16: the register blocking that large problems need), alternating with the others.
  for (auto& group : groups) {
    std::shuffle(group.begin(), group.end(), rng);
    std::vector<lower::GemmParams> rich, rest, merged;
    for (const auto& p : group) (p.ms * p.ns >= 16 ? rich : rest).push_back(p);
    for (std::size_t i = 0; i < std::max(rich.size(), rest.size()); ++i) {
      if (i < rich.size()) merged.push_back(rich[i]);
      if (i < rest.size()) merged.push_back(rest[i]);
    }
    group = std::move(merged);
  }
  std::array<double, 3> share =
      few_tiles ? std::array<double, 3>{0.4, 0.5, 0.1} : std::array<double, 3>{0.8, 0.15, 0.05};

  // Interleave: each next set comes from the group furthest below its share (among those not exhausted).
  std::array<std::size_t, 3> taken{0, 0, 0};
  want = std::min(want, pool.size());
  const std::size_t first = out.size();
  while (out.size() < want) {
    int pick = -1;
    double best = -1e300;
    double total_share = 0;
    for (int i = 0; i < 3; ++i)
      if (taken[i] < groups[i].size()) total_share += share[i];
    for (int i = 0; i < 3; ++i) {
      if (taken[i] >= groups[i].size()) continue;
      double target = total_share > 0 ? share[i] / total_share : 1.0;
      double deficit = target * double(out.size() - first + 1) - double(taken[i]);
      if (deficit > best) {
        best = deficit;
        pick = i;
      }
    }
    if (pick < 0) break;
    out.push_back(groups[pick][taken[pick]++]);
  }
  return out;
}

}  // namespace

Sample draw_sample(const ir::Gemm& g, const lower::DeviceLimits& limits, const SampleOptions& o,
                   const std::set<std::string>& exclude) {
  Sample s;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<lower::GemmParams> space = lower::gemm_space(g, limits);
  s.space_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.space = space.size();

  auto excluded = [&](const lower::GemmParams& p) {
    return (o.only_tc >= 0 && p.tc != o.only_tc) || (!exclude.empty() && exclude.count(p.str()) > 0);
  };
  auto swizzle_matters = [&](const lower::GemmParams& p) {
    return (g.m + p.ml - 1) / p.ml > 1 && (g.n + p.nl - 1) / p.nl > 1;
  };
  // Tiles no larger than the problem rounded up to a power of two (a 256-wide tile for N = 16 computes
  // mostly padding).
  auto cap = [](std::int64_t extent) {
    return std::max<std::int64_t>(16, std::bit_ceil(static_cast<std::uint64_t>(extent)));
  };
  std::int64_t ml_cap = cap(g.m), nl_cap = cap(g.n);
  auto sensible = [&](const lower::GemmParams& p) {
    int threads = p.threads();
    return threads >= o.min_threads && threads <= o.max_threads && p.ms * p.ns >= o.min_thread_tile && p.ml <= ml_cap &&
           p.nl <= nl_cap;
  };
  std::vector<lower::GemmParams> pool;
  for (const auto& p : space)
    if ((p.sw == 1 || swizzle_matters(p)) && sensible(p) && !excluded(p)) pool.push_back(p);
  s.sensible = pool.size();
  if (pool.empty())  // nothing sensible: fall back to the whole space
    for (const auto& p : space)
      if ((p.sw == 1 || swizzle_matters(p)) && !excluded(p)) pool.push_back(p);

  s.few_tiles = double(g.m) * double(g.n) / (64.0 * 64.0) < 2.0 * o.sm_count;
  std::mt19937_64 rng(o.seed);
  int elem = static_cast<int>(ir::size_of(g.dtype));
  std::vector<lower::GemmParams> simt, tc;
  for (const auto& p : pool) (p.tc ? tc : simt).push_back(p);
  // f16 on tensor cores: a share of the sample (tc_fraction) from the TC=1 sets, drawn the same way.
  std::size_t want = std::min<std::size_t>(static_cast<std::size_t>(std::max(o.count, 0)), pool.size());
  std::size_t want_tc = std::min(tc.size(), static_cast<std::size_t>(o.tc_fraction * double(want) + 0.5));
  if (simt.size() < want - want_tc) want_tc = std::min(tc.size(), want - simt.size());
  std::vector<lower::GemmParams> from_simt = draw_part(g, simt, o, want - want_tc, rng, elem, s.few_tiles);
  std::vector<lower::GemmParams> from_tc = draw_part(g, tc, o, want_tc, rng, elem, s.few_tiles);
  // Interleaved, so that a sweep stopped early has tried both kinds.
  for (std::size_t i = 0; i < std::max(from_simt.size(), from_tc.size()); ++i) {
    if (i < from_tc.size()) s.params.push_back(from_tc[i]);
    if (i < from_simt.size()) s.params.push_back(from_simt[i]);
  }
  // The anchors of both parts lie in the first 2 x anchors places: they keep f32 accumulation.
  const std::size_t anchors = std::min(s.params.size(), static_cast<std::size_t>(2 * std::max(o.anchors, 0)));

  // f16: switch a share of the sets, spread along the order, to f16 accumulation where that is legal.
  if (g.dtype == ir::DType::f16 && o.acc16_fraction > 0) {
    std::size_t switched = 0;
    for (std::size_t i = anchors; i < s.params.size(); ++i) {
      if (double(switched) + 0.5 > o.acc16_fraction * double(i + 1)) continue;
      lower::GemmParams q = s.params[i];
      q.acc32 = 0;
      if (lower::check_gemm(g, q, limits) && !excluded(q)) {
        s.params[i] = q;
        ++switched;
      }
    }
  }
  return s;
}

}  // namespace isaac::bench
