#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tune/anneal.hpp>
#include <isaac/tune/database.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/prune.hpp>
#include <isaac/tuning.hpp>
#include <isaac/version.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace isaac {

std::string_view name(Search search) {
  switch (search) {
    case Search::model: return "model";
    case Search::annealing: return "annealing";
    case Search::autotune: return "autotune";
  }
  return "?";
}

Search parse_search(std::string_view text) {
  for (Search s : {Search::model, Search::annealing, Search::autotune})
    if (name(s) == text) return s;
  throw InvalidArgument(fmt::format("unknown search '{}': use model, annealing or autotune", text));
}

namespace {

void warn_once(const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (said.insert(text).second) fmt::print(stderr, "isaac: warning: {}\n", text);
}

// The process's connection to the tuning database, or null when caches are off or it cannot be opened
// (then a warning says why once, and tuning goes on without it).
tune::TuningDatabase* database(bool wanted) {
  if (!wanted) return nullptr;
  static std::mutex mutex;
  static std::optional<tune::TuningDatabase> db;
  static bool tried = false;
  std::lock_guard lock(mutex);
  if (!tried) {
    tried = true;
    if (tune::caches_enabled()) try {
        db.emplace(tune::tuning_database_path());
      } catch (const std::exception& e) {
        fmt::print(stderr, "isaac: warning: running without the tuning database: {}\n", e.what());
      }
  }
  return db ? &*db : nullptr;
}

std::optional<tune::Decision> find(bool wanted, const tune::DecisionKey& key) {
  tune::TuningDatabase* db = database(wanted);
  if (!db) return std::nullopt;
  try {
    return db->find(key);
  } catch (const std::exception& e) {
    fmt::print(stderr, "isaac: warning: ignoring the tuning database's entry for {}: {}\n", key.shape, e.what());
    return std::nullopt;
  }
}

void remember(bool wanted, const tune::DecisionKey& key, const std::string& params, double measured_ms,
              const std::string& how) {
  if (tune::TuningDatabase* db = database(wanted)) try {
      db->store(key, {params, measured_ms, how, {}});
    } catch (const std::exception& e) {
      fmt::print(stderr, "isaac: warning: could not store a decision in the tuning database: {}\n", e.what());
    }
}

// Bucket decisions of this process (autotune works without the database too): candidates, fastest first.
struct BucketEntry {
  std::vector<std::string> candidates;
  double measured_ms = -1;
  std::string how;
};

std::string text_of(const tune::DecisionKey& k) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", k.device, k.compute_capability, k.sm_count, k.driver,
                     k.isaac_version, k.template_name, k.dtype, k.layout, k.shape);
}

std::mutex bucket_mutex;
std::map<std::string, BucketEntry>& buckets() {
  static std::map<std::string, BucketEntry> b;
  return b;
}

// Compiles candidates in parallel threads and times them one at a time on the GPU.
template <class Params, class Kernel>
class CandidateTimer {
 public:
  using Build = std::function<Kernel(const Params&)>;
  using Time = std::function<double(Kernel, const Params&, const runtime::TimingOptions&)>;
  CandidateTimer(Build build, Time time) : build_(std::move(build)), time_(std::move(time)) {}
  CandidateTimer(const CandidateTimer&) = delete;
  CandidateTimer& operator=(const CandidateTimer&) = delete;
  ~CandidateTimer() {
    for (auto& [key, future] : compiling_) future.wait();  // no thread outlives what it uses
  }
  void prefetch(const Params& p) {
    if (!compiling_.contains(p.str()))
      compiling_.emplace(p.str(), std::async(std::launch::async, [this, p] { return build_(p); }).share());
  }
  // The candidate's median time in ms; throws when it cannot compile, load or run. Nothing compiles
  // while a kernel is timed: compiler threads on every core would delay the host between the
  // timing events. The first timing also warms the GPU up from the clocks it idled at meanwhile.
  double time(const Params& p) {
    prefetch(p);
    for (auto& [key, future] : compiling_) future.wait();
    runtime::TimingOptions timing;
    timing.warmup = 1;
    timing.warmup_ms = timed_.empty() ? 20 : 0;
    timing.repeats = tune::runs_per_timing;
    timed_.insert(p.str());
    return time_(compiling_.at(p.str()).get(), p, timing);
  }
  int timed() const { return int(timed_.size()); }

 private:
  Build build_;
  Time time_;
  std::map<std::string, std::shared_future<Kernel>> compiling_;
  std::set<std::string> timed_;
};

