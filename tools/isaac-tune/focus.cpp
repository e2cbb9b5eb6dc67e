#include "focus.hpp"
#include "collect_plan.hpp"
#include "focus_conv.hpp"

#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/load_siblings.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/spread.hpp>
#include <isaac/tune/split_siblings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <memory>
#include <random>
#include <thread>
#include <tuple>

namespace isaac::tune::cli {

namespace {

struct FocusFlags {
  std::string template_name = "gemm", out, model_path, dtypes = "f32,f16,f64";
  double seconds = 120;
  int per_shape = 12, top = 64, best = 6, siblings = 0, kind_siblings = 0, load_siblings = 0, neighbour_siblings = 0;
  std::uint64_t seed = 7;
  ShapeOptions shapes;  // GEMM: the ranges of M, N, K and the cap on M*N*K (its dtypes and aligned share unused)
  // CONV: the ranges of C, P and Q and focus's flops cap (N and K come from the options both share).
  ConvShapeOptions conv_shapes = ConvFocusFlags{}.shapes;
  std::vector<std::string> layouts;  // CONV: image layouts drawn (ConvFocusFlags::layouts)
  double aligned_share = 0;
  double square_share = 0;
  // GEMM: a share of the inputs are batched, with a batch count log-uniform in [2, batch_max] and the
  // cap on M*N*K applied to the whole batch.
  double batched_share = 0;
  std::int64_t batch_max = 1;
  double winograd_share = 0;
  bool f32_tensor_cores = false;
};

double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1p-53; }

std::int64_t log_uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::int64_t(std::llround(std::exp(std::log(lo) + uniform01(rng) * (std::log(hi) - std::log(lo)))));
}

// A dense GEMM like collect's: M, N, K log-uniform in their ranges (by default [16, 8192] and
// [16, 16384]), M*N*K capped. A share `aligned` of them has M, N and K rounded up to multiples of 8,
// as many real problems do: only those admit the 16-byte copies of every operand (and TC=2 at all).
// A share `square` has M = N = K (LINPACK-like, the commonest GEMM of all), drawn in the range the
// three share, under the same cap: independent draws make few of them. A share `batched` is a batch
// of GEMMs of one shape, their count log-uniform in [2, batch_max], the cap counting every GEMM.
ir::Gemm random_problem(std::mt19937_64& rng, const std::vector<ir::DType>& dtypes, const ShapeOptions& shapes,
                        double aligned, double square, double batched, std::int64_t batch_max) {
  for (;;) {
    std::int64_t m = log_uniform(rng, double(shapes.m_min), double(shapes.m_max)),
                 n = log_uniform(rng, double(shapes.n_min), double(shapes.n_max)),
                 k = log_uniform(rng, double(shapes.k_min), double(shapes.k_max));
    if (square > 0 && uniform01(rng) < square)
      m = n = k = log_uniform(rng, double(std::max({shapes.m_min, shapes.n_min, shapes.k_min})),
                              double(std::min({shapes.m_max, shapes.n_max, shapes.k_max})));
    const std::int64_t batch = batched > 0 && uniform01(rng) < batched ? log_uniform(rng, 2, double(batch_max)) : 1;
    if (double(m) * double(n) * double(k) * double(batch) > shapes.max_mnk) continue;
    const ir::DType t = dtypes[rng() % dtypes.size()];
    const unsigned layout = unsigned(rng() % 4);
    if (aligned > 0 && uniform01(rng) < aligned)
      for (std::int64_t* extent : {&m, &n, &k}) *extent = (*extent + 7) / 8 * 8;
    return ir::dense_gemm(t, m, n, k, layout & 1, layout & 2, batch);
  }
}

struct Candidate {
  lower::GemmParams params;
  int rank = 0;
  double predicted = 0;
  std::optional<lower::GemmKernel> kernel;
  std::string error;
};

struct Batch {
  ir::Gemm problem;
  std::vector<Candidate> candidates;
};

std::atomic<bool> interrupted{false};

