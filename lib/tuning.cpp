#include <isaac/error.hpp>
#include <isaac/conv.hpp>
#include <isaac/gemm.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tune/database.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/version.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tuning.hpp>

#include <fmt/format.h>

#include <future>
#include <map>
#include <mutex>

namespace isaac {

namespace {

// Elements spanned by a column-major operand of `rows` x `cols` with leading dimension ld, over the batch.
std::size_t span(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch, std::int64_t stride) {
  if (rows == 0 || cols == 0) return 1;
  return std::size_t((cols - 1) * ld + rows + (batch - 1) * stride);
}

// Scratch operands of the problem's shape, filled with small non-zero values, for timing.
struct Scratch {
  runtime::Buffer a, b, c;
  explicit Scratch(const ir::Gemm& g) {
    const std::size_t elem = ir::size_of(g.dtype);
    a = runtime::Buffer(elem * span(g.a_trans ? g.k : g.m, g.a_trans ? g.m : g.k, g.lda, g.batch, g.stride_a));
    b = runtime::Buffer(elem * span(g.b_trans ? g.n : g.k, g.b_trans ? g.k : g.n, g.ldb, g.batch, g.stride_b));
    c = runtime::Buffer(elem * span(g.m, g.n, g.ldc, g.batch, g.stride_c));
    for (runtime::Buffer* buffer : {&a, &b, &c}) buffer->fill_bytes(0x3c);  // 1.06 in f16, 0.0115 in f32
  }
};

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

tune::DecisionKey decision_key(const runtime::DeviceInfo& info, const char* template_name, ir::DType dtype,
                               std::string layout, std::string shape) {
  return {info.name,        info.compute_capability(), info.sm_count, runtime::driver_version(), version(),
          template_name,    std::string(ir::name(dtype)), std::move(layout), std::move(shape)};
}

// A decision of the database that still parses and is still legal, or nothing.
template <class Params, class Parse, class Legal>
std::optional<std::pair<Params, tune::Decision>> recall(bool wanted, const tune::DecisionKey& key, const Parse& parse,
                                                        const Legal& legal) {
  tune::TuningDatabase* db = database(wanted);
  if (!db) return std::nullopt;
  try {
    auto d = db->find(key);
    if (!d) return std::nullopt;
    Params p = parse(d->params);
    if (!legal(p)) return std::nullopt;
    return std::pair{p, *d};
  } catch (const std::exception& e) {
    fmt::print(stderr, "isaac: warning: ignoring the tuning database's entry for {}: {}\n", key.shape, e.what());
    return std::nullopt;
  }
}

// The decision a database entry stands for.
template <class Decision, class Params>
Decision recalled(const std::pair<Params, tune::Decision>& known) {
  Decision d;
  d.params = known.first;
  d.measured_ms = known.second.measured_ms;
  d.how = fmt::format("tuning database ({}, {})", known.second.how, known.second.created);
  return d;
}

void remember(bool wanted, const tune::DecisionKey& key, const std::string& params, double measured_ms,
              const std::string& how);

// The decision of a model selection, recorded in the database.
template <class Decision, class Params>
Decision decided(const tune::Choice<Params>& s, const tune::ModelChoice& model, const TuningOptions& options,
                 const tune::DecisionKey& key) {
  Decision d;
  d.params = s.params;
  d.predicted_tflops = s.predicted_tflops;
  d.measured_ms = s.measured_ms;
  d.rank = s.rank;
  d.search = s.search;
  d.how = options.top_k == 0
              ? fmt::format("model ({}), top-1", model.source)
              : fmt::format("model ({}) + top-{}: rank {}{}", model.source, options.top_k, s.rank,
                            s.failures.empty() ? "" : fmt::format(", {} failed", s.failures.size()));
  remember(options.database, key, d.params.str(), d.measured_ms, d.how);
  return d;
}

void remember(bool wanted, const tune::DecisionKey& key, const std::string& params, double measured_ms,
              const std::string& how) {
  if (tune::TuningDatabase* db = database(wanted)) try {
      db->store(key, {params, measured_ms, how, {}});
    } catch (const std::exception& e) {
      fmt::print(stderr, "isaac: warning: could not store a decision in the tuning database: {}\n", e.what());
    }
}

}  // namespace

GemmDecision choose_gemm(const ir::Gemm& problem, const TuningOptions& options) {
  const runtime::DeviceInfo info = runtime::device_info(options.ordinal);
  const lower::DeviceLimits limits = device_limits(info);
  GemmDecision decision;
  const auto key = decision_key(info, "gemm", problem.dtype,
                                fmt::format("{}{}", problem.a_trans ? 'T' : 'N', problem.b_trans ? 'T' : 'N'),
                                ir::to_string(problem));
  if (auto known = recall<lower::GemmParams>(
          options.database, key, [](const std::string& t) { return lower::parse_gemm_params(t); },
          [&](const lower::GemmParams& p) { return lower::gemm_legal(problem, p, limits); }))
    return recalled<GemmDecision>(*known);
  const auto model = tune::find_model("gemm", problem.dtype, info.name, info.compute_capability());
  if (!model) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      fmt::print(stderr, "isaac: warning: no GEMM {} performance model is available; using the heuristic choice\n",
                 ir::name(problem.dtype));
    });
    decision.params = tune::heuristic_gemm(problem, limits, info.sm_count);
    decision.how = "heuristic (no model for this dtype)";
    return decision;
  }

  std::optional<Scratch> scratch;
  std::optional<runtime::Stream> stream;
  std::map<std::string, std::shared_future<lower::GemmKernel>> compiling;
  auto start_compiling = [&](const std::vector<tune::Ranked>& ranked) {
    for (size_t i = 0; i < ranked.size() && int(i) < options.top_k; ++i)
      compiling.emplace(ranked[i].params.str(), std::async(std::launch::async, [&, p = ranked[i].params] {
                                                  return build_gemm_kernel(problem, p, options.mode, options.ordinal);
                                                }).share());
  };
  auto benchmark = [&](const lower::GemmParams& p) {
    auto it = compiling.find(p.str());
    lower::GemmKernel kernel = it != compiling.end() ? it->second.get()
                                                     : build_gemm_kernel(problem, p, options.mode, options.ordinal);
    CompiledGemm gemm(std::move(kernel), p, options.mode, options.ordinal);
    if (!scratch) scratch.emplace(problem), stream.emplace();
    runtime::TimingOptions timing;
    timing.warmup = 1;
    timing.repeats = 5;
    return runtime::time_on_stream(
               [&](const runtime::Stream& s) {
                 gemm.run(problem, scratch->c.ptr(), scratch->a.ptr(), scratch->b.ptr(), 1.0, 0.0, s);
               },
               *stream, timing)
        .median_ms;
  };
  const tune::Selection s = tune::select_gemm(problem, limits, model->model, options.top_k, benchmark, start_compiling);
  for (auto& [key, future] : compiling) future.wait();  // no thread outlives the locals it uses
  return decided<decltype(decision)>(s, *model, options, key);
}