// Elements spanned by a column-major operand of `rows` x `cols` with leading dimension ld, over the batch.
std::size_t span(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch, std::int64_t stride) {
  if (rows == 0 || cols == 0) return 1;
  return std::size_t((cols - 1) * ld + rows + (batch - 1) * stride);
}

std::size_t span4(const std::array<std::int64_t, 4>& extents, const std::array<std::int64_t, 4>& strides) {
  std::size_t last = 0;
  for (int i = 0; i < 4; ++i) last += std::size_t(std::max<std::int64_t>(extents[i] - 1, 0) * strides[i]);
  return last + 1;
}

// Decisions made with f32 on the tensor cores are kept apart from those without.
std::string tensor_cores_key(ir::DType dtype, const TuningOptions& options) {
  return dtype == ir::DType::f32 && options.f32_tensor_cores ? " f32-tensor-cores" : "";
}

// What the searches need to know of a template: its legality, its spaces, how to build and time a
// kernel on scratch operands (filled with small non-zero values) and its choice without a search.
struct GemmPattern {
  using Params = lower::GemmParams;
  using Kernel = lower::GemmKernel;
  static constexpr const char* name = "gemm";
  static constexpr const char* fallback_name = "heuristic";

  const ir::Gemm& problem;
  const TuningOptions& options;
  runtime::DeviceInfo info;
  lower::DeviceLimits limits;
  std::optional<runtime::Buffer> a, b, c;
  std::optional<runtime::Stream> stream;

  ir::DType dtype() const { return problem.dtype; }
  std::string layout() const { return fmt::format("{}{}", problem.a_trans ? 'T' : 'N', problem.b_trans ? 'T' : 'N'); }
  std::string shape() const { return ir::to_string(problem) + tensor_cores_key(problem.dtype, options); }
  std::string bucket() const {
    return tune::gemm_bucket(problem, options.gemm_buckets) + tensor_cores_key(problem.dtype, options);
  }
  bool legal(const Params& p) const { return lower::gemm_legal(problem, p, limits); }
  lower::Legality check_problem() const { return lower::check_gemm_problem(problem, limits); }
  static Params parse(std::string_view text) { return lower::parse_gemm_params(text); }
  Params fallback() const { return tune::heuristic_gemm(problem, limits); }
  std::vector<tune::RankedSet<Params>> rank(const tune::Model& model, int top, tune::SearchReport* report) const {
    return tune::rank_gemm_space(problem, limits, model, top, report);
  }
  tune::Choice<Params> select(const tune::Model& model, const tune::Benchmark<Params>& benchmark,
                              const std::function<void(const std::vector<tune::RankedSet<Params>>&)>& candidates) {
    return tune::select_gemm(problem, limits, model, options.top_k, benchmark, candidates);
  }
  std::vector<tune::PrunedSet<Params>> prune(tune::PruneReport* report) const {
    return tune::prune_gemm_space(problem, limits, tune::multiprocessors(info), report);
  }
  Kernel build(const Params& p) const { return build_gemm_kernel(problem, p, options.mode, options.ordinal); }
  double time(Kernel kernel, const Params& p, const runtime::TimingOptions& timing) {
    CompiledGemm gemm(std::move(kernel), p, options.mode, options.ordinal);
    if (!stream) {
      const ir::Gemm& g = problem;
      const std::size_t elem = ir::size_of(g.dtype);
      a.emplace(elem * span(g.a_trans ? g.k : g.m, g.a_trans ? g.m : g.k, g.lda, g.batch, g.stride_a));
      b.emplace(elem * span(g.b_trans ? g.n : g.k, g.b_trans ? g.k : g.n, g.ldb, g.batch, g.stride_b));
      c.emplace(elem * span(g.m, g.n, g.ldc, g.batch, g.stride_c));
      for (runtime::Buffer* buffer : {&*a, &*b, &*c}) buffer->fill_bytes(0x3c);  // 1.06 in f16, 0.0115 in f32
      stream.emplace();
    }
    return runtime::time_on_stream(
               [&](const runtime::Stream& s) { gemm.run(problem, c->ptr(), a->ptr(), b->ptr(), 1.0, 0.0, s); },
               *stream, timing)
        .median_ms;
  }
};

struct ConvPattern {
  using Params = lower::ConvParams;
  using Kernel = lower::ConvKernel;
  static constexpr const char* name = "conv";
  static constexpr const char* fallback_name = "fixed choice";

  const ir::Conv& problem;
  const lower::ConvEpilogue& epilogue;
  const TuningOptions& options;
  runtime::DeviceInfo info;
  lower::DeviceLimits limits;
  std::optional<runtime::Buffer> input, filter, output, bias;
  std::optional<runtime::Stream> stream;

