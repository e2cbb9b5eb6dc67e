#include <isaac/error.hpp>
#include <isaac/tune/anneal.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace isaac::tune {

AnnealResult anneal(std::size_t candidates, std::size_t start,
                    const std::function<std::vector<double>(const std::vector<std::size_t>&)>& measure,
                    const AnnealOptions& o) {
  if (candidates == 0) throw InvalidArgument("simulated annealing needs at least one candidate");
  if (start >= candidates)
    throw InvalidArgument(fmt::format("annealing start {} is outside the list of {} candidates", start, candidates));
  if (o.budget < 1 || o.batch < 1)
    throw InvalidArgument(fmt::format("annealing budget={} and batch={} must be at least 1", o.budget, o.batch));
  if (!(o.t_start > 0) || !(o.t_end > 0) || o.t_end > o.t_start)
    throw InvalidArgument(fmt::format("annealing temperatures must satisfy 0 < t_end ({}) <= t_start ({})", o.t_end,
                                      o.t_start));
  constexpr double failed = std::numeric_limits<double>::infinity();
  std::mt19937_64 rng(o.seed);
  std::map<std::size_t, double> times;
  AnnealResult result;
  auto time_all = [&](const std::vector<std::size_t>& positions) {
    const std::vector<double> ms = measure(positions);
    if (ms.size() != positions.size())
      throw Error(fmt::format("annealing asked for {} times and got {}", positions.size(), ms.size()));
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const double t = std::isfinite(ms[i]) && ms[i] > 0 ? ms[i] : failed;
      times[positions[i]] = t;
      result.order.push_back(positions[i]);
      ++result.timed;
      result.failed += t == failed;
    }
  };

  std::size_t now = start;
  time_all({start});
  const double max_radius = std::max(1.0, double(candidates) / 4);
  while (result.timed < o.budget && times.size() < candidates) {
    const double progress = double(result.timed) / o.budget;
    const double temperature = o.t_start * std::pow(o.t_end / o.t_start, progress);
    const auto radius = std::int64_t(std::max(1.0, std::round(max_radius * (1 - progress))));
    // Untimed positions within the radius, drawn without repetition; widen the radius when all are timed.
    std::vector<std::size_t> proposals;
    for (std::int64_t r = radius; proposals.empty(); r *= 2) {
      const std::int64_t low = std::max<std::int64_t>(0, std::int64_t(now) - r);
      const std::int64_t high = std::min<std::int64_t>(std::int64_t(candidates) - 1, std::int64_t(now) + r);
      std::vector<std::size_t> open;
      for (std::int64_t i = low; i <= high; ++i)
        if (!times.contains(std::size_t(i))) open.push_back(std::size_t(i));
      std::shuffle(open.begin(), open.end(), rng);
      const auto wanted = std::size_t(std::min(o.batch, o.budget - result.timed));
      proposals.assign(open.begin(), open.begin() + std::min(wanted, open.size()));
      if (low == 0 && high == std::int64_t(candidates) - 1) break;  // the whole list is within reach
    }
    if (proposals.empty()) break;
    time_all(proposals);
    ++result.steps;
    std::uniform_real_distribution<double> uniform(0, 1);
    for (std::size_t p : proposals) {
      const double t_new = times[p], t_now = times[now];
      if (t_new == failed) continue;
      if (t_now == failed || t_new <= t_now || uniform(rng) < std::exp(-std::log(t_new / t_now) / temperature))
        now = p;
    }
  }
  auto best = std::min_element(times.begin(), times.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  if (best->second == failed)
    throw Error(fmt::format("simulated annealing: none of the {} candidates timed could run", result.timed));
  result.best = best->first;
  result.best_ms = best->second;
  return result;
}

}  // namespace isaac::tune
