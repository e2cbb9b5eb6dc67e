#include "focus_conv.hpp"

#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tune/model_file.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/load_siblings.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/spread.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <thread>

namespace isaac::tune::cli {

namespace {

double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1p-53; }

std::int64_t log_uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::int64_t(std::llround(std::exp(std::log(lo) + uniform01(rng) * (std::log(hi) - std::log(lo)))));
}

// N, C, K, P and Q log-uniform in the ranges of `shapes` (by default like the paper's DeepBench
// convolutions, bench/problems/conv_problems.csv), under its flops cap. With `winograd`, only
// convolutions the WG=1 kernels take: 3 x 3 or 5 x 5, stride and dilation 1, f32 or f64.
ir::Conv random_conv(std::mt19937_64& rng, std::vector<ir::DType> dtypes, const ConvShapeOptions& shapes,
                     bool winograd, std::span<const std::pair<ir::ImageLayout, ir::FilterLayout>> layouts) {
  static const std::pair<int, int> filters[] = {{1, 1}, {3, 3}, {3, 3}, {3, 3}, {5, 5}, {7, 7}, {5, 20}, {3, 10}, {5, 10}};
  static const std::pair<int, int> winograd_filters[] = {{3, 3}, {3, 3}, {5, 5}};
  if (winograd) std::erase_if(dtypes, [](ir::DType t) { return t != ir::DType::f32 && t != ir::DType::f64; });
  for (;;) {
    std::int64_t n = log_uniform(rng, double(shapes.n_min), double(shapes.n_max)),
                 c = log_uniform(rng, double(shapes.c_min), double(shapes.c_max)),
                 k = log_uniform(rng, double(shapes.k_min), double(shapes.k_max));
    align_conv_extents(shapes, rng, n, c, k);
    const std::int64_t p = log_uniform(rng, double(shapes.pq_min), double(shapes.pq_max)),
                       q = log_uniform(rng, double(shapes.pq_min), double(shapes.pq_max));
    const auto [r, s] = winograd ? winograd_filters[rng() % std::size(winograd_filters)]
                                 : filters[rng() % std::size(filters)];
    const std::int64_t stride = !winograd && uniform01(rng) < 0.2 ? 2 : 1;
    const std::int64_t dilation = !winograd && uniform01(rng) < 0.1 ? 2 : 1;
    const std::int64_t pad = uniform01(rng) < 0.5 ? std::min(r, s) / 2 : 0;
    // The input that gives P x Q outputs.
    const std::int64_t h = (p - 1) * stride + dilation * (r - 1) + 1 - 2 * pad;
    const std::int64_t w = (q - 1) * stride + dilation * (s - 1) + 1 - 2 * pad;
    if (h < 1 || w < 1) continue;
    if (2.0 * double(n * p * q) * double(k) * double(c * r * s) > shapes.max_flops) continue;
    const auto [il, fl] = layouts[rng() % layouts.size()];
    return ir::dense_conv(dtypes[rng() % dtypes.size()], n, c, h, w, k, r, s, stride, pad, dilation, il, fl);
  }
}

struct Candidate {
  lower::ConvParams params;
  int rank = -1;  // -1: drawn uniformly
  double predicted = 0;
  std::optional<lower::ConvKernel> kernel;
  std::string error;
};

}  // namespace