  ir::DType dtype() const { return problem.dtype; }
  std::string layout() const {
    return fmt::format("{}/{}/{}", ir::name(problem.input_layout), ir::name(problem.filter_layout),
                       ir::name(problem.output_layout));
  }
  std::string shape() const {
    return fmt::format("{} epilogue={}{}", ir::to_string(problem), lower::to_string(epilogue),
                       tensor_cores_key(problem.dtype, options));
  }
  std::string bucket() const {
    return fmt::format("{} epilogue={}{}", tune::conv_bucket(problem, options.conv_buckets), lower::to_string(epilogue),
                       tensor_cores_key(problem.dtype, options));
  }
  bool legal(const Params& p) const { return lower::conv_legal(problem, p, epilogue, limits); }
  lower::Legality check_problem() const { return lower::check_conv_problem(problem, limits); }
  static Params parse(std::string_view text) { return lower::parse_conv_params(text); }
  // The first legal set of a few shapes that work on most problems.
  Params fallback() const {
    const auto space = lower::conv_space(problem, epilogue, limits);
    if (space.empty()) throw Error(fmt::format("no legal CONV parameter set for {}", ir::to_string(problem)));
    for (auto [pl, kl, ps, ks] : {std::array{128, 64, 8, 4}, {64, 64, 4, 4}, {64, 32, 4, 4}, {32, 32, 2, 2}})
      for (const lower::ConvParams& p : space)
        if (p.pl == pl && p.kl == kl && p.ps == ps && p.ks == ks && p.cg == 1 && p.db == 1) return p;
    return space.front();
  }
  std::vector<tune::RankedSet<Params>> rank(const tune::Model& model, int top, tune::SearchReport* report) const {
    return tune::rank_conv_space(problem, epilogue, limits, model, top, report);
  }
  tune::Choice<Params> select(const tune::Model& model, const tune::Benchmark<Params>& benchmark,
                              const std::function<void(const std::vector<tune::RankedSet<Params>>&)>& candidates) {
    return tune::select_conv(problem, epilogue, limits, model, options.top_k, benchmark, candidates);
  }
  std::vector<tune::PrunedSet<Params>> prune(tune::PruneReport* report) const {
    return tune::prune_conv_space(problem, epilogue, limits, tune::multiprocessors(info), report);
  }
  Kernel build(const Params& p) const {
    return cached_conv_kernel(problem, p, epilogue, lower::target_for_compute_capability(info.compute_capability()),
                              true);
  }
  double time(Kernel kernel, const Params& p, const runtime::TimingOptions& timing) {
    CompiledConv conv(problem, std::move(kernel), p, epilogue, options.ordinal);
    if (!stream) {
      const ir::Conv& v = problem;
      const std::size_t elem = ir::size_of(v.dtype);
      input.emplace(elem * span4({v.n, v.c, v.h, v.w}, v.input_strides));
      filter.emplace(elem * span4({v.k, v.c, v.r, v.s}, v.filter_strides));
      output.emplace(elem * span4({v.n, v.k, v.p, v.q}, v.output_strides));
      bias.emplace(elem * std::size_t(v.k));
      for (runtime::Buffer* buffer : {&*input, &*filter, &*output, &*bias}) buffer->fill_bytes(0x3c);
      stream.emplace();
    }
    return runtime::time_on_stream(
               [&](const runtime::Stream& s) {
                 conv.run(output->ptr(), input->ptr(), filter->ptr(), 1.0, 0.0, s, epilogue.bias ? bias->ptr() : 0);
               },
               *stream, timing)
        .median_ms;
  }
};

template <class Pattern>
using DecisionOf = TuningDecision<typename Pattern::Params>;

template <class Pattern>
CandidateTimer<typename Pattern::Params, typename Pattern::Kernel> timer_for(Pattern& pattern) {
  using Params = typename Pattern::Params;
  return {[&pattern](const Params& p) { return pattern.build(p); },
          [&pattern](typename Pattern::Kernel k, const Params& p, const runtime::TimingOptions& timing) {
            return pattern.time(std::move(k), p, timing);
          }};
}

template <class Pattern>
DecisionOf<Pattern> fallback_decision(const Pattern& pattern, std::string how) {
  DecisionOf<Pattern> d;
  d.params = pattern.fallback();
  d.how = fmt::format("{} ({})", Pattern::fallback_name, how);
  return d;
}