int run_focus(const FocusFlags& f) {
  // Up to two other kinds of kernel (f16 on sm_90: FMA, mma.sync and wgmma).
  const int sibling_count = f.siblings + f.load_siblings + f.neighbour_siblings;
  if (f.per_shape < 1 || f.best < 0 || f.siblings < 0 || f.kind_siblings < 0 || f.load_siblings < 0 ||
      f.neighbour_siblings < 0 || f.best + sibling_count + 2 * f.kind_siblings > f.per_shape || f.top < f.per_shape)
    throw InvalidArgument(fmt::format("--per-shape {} --best {} --kg-siblings {} --kind-siblings {} --load-siblings {} "
                                      "--neighbour-siblings {} --top {}: need best + kg-siblings + 2 x kind-siblings + "
                                      "load-siblings + neighbour-siblings <= per-shape <= top",
                                      f.per_shape, f.best, f.siblings, f.kind_siblings, f.load_siblings,
                                      f.neighbour_siblings, f.top));
  const std::vector<ir::DType> dtypes = parse_dtype_list(f.dtypes);
  if (f.f32_tensor_cores && std::ranges::find(dtypes, ir::DType::f32) == dtypes.end())
    throw InvalidArgument(fmt::format("--f32-tensor-cores needs f32 among --dtypes {}: it lets f32 alone run on the "
                                      "tensor cores",
                                      f.dtypes));
  f.shapes.validate();
  // A square input needs an extent that every range holds and the cap admits.
  const std::int64_t square_min = std::max({f.shapes.m_min, f.shapes.n_min, f.shapes.k_min}),
                     square_max = std::min({f.shapes.m_max, f.shapes.n_max, f.shapes.k_max});
  if (f.square_share > 0 && (square_min > square_max || std::pow(double(square_min), 3) > f.shapes.max_mnk))
    throw InvalidArgument(fmt::format("--square-share {}: no M = N = K lies in every range ([{}, {}] is what they "
                                      "share) with M*N*K <= --max-mnk {}; widen the ranges or leave --square-share at 0",
                                      f.square_share, square_min, square_max, f.shapes.max_mnk));
  if ((f.batched_share > 0) != (f.batch_max > 1))
    throw InvalidArgument(fmt::format("--batched-share {} --batch-max {}: a batched input needs both, a share above 0 "
                                      "and a largest batch of at least 2",
                                      f.batched_share, f.batch_max));
  if (f.batched_share > 0 && 2 * double(f.shapes.m_min) * double(f.shapes.n_min) * double(f.shapes.k_min) > f.shapes.max_mnk)
    throw InvalidArgument(fmt::format("--batched-share {}: two GEMMs of the smallest sizes ({} x {} x {}) already "
                                      "exceed --max-mnk {}",
                                      f.batched_share, f.shapes.m_min, f.shapes.n_min, f.shapes.k_min, f.shapes.max_mnk));
  if (std::filesystem::exists(f.out))
    throw InvalidArgument(fmt::format("{} exists: give another --out (focus rounds are not resumed)", f.out));
  // A clear error without a driver, before any work; the timing thread leaves the cores to the
  // compile workers.
  runtime::block_on_waits(0);
  runtime::use_device(0);
  const runtime::DeviceInfo info = runtime::device_info(0);
  lower::DeviceLimits limits = device_limits(info);
  limits.f32_tensor_cores = f.f32_tensor_cores;
  const lower::Target target = lower::target_for_compute_capability(info.compute_capability());
  std::map<ir::DType, Model> models;
  for (ir::DType t : dtypes) {
    if (!f.model_path.empty()) {
      models[t] = load_model(f.model_path);
      continue;
    }
    auto choice = find_model("gemm", t, info.name, info.compute_capability());
    if (!choice) throw InvalidArgument(fmt::format("no GEMM {} model: give one with --model", ir::name(t)));
    models[t] = choice->model;
  }

  std::mt19937_64 rng(f.seed);
  // The next batch is ranked and compiled on the other cores while the GPU times this one.
  auto prepare = [&](ir::Gemm g, std::uint64_t seed) {
    Batch batch{g, {}};
    std::mt19937_64 pick(seed);
    // The model's top spread over tilings (the search's candidates, without its hedges): its
    // errors between tilings are what the next model needs data on.
    // With --kind-siblings the ranking also holds each kind's best sets, after the model's top.
    std::vector<Ranked> top =
        rank_gemm_space(g, limits, models.at(g.dtype), 8 * f.top, nullptr, f.kind_siblings > 0 ? per_split_pool : 0);
    // The model's best sets of the kinds its first choice is not (rank -1: not drawn from its top).
    const auto other_kinds = f.kind_siblings == 0 ? std::vector<Ranked>{} : best_of_other_kinds(top, size_t(f.kind_siblings));
    top.resize(std::min(top.size(), size_t(8 * f.top)));
    const auto ranked = spread_ranked_sets(top, size_t(f.top));
    std::vector<size_t> chosen;
    for (int i = 0; i < f.best && i < int(ranked.size()); ++i) chosen.push_back(size_t(i));
    std::vector<size_t> rest;
    for (size_t i = size_t(f.best); i < ranked.size(); ++i) rest.push_back(i);
    for (size_t i = rest.size(); i > 1; --i) std::swap(rest[i - 1], rest[pick() % i]);
    for (size_t i = 0;
         i < rest.size() && int(chosen.size()) < f.per_shape - sibling_count - int(other_kinds.size()); ++i)
      chosen.push_back(rest[i]);
    for (size_t i : chosen) batch.candidates.push_back({ranked[i].params, int(i), ranked[i].predicted_tflops, {}, {}});
    for (const Ranked& r : other_kinds)
      if (std::ranges::none_of(batch.candidates, [&](const Candidate& c) { return c.params == r.params; }))
        batch.candidates.push_back({r.params, -1, r.predicted_tflops, {}, {}});
    if (!ranked.empty()) {
      auto siblings = grid_split_siblings(g, ranked.front().params, limits, f.siblings);
      for (const lower::GemmParams& p : load_width_siblings(g, ranked.front().params, limits, f.load_siblings))
        siblings.push_back(p);
      // The model's best neighbours of its first choice, one of each kind of step first: the sets the
      // re-benchmark's last places are drawn from, where the model's errors decide what it times.
      if (f.neighbour_siblings > 0) {
        const Tiling first = tiling_of(ranked.front().params);
        const auto near = rank_gemm_neighbours(g, limits, models.at(g.dtype), ranked.front().params, neighbour_pool);
        for (const Ranked& r : pick_neighbours(first, near, size_t(f.neighbour_siblings))) siblings.push_back(r.params);
      }
      const Mlp& mlp = models.at(g.dtype).mlp;
      const std::vector<double> predicted =
          siblings.empty() ? std::vector<double>{} : mlp.predict(gemm_features(g, siblings, limits).data(), siblings.size());
      for (size_t i = 0; i < siblings.size(); ++i)  // rank -1: not drawn from the model's top
        if (std::ranges::none_of(batch.candidates, [&](const Candidate& c) { return c.params == siblings[i]; }))
          batch.candidates.push_back({siblings[i], -1, std::exp(predicted[i]), {}, {}});
    }
    std::vector<std::thread> workers;
    std::atomic<size_t> next{0};
    for (unsigned w = 0; w < std::max(1u, std::thread::hardware_concurrency()); ++w)
      workers.emplace_back([&] {
        for (size_t i; (i = next++) < batch.candidates.size();) {
          Candidate& c = batch.candidates[i];
          try {
            lower::GemmKernel k = lower::emit_gemm(g, c.params, target);
            lower::assemble(k.ptx, target, k.cubin);  // where ptxas fails, the driver's JIT takes the PTX
            c.kernel = std::move(k);
          } catch (const std::exception& e) {
            c.error = e.what();
          }
        }
      });
    for (auto& w : workers) w.join();
    return batch;
  };

  std::FILE* out = std::fopen(f.out.c_str(), "w");
  if (!out) throw InvalidArgument("cannot write " + f.out);
  std::fprintf(out,
               "# isaac-tune focus on %s: seed=%llu per-shape=%d best=%d kg-siblings=%d kind-siblings=%d "
               "load-siblings=%d neighbour-siblings=%d top=%d f32-tensor-cores=%d "
               "aligned-share=%g square-share=%g batched-share=%g batch-max=%lld m=%lld..%lld n=%lld..%lld "
               "k=%lld..%lld max-mnk=%g\n",
               info.name.c_str(), (unsigned long long)f.seed, f.per_shape, f.best, f.siblings, f.kind_siblings,
               f.load_siblings, f.neighbour_siblings, f.top, int(f.f32_tensor_cores), f.aligned_share, f.square_share, f.batched_share,
               (long long)f.batch_max, (long long)f.shapes.m_min, (long long)f.shapes.m_max,
               (long long)f.shapes.n_min, (long long)f.shapes.n_max, (long long)f.shapes.k_min,
               (long long)f.shapes.k_max, f.shapes.max_mnk);
  std::fprintf(out, "dtype,suite,m,n,k,at,bt,batch,params,status,median_ms,tflops,rank,predicted_tflops,reason,phase\n");
  std::signal(SIGINT, [](int) { interrupted = true; });
  std::signal(SIGTERM, [](int) { interrupted = true; });
  runtime::Stream stream;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Two inputs prepared ahead (searched, emitted, assembled) while the GPU times the current one: one
  // input's compilation takes longer than its timing.
  std::deque<std::future<Batch>> pending;
  auto prepare_next = [&] {
    const ir::Gemm g =
        random_problem(rng, dtypes, f.shapes, f.aligned_share, f.square_share, f.batched_share, f.batch_max);
    pending.push_back(std::async(std::launch::async, prepare, g, rng()));
  };
  prepare_next();
  prepare_next();
  std::size_t timed = 0, failed = 0, shapes = 0;
  while (!interrupted && elapsed() < f.seconds) {
    Batch batch = pending.front().get();
    pending.pop_front();
    prepare_next();
    const ir::Gemm& g = batch.problem;
    const std::size_t elem = ir::size_of(g.dtype);
    const std::size_t count = elem * std::size_t(g.batch);
    runtime::Buffer a(count * std::size_t(g.m * g.k)), b(count * std::size_t(g.k * g.n)),
        c(count * std::size_t(g.m * g.n));
    for (runtime::Buffer* buffer : {&a, &b, &c}) buffer->fill_bytes(0x3c);
    ++shapes;
    for (Candidate& cand : batch.candidates) {
      std::string status = "ok", reason;
      double ms = 0;
      if (!cand.kernel) {
        status = "compile", reason = cand.error;
      } else {
        try {
          CompiledGemm kernel(std::move(*cand.kernel), cand.params, lower::SplitMode::atomic, 0);
          ms = runtime::time_on_stream(
                   [&](const runtime::Stream& s) { kernel.run(g, c.ptr(), a.ptr(), b.ptr(), 1.0, 0.0, s); }, stream,
                   {.warmup = 1, .repeats = 3, .flush_l2 = true})
                   .median_ms;
        } catch (const DriverError& e) {
          status = "launch", reason = e.what();
        } catch (const std::exception& e) {
          status = "jit", reason = e.what();
        }
      }
      for (char& ch : reason)
        if (ch == '\n' || ch == '"') ch = ' ';
      const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k) * double(g.batch);
      const double tflops = status == "ok" ? flops / (ms * 1e-3) / 1e12 : 0;
      std::fprintf(out, "%s,random,%lld,%lld,%lld,%d,%d,%lld,\"%s\",%s,%s,%s,%d,%.3f,\"%s\",focus\n",
                   std::string(ir::name(g.dtype)).c_str(), (long long)g.m, (long long)g.n, (long long)g.k,
                   int(g.a_trans), int(g.b_trans), (long long)g.batch, cand.params.str().c_str(), status.c_str(),
                   status == "ok" ? fmt::format("{:.6f}", ms).c_str() : "",
                   status == "ok" ? fmt::format("{:.3f}", tflops).c_str() : "", cand.rank, cand.predicted,
                   reason.c_str());
      status == "ok" ? ++timed : ++failed;
      if (status == "launch") {  // the context is gone: every later launch would fail
        std::fclose(out);
        throw Error("the CUDA context was lost: " + reason);
      }
    }
    // A full disk shows here: stop rather than time kernels whose rows are lost.
    if (std::fflush(out) != 0 || std::ferror(out)) {
      std::fclose(out);
      throw Error(fmt::format("writing {} failed (is the disk full?); its last rows may be incomplete", f.out));
    }
    fmt::print(stderr, "\r  {} shapes, {} kernels timed ({:.1f}/s), {} failed, {:.0f} s of {:.0f}   ", shapes, timed,
               double(timed) / elapsed(), failed, elapsed(), f.seconds);
  }
  for (auto& p : pending) p.wait();
  if (std::fclose(out) != 0)
    throw Error(fmt::format("writing {} failed (is the disk full?); its last rows may be incomplete", f.out));
  fmt::print(stderr, "\nisaac-tune focus: {} kernels timed on {} shapes, {} failed, in {:.0f} s; wrote {}\n", timed,
             shapes, failed, elapsed(), f.out);
  return 0;
}

}  // namespace