int run_conv_focus(const ConvFocusFlags& f) {
  std::vector<ir::DType> dtypes;
  for (size_t pos = 0; pos <= f.dtypes.size();) {
    const size_t comma = std::min(f.dtypes.find(',', pos), f.dtypes.size());
    dtypes.push_back(ir::parse_dtype(f.dtypes.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  f.shapes.validate();
  if (!(f.winograd_share >= 0 && f.winograd_share <= 1))
    throw InvalidArgument(fmt::format("--winograd-share {}: give a share between 0 and 1", f.winograd_share));
  if (f.winograd_share > 0 &&
      std::ranges::none_of(dtypes, [](ir::DType t) { return t == ir::DType::f32 || t == ir::DType::f64; }))
    throw InvalidArgument(fmt::format("--winograd-share needs f32 or f64 among --dtypes {}: the WG=1 kernels take "
                                      "no other dtype",
                                      f.dtypes));
  if (f.f32_tensor_cores && std::ranges::find(dtypes, ir::DType::f32) == dtypes.end())
    throw InvalidArgument(fmt::format("--f32-tensor-cores needs f32 among --dtypes {}: it lets f32 alone run on the "
                                      "tensor cores",
                                      f.dtypes));
  if (f.kind_siblings < 0 || f.best + 2 * f.kind_siblings > f.per_shape)
    throw InvalidArgument(fmt::format("--per-shape {} --best {} --kind-siblings {}: need best + 2 x kind-siblings <= "
                                      "per-shape (two other kinds of kernel at most)",
                                      f.per_shape, f.best, f.kind_siblings));
  if (f.load_siblings < 0 || f.neighbour_siblings < 0 ||
      f.best + 2 * f.kind_siblings + f.load_siblings + f.neighbour_siblings > f.per_shape)
    throw InvalidArgument(fmt::format("--per-shape {} --best {} --kind-siblings {} --load-siblings {} --neighbour-siblings "
                                      "{}: need best + 2 x kind-siblings + load-siblings + neighbour-siblings <= per-shape",
                                      f.per_shape, f.best, f.kind_siblings, f.load_siblings, f.neighbour_siblings));
  std::vector<std::pair<ir::ImageLayout, ir::FilterLayout>> layouts;
  for (auto pair : {std::pair{ir::ImageLayout::nchw, ir::FilterLayout::kcrs},
                    {ir::ImageLayout::chwn, ir::FilterLayout::crsk},
                    {ir::ImageLayout::nhwc, ir::FilterLayout::krsc}})
    if (f.layouts.empty() || std::ranges::find(f.layouts, pair.first) != f.layouts.end()) layouts.push_back(pair);
  if (std::filesystem::exists(f.out))
    throw InvalidArgument(fmt::format("{} exists: give another --out (focus rounds are not resumed)", f.out));
  runtime::block_on_waits(0);  // the timing thread leaves the cores to the compile workers
  runtime::use_device(0);
  const runtime::DeviceInfo info = runtime::device_info(0);
  lower::DeviceLimits limits = device_limits(info);
  limits.f32_tensor_cores = f.f32_tensor_cores;
  const lower::Target target = lower::target_for_compute_capability(info.compute_capability());
  std::map<ir::DType, std::optional<ModelChoice>> models;
  for (ir::DType t : dtypes)
    models[t] = f.model_path.empty() ? find_model("conv", t, info.name, info.compute_capability())
                                     : ModelChoice{load_model(f.model_path), f.model_path, ""};

  std::mt19937_64 rng(f.seed);
  auto prepare = [&](ir::Conv v, bool winograd, std::uint64_t seed) {
    std::pair<ir::Conv, std::vector<Candidate>> batch{v, {}};
    std::mt19937_64 pick(seed);
    // Half of a Winograd input's sets drawn uniformly from its spaces, WG=1 and WG=2 in turn: data on
    // the Winograd sets the model does not rank first yet.
    std::vector<std::vector<lower::ConvParams>> winograd_sets;
    if (winograd)
      for (auto space : {lower::winograd_space(v, {}, limits), lower::winograd_product_space(v, {}, limits)})
        if (!space.empty()) winograd_sets.push_back(std::move(space));
    const int drawn = winograd_sets.empty() ? 0 : f.per_shape / 2;
    for (int i = 0; i < drawn; ++i) {
      const auto& space = winograd_sets[size_t(i) % winograd_sets.size()];
      batch.second.push_back({space[pick() % space.size()], -1, 0, {}, {}});
    }
    const int per_shape = f.per_shape - drawn;
    if (const auto& model = models.at(v.dtype)) {
      // The model's top spread over tilings (the search's candidates, without its hedges): its
      // errors between tilings are what the next model needs data on.
      // With kind siblings the ranking also holds each kind's best sets, after the model's top.
      std::vector<RankedConv> top = rank_conv_space(v, {}, limits, model->model, 8 * f.top, nullptr,
                                                    f.kind_siblings > 0 ? per_split_pool : 0);
      const auto other_kinds = f.kind_siblings == 0 ? std::vector<RankedConv>{}
                                                    : best_of_other_kinds(top, std::size_t(f.kind_siblings));
      top.resize(std::min(top.size(), std::size_t(8 * f.top)));
      const auto ranked = spread_ranked_sets(top, std::size_t(f.top));
      std::vector<size_t> order(ranked.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      for (size_t i = order.size(); i > size_t(f.best) + 1; --i) std::swap(order[i - 1], order[size_t(f.best) + pick() % (i - size_t(f.best))]);
      const int from_top = f.per_shape - int(other_kinds.size()) - f.load_siblings - f.neighbour_siblings;
      for (size_t i = 0; i < order.size() && int(batch.second.size()) < from_top; ++i)
        batch.second.push_back({ranked[order[i]].params, int(order[i]), ranked[order[i]].predicted_tflops, {}, {}});
      for (const RankedConv& r : other_kinds)  // rank -1: not drawn from the model's top
        if (std::ranges::none_of(batch.second, [&](const Candidate& c) { return c.params == r.params; }))
          batch.second.push_back({r.params, -1, r.predicted_tflops, {}, {}});
      std::vector<lower::ConvParams> siblings;
      if (!ranked.empty()) {
        const lower::ConvParams& first = ranked.front().params;
        siblings = load_width_siblings(v, first, limits, f.load_siblings);
        if (f.neighbour_siblings > 0) {
          const auto near = rank_conv_neighbours(v, {}, limits, model->model, first, neighbour_pool);
          for (const RankedConv& r : pick_neighbours(tiling_of(first), near, std::size_t(f.neighbour_siblings)))
            siblings.push_back(r.params);
        }
      }
      const std::vector<double> predicted =
          siblings.empty() ? std::vector<double>{}
                           : model->model.mlp.predict(conv_features(v, siblings, limits).data(), siblings.size());
      for (size_t i = 0; i < siblings.size(); ++i)
        if (std::ranges::none_of(batch.second, [&](const Candidate& c) { return c.params == siblings[i]; }))
          batch.second.push_back({siblings[i], -1, std::exp(predicted[i]), {}, {}});
    } else {
      const auto space = lower::conv_space(v, {}, limits);
      for (int i = 0; i < per_shape && !space.empty(); ++i) batch.second.push_back({space[pick() % space.size()], -1, 0, {}, {}});
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < std::max(1u, std::thread::hardware_concurrency()); ++w)
      workers.emplace_back([&] {
        for (size_t i; (i = next++) < batch.second.size();) try {
            lower::ConvKernel k = lower::emit_conv(v, batch.second[i].params, target);
            lower::assemble(k.ptx, target, k.cubin);  // where ptxas fails, the driver's JIT takes the PTX
            batch.second[i].kernel = std::move(k);
          } catch (const std::exception& e) {
            batch.second[i].error = e.what();
          }
      });
    for (auto& w : workers) w.join();
    return batch;
  };

  std::string layout_names;
  for (auto [il, fl] : layouts)
    layout_names += (layout_names.empty() ? "" : ";") + std::string(ir::name(il)) + "/" + std::string(ir::name(fl));
  std::FILE* out = std::fopen(f.out.c_str(), "w");
  if (!out) throw InvalidArgument("cannot write " + f.out);
  const ConvShapeOptions& o = f.shapes;
  std::fprintf(out,
               "# isaac-tune focus --template conv on %s: seed=%llu per-shape=%d kind-siblings=%d load-siblings=%d "
               "neighbour-siblings=%d "
               "layouts=%s f32-tensor-cores=%d "
               "winograd-share=%g aligned-share=%g n=%lld..%lld c=%lld..%lld k=%lld..%lld pq=%lld..%lld max-flops=%g\n",
               info.name.c_str(), (unsigned long long)f.seed, f.per_shape, f.kind_siblings, f.load_siblings,
               f.neighbour_siblings,
               layout_names.c_str(), int(f.f32_tensor_cores),
               f.winograd_share, o.aligned_share, (long long)o.n_min,
               (long long)o.n_max, (long long)o.c_min, (long long)o.c_max, (long long)o.k_min, (long long)o.k_max,
               (long long)o.pq_min, (long long)o.pq_max, o.max_flops);
  std::fprintf(out, "dtype,suite,layout,n,c,h,w,k,r,s,stride,pad,dilation,params,status,median_ms,tflops,rank,"
                    "predicted_tflops,shared_bytes,reason,phase\n");
  runtime::Stream stream;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Two inputs prepared ahead (searched, emitted, assembled) while the GPU times the current one: one
  // input's compilation takes longer than its timing.
  std::deque<std::future<std::pair<ir::Conv, std::vector<Candidate>>>> pending;
  auto prepare_next = [&] {
    const bool winograd = uniform01(rng) < f.winograd_share;
    const ir::Conv v = random_conv(rng, dtypes, f.shapes, winograd, layouts);
    pending.push_back(std::async(std::launch::async, prepare, v, winograd, rng()));
  };
  prepare_next();
  prepare_next();
  std::size_t timed = 0, failed = 0, shapes = 0;
  while (elapsed() < f.seconds) {
    auto [v, candidates] = pending.front().get();
    pending.pop_front();
    prepare_next();
    const std::size_t elem = ir::size_of(v.dtype);
    runtime::Buffer in(elem * std::size_t(v.n * v.c * v.h * v.w)), filter(elem * std::size_t(v.k * v.c * v.r * v.s)),
        output(elem * std::size_t(v.n * v.k * v.p * v.q));
    for (runtime::Buffer* b : {&in, &filter, &output}) b->fill_bytes(0x3c);
    ++shapes;
    for (Candidate& cand : candidates) {
      std::string status = "ok", reason;
      double ms = 0;
      // The kernel's own shared memory says which ring it ran (the dataset reader checks it).
      const std::string shared_bytes = cand.kernel ? std::to_string(cand.kernel->shared_bytes) : "";
      if (!cand.kernel) {
        status = "compile", reason = cand.error;
      } else {
        try {
          CompiledConv conv(v, std::move(*cand.kernel), cand.params);
          ms = runtime::time_on_stream(
                   [&](const runtime::Stream& s) { conv.run(output.ptr(), in.ptr(), filter.ptr(), 1.0, 0.0, s); },
                   stream, {.warmup = 1, .repeats = 3, .flush_l2 = true})
                   .median_ms;
        } catch (const DriverError& e) {
          status = "launch", reason = e.what();
        } catch (const std::exception& e) {
          status = "jit", reason = e.what();
        }
      }
      for (char& ch : reason)
        if (ch == '\n' || ch == '"') ch = ' ';
      std::fprintf(out, "%s,random,%s/%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,\"%s\",%s,%s,%s,%d,%.3f,%s,\"%s\",%s\n",
                   std::string(ir::name(v.dtype)).c_str(), std::string(ir::name(v.input_layout)).c_str(),
                   std::string(ir::name(v.filter_layout)).c_str(), (long long)v.n, (long long)v.c, (long long)v.h,
                   (long long)v.w, (long long)v.k, (long long)v.r, (long long)v.s, (long long)v.stride_h,
                   (long long)v.pad_h, (long long)v.dilation_h, cand.params.str().c_str(), status.c_str(),
                   status == "ok" ? fmt::format("{:.6f}", ms).c_str() : "",
                   status == "ok" ? fmt::format("{:.3f}", lower::conv_flops(v) / (ms * 1e-3) / 1e12).c_str() : "",
                   cand.rank, cand.predicted, shared_bytes.c_str(), reason.c_str(),
                   cand.rank >= 0 ? "focus" : cand.params.wg ? "winograd" : "uniform");
      status == "ok" ? ++timed : ++failed;
      if (status == "launch") {
        std::fclose(out);
        throw Error("the CUDA context was lost: " + reason);
      }
    }
    // A full disk shows here: stop rather than time kernels whose rows are lost.
    if (std::fflush(out) != 0 || std::ferror(out)) {
      std::fclose(out);
      throw Error(fmt::format("writing {} failed (is the disk full?); its last rows may be incomplete", f.out));
    }
    fmt::print(stderr, "\r  {} convolutions, {} kernels timed ({:.1f}/s), {} failed, {:.0f} s of {:.0f}   ", shapes,
               timed, double(timed) / elapsed(), failed, elapsed(), f.seconds);
  }
  for (auto& p : pending) p.wait();
  if (std::fclose(out) != 0)
    throw Error(fmt::format("writing {} failed (is the disk full?); its last rows may be incomplete", f.out));
  fmt::print(stderr, "\nisaac-tune focus --template conv: {} kernels timed on {} convolutions, {} failed, in {:.0f} s; "
                     "wrote {}\n",
             timed, shapes, failed, elapsed(), f.out);
  return 0;
}

}  // namespace isaac::tune::cli