template <class Pattern>
DecisionOf<Pattern> model_search(Pattern& pattern, const TuningOptions& options, const tune::DecisionKey& key) {
  const auto model =
      tune::find_model(Pattern::name, pattern.dtype(), pattern.info.name, pattern.info.compute_capability());
  if (!model) {
    warn_once(fmt::format("no {} {} performance model is available; using the {}", Pattern::name,
                          ir::name(pattern.dtype()), Pattern::fallback_name));
    return fallback_decision(pattern, "no model for this dtype");
  }
  auto timer = timer_for(pattern);
  using Params = typename Pattern::Params;
  const tune::Choice<Params> s = pattern.select(
      model->model, [&](const Params& p) { return timer.time(p); },
      [&](const std::vector<tune::RankedSet<Params>>& ranked) {
        for (const auto& r : ranked) timer.prefetch(r.params);
      });
  DecisionOf<Pattern> d;
  d.params = s.params;
  d.predicted_tflops = s.predicted_tflops;
  d.measured_ms = s.measured_ms;
  d.rank = s.rank;
  d.search = s.search;
  d.timed = timer.timed();
  d.candidates = s.timed;
  d.how = options.top_k == 0
              ? fmt::format("model ({}), top-1", model->source)
              : fmt::format("model ({}) + top-{}: rank {}{}", model->source, options.top_k, s.rank,
                            s.failures.empty() ? "" : fmt::format(", {} failed", s.failures.size()));
  remember(options.database, key, d.params.str(), d.measured_ms, d.how);
  return d;
}