namespace {

std::size_t span4(const std::array<std::int64_t, 4>& extents, const std::array<std::int64_t, 4>& strides) {
  std::size_t last = 0;
  for (int i = 0; i < 4; ++i) last += std::size_t(std::max<std::int64_t>(extents[i] - 1, 0) * strides[i]);
  return last + 1;
}

// Without a model: the first legal set of a few shapes that work on most problems.
lower::ConvParams fallback_conv(const ir::Conv& problem, const lower::ConvEpilogue& epilogue,
                                const lower::DeviceLimits& limits) {
  const auto space = lower::conv_space(problem, epilogue, limits);
  if (space.empty()) throw Error(fmt::format("no legal CONV parameter set for {}", ir::to_string(problem)));
  for (auto [pl, kl, ps, ks] : {std::array{128, 64, 8, 4}, {64, 64, 4, 4}, {64, 32, 4, 4}, {32, 32, 2, 2}})
    for (const lower::ConvParams& p : space)
      if (p.pl == pl && p.kl == kl && p.ps == ps && p.ks == ks && p.cg == 1 && p.db == 1) return p;
  return space.front();
}

}  // namespace

ConvDecision choose_conv(const ir::Conv& problem, const lower::ConvEpilogue& epilogue, const TuningOptions& options) {
  const runtime::DeviceInfo info = runtime::device_info(options.ordinal);
  const lower::DeviceLimits limits = device_limits(info);
  ConvDecision decision;
  const auto key = decision_key(info, "conv", problem.dtype,
                                fmt::format("{}/{}/{}", ir::name(problem.input_layout), ir::name(problem.filter_layout),
                                            ir::name(problem.output_layout)),
                                fmt::format("{} epilogue={}", ir::to_string(problem), lower::to_string(epilogue)));
  if (auto known = recall<lower::ConvParams>(
          options.database, key, [](const std::string& t) { return lower::parse_conv_params(t); },
          [&](const lower::ConvParams& p) { return bool(lower::check_conv(problem, p, epilogue, limits)); }))
    return recalled<ConvDecision>(*known);
  const auto model = tune::find_model("conv", problem.dtype, info.name, info.compute_capability());
  if (!model) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      fmt::print(stderr, "isaac: warning: no CONV {} performance model is available; using a fixed choice\n",
                 ir::name(problem.dtype));
    });
    decision.params = fallback_conv(problem, epilogue, limits);
    decision.how = "fixed choice (no model for this dtype)";
    return decision;
  }
  const auto target = lower::target_for_compute_capability(info.compute_capability());
  std::map<std::string, std::shared_future<lower::ConvKernel>> compiling;
  auto start_compiling = [&](const std::vector<tune::RankedConv>& ranked) {
    for (size_t i = 0; i < ranked.size() && int(i) < options.top_k; ++i)
      compiling.emplace(ranked[i].params.str(), std::async(std::launch::async, [&, p = ranked[i].params] {
                                                  return cached_conv_kernel(problem, p, epilogue, target);
                                                }).share());
  };
  const std::size_t elem = ir::size_of(problem.dtype);
  const ir::Conv& v = problem;
  std::optional<runtime::Buffer> input, filter, output, bias;
  std::optional<runtime::Stream> stream;
  auto benchmark = [&](const lower::ConvParams& p) {
    auto it = compiling.find(p.str());
    lower::ConvKernel kernel = it != compiling.end() ? it->second.get() : cached_conv_kernel(problem, p, epilogue, target);
    CompiledConv conv(problem, std::move(kernel), p, epilogue, options.ordinal);
    if (!stream) {
      input.emplace(elem * span4({v.n, v.c, v.h, v.w}, v.input_strides));
      filter.emplace(elem * span4({v.k, v.c, v.r, v.s}, v.filter_strides));
      output.emplace(elem * span4({v.n, v.k, v.p, v.q}, v.output_strides));
      bias.emplace(elem * std::size_t(v.k));
      for (runtime::Buffer* b : {&*input, &*filter, &*output, &*bias}) b->fill_bytes(0x3c);
      stream.emplace();
    }
    runtime::TimingOptions timing;
    timing.warmup = 1;
    timing.repeats = 5;
    return runtime::time_on_stream(
               [&](const runtime::Stream& s) {
                 conv.run(output->ptr(), input->ptr(), filter->ptr(), 1.0, 0.0, s, epilogue.bias ? bias->ptr() : 0);
               },
               *stream, timing)
        .median_ms;
  };
  const tune::ConvSelection s =
      tune::select_conv(problem, epilogue, limits, model->model, options.top_k, benchmark, start_compiling);
  for (auto& [key, future] : compiling) future.wait();
  return decided<decltype(decision)>(s, *model, options, key);
}

}  // namespace isaac