void add_focus_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<FocusFlags>();
  auto* cmd = app.add_subcommand("focus", "time the model's own best sets on random GEMMs (data for the next model)");
  cmd->add_option("--template", flags->template_name, "gemm or conv (CONV: drawn uniformly where no CONV model exists)")
      ->capture_default_str();
  cmd->add_option("--out", flags->out, "CSV to write (a new file)")->required();
  cmd->add_option("--model", flags->model_path, "model file (default: the user's or the shipped model per dtype)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--dtypes", flags->dtypes, "comma-separated dtypes")->capture_default_str();
  cmd->add_option("--seconds", flags->seconds, "time budget")->capture_default_str();
  cmd->add_option("--per-shape", flags->per_shape, "sets timed per random input")->capture_default_str();
  cmd->add_option("--best", flags->best, "of which the model's very best (the rest drawn from its top)")
      ->capture_default_str();
  cmd->add_option("--kg-siblings", flags->siblings,
                  "GEMM: of which sets that differ from the model's first only in KG (KG = 1 first, then the nearest)")
      ->capture_default_str();
  cmd->add_option("--kind-siblings", flags->kind_siblings,
                  "of which the model's best sets of each kind of kernel (TC) other than its first's, this many "
                  "per kind (the bias of docs/tuning-history.md, rounds 35 and 41)")
      ->capture_default_str();
  cmd->add_option("--load-siblings", flags->load_siblings,
                  "of which sets that differ from the model's first only in the load widths (GEMM: VA and VB; "
                  "CONV: VI and VF), the nearest first")
      ->capture_default_str();
  cmd->add_option("--neighbour-siblings", flags->neighbour_siblings,
                  "of which the model's best neighbours of its first (one step of a tile, U or the split, or "
                  "another variant: the re-benchmark's neighbours), one of each kind of step first")
      ->capture_default_str();
  cmd->add_option("--top", flags->top, "the model's top sets the rest is drawn from")->capture_default_str();
  cmd->add_option("--seed", flags->seed, "random inputs and draws")->capture_default_str();
  const ShapeOptions gemm;
  const ConvShapeOptions conv;
  cmd->add_option("--max-mnk", flags->shapes.max_mnk, "GEMM: largest M*N*K")->capture_default_str();
  cmd->add_option("--m-min", flags->shapes.m_min, "GEMM: smallest M")->capture_default_str();
  cmd->add_option("--m-max", flags->shapes.m_max, "GEMM: largest M")->capture_default_str();
  cmd->add_option("--n-min", flags->shapes.n_min,
                  fmt::format("smallest N (GEMM: columns, default {}; CONV: images, default {})", gemm.n_min, conv.n_min));
  cmd->add_option("--n-max", flags->shapes.n_max,
                  fmt::format("largest N (default: GEMM {}, CONV {})", gemm.n_max, conv.n_max));
  cmd->add_option("--k-min", flags->shapes.k_min,
                  fmt::format("smallest K (GEMM: the reduction, default {}; CONV: filters, default {})", gemm.k_min,
                              conv.k_min));
  cmd->add_option("--k-max", flags->shapes.k_max,
                  fmt::format("largest K (default: GEMM {}, CONV {})", gemm.k_max, conv.k_max));
  cmd->add_option("--c-min", flags->conv_shapes.c_min, "CONV: fewest input channels C")->capture_default_str();
  cmd->add_option("--c-max", flags->conv_shapes.c_max, "CONV: most input channels C")->capture_default_str();
  cmd->add_option("--layouts", flags->layouts,
                  "CONV: the image layouts drawn, each with its filter layout (NCHW, CHWN, NHWC; default all three)")
      ->delimiter(',');
  cmd->add_option("--pq-min", flags->conv_shapes.pq_min, "CONV: smallest output height P and width Q")
      ->capture_default_str();
  cmd->add_option("--pq-max", flags->conv_shapes.pq_max, "CONV: largest output height P and width Q")
      ->capture_default_str();
  cmd->add_option("--aligned-share", flags->aligned_share,
                  "share of the inputs with M, N and K (CONV: N, C and K) rounded up to multiples of 8")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--square-share", flags->square_share, "share of the inputs with M = N = K")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--batched-share", flags->batched_share,
                  "GEMM: share of the inputs that are batches of GEMMs of one shape (needs --batch-max)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--batch-max", flags->batch_max,
                  "GEMM: the largest batch count (log-uniform from 2; --max-mnk caps the whole batch)")
      ->capture_default_str();
  cmd->add_option("--winograd-share", flags->winograd_share,
                  "CONV: share of the inputs that the Winograd kernels take (3x3 or 5x5, stride 1, f32/f64), half "
                  "of whose sets are uniform draws from winograd_space and winograd_product_space in turn")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--f32-tensor-cores", flags->f32_tensor_cores,
               "f32: also the TC=1 and TC=2 sets (three TF32 products per term), as TuningOptions::f32_tensor_cores");
  cmd->callback([flags, cmd, &exit_code] {
    auto refuse = [cmd](std::initializer_list<const char*> names, const char* other_template) {
      for (const char* name : names)
        if (cmd->count(name))
          throw InvalidArgument(fmt::format("{} is for {} rounds (--template {})", name, other_template, other_template));
    };
    if (flags->template_name == "gemm") {
      refuse({"--c-min", "--c-max", "--pq-min", "--pq-max", "--layouts"}, "conv");
      if (flags->winograd_share != 0) throw InvalidArgument("--winograd-share is for CONV rounds: GEMM has no Winograd");
      exit_code = run_focus(*flags);
    } else if (flags->template_name == "conv") {
      refuse({"--kg-siblings", "--m-min", "--m-max", "--max-mnk", "--square-share", "--batched-share",
              "--batch-max"},
             "gemm");
      ConvFocusFlags c;
      c.out = flags->out, c.model_path = flags->model_path, c.seconds = flags->seconds, c.per_shape = flags->per_shape, c.top = flags->top;
      c.best = flags->best, c.seed = flags->seed, c.winograd_share = flags->winograd_share;
      c.kind_siblings = flags->kind_siblings;
      c.load_siblings = flags->load_siblings;
      c.neighbour_siblings = flags->neighbour_siblings;
      for (const std::string& layout : flags->layouts) c.layouts.push_back(ir::parse_image_layout(layout));
      c.f32_tensor_cores = flags->f32_tensor_cores;
      c.shapes = flags->conv_shapes;
      c.shapes.aligned_share = flags->aligned_share;
      // N and K are options of both templates, with defaults of each: CONV takes them where given.
      for (auto [name, from, to] : {std::tuple{"--n-min", flags->shapes.n_min, &c.shapes.n_min},
                                    {"--n-max", flags->shapes.n_max, &c.shapes.n_max},
                                    {"--k-min", flags->shapes.k_min, &c.shapes.k_min},
                                    {"--k-max", flags->shapes.k_max, &c.shapes.k_max}})
        if (cmd->count(name)) *to = from;
      c.dtypes = flags->dtypes == "f32,f16,f64" ? "f32,f16" : flags->dtypes;
      exit_code = run_conv_focus(c);
    } else {
      throw InvalidArgument(fmt::format("--template {}: use gemm or conv", flags->template_name));
    }
  });
}

}  // namespace isaac::tune::cli