template <class Pattern>
DecisionOf<Pattern> annealing_search(Pattern& pattern, const TuningOptions& options, const tune::DecisionKey& key) {
  tune::PruneReport report;
  const auto list = pattern.prune(&report);
  if (list.empty()) throw Error(fmt::format("no legal {} parameter set for {}", Pattern::name, pattern.shape()));
  auto timer = timer_for(pattern);
  std::vector<std::string> failures;
  auto measure = [&](const std::vector<std::size_t>& positions) {
    for (std::size_t p : positions) timer.prefetch(list[p].params);
    std::vector<double> ms;
    for (std::size_t p : positions) try {
        ms.push_back(timer.time(list[p].params));
      } catch (const std::exception& e) {
        failures.push_back(fmt::format("{}: {}", list[p].params.str(), e.what()));
        ms.push_back(std::numeric_limits<double>::infinity());
      }
    return ms;
  };
  const tune::AnnealResult r = tune::anneal(list.size(), tune::best_balanced(list), measure,
                                            {.budget = options.anneal_budget});
  DecisionOf<Pattern> d;
  d.params = list[r.best].params;
  d.measured_ms = r.best_ms;
  d.timed = r.timed;
  d.search.legal_sets = report.legal_sets;
  d.search.enumerate_ms = report.prune_ms;
  d.how = fmt::format("pruning ({} of {} legal sets kept over {} occupancy levels) + annealing: {} timed{}",
                      report.kept, report.legal_sets, report.occupancy_levels, r.timed,
                      failures.empty() ? "" : fmt::format(", {} failed (first: {})", failures.size(), failures.front()));
  remember(options.database, key, d.params.str(), d.measured_ms, d.how);
  return d;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

template <class Pattern>
DecisionOf<Pattern> autotune(Pattern& pattern, const TuningOptions& options, const tune::DecisionKey& key) {
  using Params = typename Pattern::Params;
  const std::string bucket_id = text_of(key);
  std::optional<BucketEntry> known;
  {
    std::lock_guard lock(bucket_mutex);
    if (auto it = buckets().find(bucket_id); it != buckets().end()) known = it->second;
  }
  if (!known)
    if (auto d = find(options.database, key)) known = BucketEntry{lines_of(d->params), d->measured_ms, d->how};
  if (known) {
    // The bucket's first candidate that parses and is legal for this member.
    for (std::size_t i = 0; i < known->candidates.size(); ++i) try {
        const Params p = Pattern::parse(known->candidates[i]);
        if (!pattern.legal(p)) continue;
        DecisionOf<Pattern> d;
        d.params = p;
        d.how = fmt::format("autotune bucket '{}': candidate {} of {} ({})", key.shape, i + 1,
                            known->candidates.size(), known->how);
        if (i == 0) d.measured_ms = known->measured_ms;
        return d;
      } catch (const std::exception&) {
        continue;  // a damaged entry counts as illegal
      }
    return fallback_decision(
        pattern, fmt::format("none of the {} candidates of bucket '{}' is legal here", known->candidates.size(), key.shape));
  }

  // First member of the bucket: time the candidates on its own shape.
  std::vector<Params> candidates;
  std::string source;
  const auto model =
      tune::find_model(Pattern::name, pattern.dtype(), pattern.info.name, pattern.info.compute_capability());
  if (model) {
    for (const auto& r : pattern.rank(model->model, std::max(options.top_k, 1), nullptr)) candidates.push_back(r.params);
    source = fmt::format("model top-{}", candidates.size());
  } else {
    const auto list = pattern.prune(nullptr);
    const std::size_t n = std::min<std::size_t>(std::max(options.top_k, 1), list.size());
    for (std::size_t i = 0; i < n; ++i) candidates.push_back(list[i * list.size() / n].params);
    source = fmt::format("{} of the pruned list", candidates.size());
  }
  BucketEntry entry;
  std::vector<std::pair<double, std::string>> timed;
  if (options.top_k == 0 && model) {
    entry.candidates = {candidates.front().str()};
  } else {
    auto timer = timer_for(pattern);
    for (const Params& p : candidates) timer.prefetch(p);
    for (const Params& p : candidates) try {
        timed.emplace_back(timer.time(p), p.str());
      } catch (const std::exception&) {
      }
    std::sort(timed.begin(), timed.end());
    for (const auto& [ms, text] : timed) entry.candidates.push_back(text);
    if (timed.empty())
      return fallback_decision(pattern, fmt::format("none of the {} autotune candidates could run", candidates.size()));
    entry.measured_ms = timed.front().first;
  }
  entry.how = fmt::format("autotune: {} timed on {}", source, pattern.shape());
  std::string text;
  for (const std::string& c : entry.candidates) text += c + "\n";
  remember(options.database, key, text, entry.measured_ms, entry.how);
  {
    std::lock_guard lock(bucket_mutex);
    buckets()[bucket_id] = entry;
  }
  DecisionOf<Pattern> d;
  d.params = Pattern::parse(entry.candidates.front());
  d.measured_ms = entry.measured_ms;
  d.timed = int(timed.size());
  d.how = fmt::format("autotune bucket '{}': tuned here ({})", key.shape, source);
  return d;
}

template <class Pattern>
DecisionOf<Pattern> choose(Pattern& pattern, const TuningOptions& options) {
  if (options.top_k < 0) throw InvalidArgument(fmt::format("top_k={} must be 0 (trust the model) or more", options.top_k));
  if (auto legal = pattern.check_problem(); !legal) throw InvalidArgument(legal.reason);
  if (options.anneal_budget < 1)
    throw InvalidArgument(fmt::format("anneal_budget={} must be at least 1", options.anneal_budget));
  const runtime::DeviceInfo& info = pattern.info;
  tune::DecisionKey key{info.name,
                        info.compute_capability(),
                        info.sm_count,
                        runtime::driver_version(),
                        version(),
                        Pattern::name,
                        std::string(ir::name(pattern.dtype())),
                        pattern.layout(),
                        options.search == Search::autotune ? pattern.bucket() : pattern.shape()};
  if (options.search == Search::autotune) return autotune(pattern, options, key);
  // A decision of the database that still parses and is still legal.
  if (auto known = find(options.database, key)) try {
      const auto p = Pattern::parse(known->params);
      if (pattern.legal(p)) {
        DecisionOf<Pattern> d;
        d.params = p;
        d.measured_ms = known->measured_ms;
        d.how = fmt::format("tuning database ({}, {})", known->how, known->created);
        return d;
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "isaac: warning: ignoring the tuning database's entry for {}: {}\n", key.shape, e.what());
    }
  return options.search == Search::annealing ? annealing_search(pattern, options, key)
                                             : model_search(pattern, options, key);
}

}  // namespace

GemmDecision choose_gemm(const ir::Gemm& problem, const TuningOptions& options) {
  const runtime::DeviceInfo info = runtime::device_info(options.ordinal);
  lower::DeviceLimits limits = device_limits(info);
  limits.f32_tensor_cores = options.f32_tensor_cores;
  GemmPattern pattern{problem, options, info, limits, {}, {}, {}, {}};
  return choose(pattern, options);
}

ConvDecision choose_conv(const ir::Conv& problem, const lower::ConvEpilogue& epilogue, const TuningOptions& options) {
  const runtime::DeviceInfo info = runtime::device_info(options.ordinal);
  lower::DeviceLimits limits = device_limits(info);
  limits.f32_tensor_cores = options.f32_tensor_cores;  // the Winograd products (WG=2) are GEMMs
  ConvPattern pattern{problem, epilogue, options, info, limits, {}, {}, {}, {}, {}};
  return choose(pattern, options);
}

}  // namespace isaac
