#include "search.hpp"
#include "target_option.hpp"

#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/tune/bucket.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/prune.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/spread.hpp>
#include <isaac/tuning.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace isaac::tune::cli {

namespace {

struct SearchFlags {
  std::string template_name = "gemm";
  std::vector<std::int64_t> sizes;  // GEMM: M N K; CONV: N C H W K R S
  std::string layout, dtype = "f32", model_path, device = "NVIDIA H100 80GB HBM3", search = "model";
  std::int64_t stride = 1, pad = 0, dilation = 1, batch = 1;
  int compute_capability = 90, top = 10, budget = 40;
  bool gpu = false, f32_tensor_cores = false;
  std::vector<std::string> show;  // parameter sets to place in the model's ranking
};

// Without a GPU, annealing shows what it would walk: the pruned list, with each set's figures.
void show_pruned(const ir::Gemm& g, const lower::DeviceLimits& limits) {
  PruneReport report;
  const auto list = prune_gemm_space(g, limits, {}, &report);
  const std::size_t start = best_balanced(list);
  fmt::print("{}: {} of {} legal sets kept over {} occupancy levels in {:.1f} ms (H100 multiprocessors)\n",
             ir::to_string(g), report.kept, report.legal_sets, report.occupancy_levels, report.prune_ms);
  fmt::print("  {:>4} {:>6} {:>7} {:>7} {:>7} {:>7}  {}\n", "#", "warps", "smem", "reg", "work", "util", "parameters");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Resources& r = list[i].resources;
    fmt::print("  {:>4} {:>6} {:>7.1f} {:>7.2f} {:>7.0f} {:>7.3f}  {}{}\n", i, r.warps_per_sm, r.shared_reuse,
               r.register_reuse, r.work_per_thread, r.utilisation, list[i].params.str(),
               i == start ? "  <- annealing starts here" : "");
  }
}

lower::DeviceLimits limits_of(const SearchFlags& f) {
  lower::DeviceLimits limits;
  limits.sm = f.compute_capability;
  limits.f32_tensor_cores = f.f32_tensor_cores;
  return limits;
}

struct LoadedModel {
  Model model;
  std::string source;
};

LoadedModel search_model(const SearchFlags& f, ir::DType dtype) {
  if (!f.model_path.empty()) return {load_model(f.model_path), f.model_path};
  auto choice = find_model(f.template_name, dtype, f.device, f.compute_capability);
  if (!choice)
    throw InvalidArgument(fmt::format("no {} {} model ships with this isaac and none is in {}: give one with --model",
                                      f.template_name, ir::name(dtype), cache_directory()));
  return {std::move(choice->model), std::move(choice->source)};
}

// A feature's value in a row of `names`.
double feature(const std::vector<std::string>& names, const std::vector<double>& x, std::string_view name) {
  return x[std::size_t(std::ranges::find(names, name) - names.begin())];
}

// What the occupancy features say of a set (the models' blind spots before 0.1.25, CONV, and 0.1.26, GEMM).
std::string occupancy(const std::vector<std::string>& names, const std::vector<double>& x) {
  return fmt::format("{:.0f} blocks per SM, its waves {:.0f}% full", std::exp2(feature(names, x, "log2_resident_blocks")),
                     100 * feature(names, x, "wave_fill"));
}

// A set that runs a deep TMA pipeline holds one block per SM, whatever the standard pipeline's count
// (tune::gemm_wave_fill).
std::string gemm_occupancy(const ir::Gemm& g, const lower::GemmParams& p, const lower::DeviceLimits& limits,
                           const std::vector<double>& x) {
  if (!lower::gemm_runs_deep_pipeline(g, p, limits)) return occupancy(gemm_feature_names(), x);
  return fmt::format("a deep pipeline, one block per SM, its waves {:.0f}% full",
                     100 * feature(gemm_feature_names(), x, "wave_fill"));
}

// A CONV set also says how it copies.
std::string conv_occupancy(const lower::ConvParams&, const std::vector<double>& x) {
  const auto& names = conv_feature_names();
  if (feature(names, x, "wg") != 0) return "a Winograd kernel";
  return fmt::format("{} copies, {}", feature(names, x, "tma") != 0 ? "TMA" : "thread", occupancy(names, x));
}

// The candidates --gpu would time first, from `pool` (the model's best, spread over tilings and hedged:
// tune/spread.hpp; the neighbours of the fastest follow once they are timed: tune/neighbours.hpp), then
// the sets of --show against that ranking: each one's legality, predicted speed against the first
// choice's, and its place in `pool` (a set outside it is never timed).
template <class Params>
void print_ranking(const SearchFlags& f, const std::string& problem, const std::string& heading,
                   const std::vector<RankedSet<Params>>& pool,
                   const std::function<Params(std::string_view)>& parse,
                   const std::function<lower::Legality(const Params&)>& check,
                   const std::function<std::vector<double>(const Params&)>& features, const Model& model,
                   const std::function<std::string(const Params&, const std::vector<double>&)>& describe = {}) {
  if (pool.empty())
    throw InvalidArgument(fmt::format("no legal parameter set for {} on sm_{}", problem, f.compute_capability));
  const std::size_t neighbours = refinements_for(std::size_t(f.top));
  const auto ranked = candidate_sets(pool, size_t(f.top), size_t(f.top) - neighbours, neighbours);
  fmt::print("{}", heading);
  for (size_t i = 0; i < ranked.size(); ++i)
    fmt::print("  {:>3}  {:>8.2f} TFLOP/s predicted  {}\n", i + 1, ranked[i].predicted_tflops, ranked[i].params.str());
  if (neighbours > 0)
    fmt::print("  then, when they are timed, the model's best {} neighbours of the fastest of these (a step of one "
               "tile, U or the split, or another variant of its tiling)\n",
               neighbours);
  for (const std::string& text : f.show) {
    const Params p = parse(text);
    const lower::Legality legal = check(p);
    if (!legal) {
      fmt::print("  {}: illegal here: {}\n", p.str(), legal.reason);
      continue;
    }
    const std::vector<double> x = features(p);
    const double tflops = std::exp(model.mlp.predict(x.data(), 1).front());
    const auto at = std::ranges::find_if(pool, [&](const RankedSet<Params>& r) { return r.params == p; });
    const std::string place =
        at == pool.end() ? fmt::format("not among the {} sets the candidates are drawn from", pool.size())
                         : fmt::format("{} of the {} sets the candidates are drawn from", at - pool.begin() + 1, pool.size());
    fmt::print("  {}: predicted {:.2f} TFLOP/s, {:.3f} of the first choice; {}{}\n", p.str(), tflops,
               tflops / ranked.front().predicted_tflops, place, describe ? "; " + describe(p, x) : "");
  }
}

int run_gemm_search(const SearchFlags& f) {
  if (f.sizes.size() != 3) throw InvalidArgument(fmt::format("a GEMM takes three sizes, M N K; got {}", f.sizes.size()));
  const std::string layout = f.layout.empty() ? "NN" : f.layout;
  if (layout.size() != 2 || layout.find_first_not_of("NT") != std::string::npos)
    throw InvalidArgument(fmt::format("--layout {}: use NN, NT, TN or TT", layout));
  if (f.batch < 1) throw InvalidArgument(fmt::format("--batch {}: a batched GEMM has at least one", f.batch));
  const ir::Gemm g = ir::dense_gemm(ir::parse_dtype(f.dtype), f.sizes[0], f.sizes[1], f.sizes[2], layout[0] == 'T',
                                    layout[1] == 'T', f.batch);
  const Search search = parse_search(f.search);
  if (!f.show.empty() && (f.gpu || search != Search::model))
    throw InvalidArgument("--show places sets in the model's ranking: not with --gpu or --search annealing/autotune");
  if (f.gpu) {
    TuningOptions options;
    options.search = search;
    options.top_k = f.top;
    options.anneal_budget = f.budget;
    options.f32_tensor_cores = f.f32_tensor_cores;
    const GemmDecision d = choose_gemm(g, options);
    fmt::print("{}\n  {}\n  by {}; predicted {:.2f} TFLOP/s, measured {:.4f} ms = {:.2f} TFLOP/s\n", ir::to_string(g),
               d.params.str(), d.how, d.predicted_tflops, d.measured_ms,
               2.0 * double(g.m) * double(g.n) * double(g.k) / (d.measured_ms * 1e-3) / 1e12);
    fmt::print("  {} kernels timed; search: {} legal sets, enumerated in {:.1f} ms, ranked by the model in {:.1f} ms\n",
               d.timed, d.search.legal_sets, d.search.enumerate_ms, d.search.evaluate_ms);
    return 0;
  }
  const lower::DeviceLimits limits = limits_of(f);
  if (search == Search::annealing) {
    show_pruned(g, limits);
    return 0;
  }
  if (search == Search::autotune) fmt::print("bucket: {}\n", gemm_bucket(g));
  const LoadedModel m = search_model(f, g.dtype);
  SearchReport report;
  const auto pool = rank_gemm_space(g, limits, m.model, 32 * (f.top + 8), &report, per_split_pool);
  print_ranking<lower::GemmParams>(
      f, ir::to_string(g),
      fmt::format("{} with {} (trained on {}):\n  {} legal sets, enumerated in {:.1f} ms, ranked by the model in "
                  "{:.1f} ms (one core); its best, one per tiling (where its first splits K, the last three split it "
                  "less; where these lack a kind of kernel (TC) that it rates within 15% of its first, its best of "
                  "that kind is among them):\n",
                  ir::to_string(g), m.source, m.model.device, report.legal_sets, report.enumerate_ms,
                  report.evaluate_ms),
      pool, lower::parse_gemm_params, [&](const lower::GemmParams& p) { return lower::check_gemm(g, p, limits); },
      [&](const lower::GemmParams& p) { return gemm_features(g, p, limits); }, m.model,
      [&](const lower::GemmParams& p, const std::vector<double>& x) { return gemm_occupancy(g, p, limits, x); });
  return 0;
}

int run_conv_search(const SearchFlags& f) {
  if (f.sizes.size() != 7)
    throw InvalidArgument(fmt::format("a CONV takes seven sizes, N C H W K R S; got {}", f.sizes.size()));
  if (f.gpu || f.search != "model")
    throw InvalidArgument("--template conv ranks with the model alone (no --gpu, no --search): isaac-bench-conv tuned "
                          "times its candidates");
  const std::string layout = f.layout.empty() ? "CHWN/CRSK" : f.layout;
  const auto slash = layout.find('/');
  if (slash == std::string::npos)
    throw InvalidArgument(fmt::format("--layout {}: give the image and filter layouts, e.g. CHWN/CRSK, NCHW/KCRS or "
                                      "NHWC/KRSC",
                                      layout));
  if (f.stride < 1 || f.dilation < 1 || f.pad < 0)
    throw InvalidArgument(fmt::format("--stride {}, --dilation {}, --pad {}: stride and dilation at least 1, padding "
                                      "at least 0",
                                      f.stride, f.dilation, f.pad));
  const ir::Conv c = ir::dense_conv(ir::parse_dtype(f.dtype), f.sizes[0], f.sizes[1], f.sizes[2], f.sizes[3], f.sizes[4],
                                    f.sizes[5], f.sizes[6], f.stride, f.pad, f.dilation,
                                    ir::parse_image_layout(layout.substr(0, slash)),
                                    ir::parse_filter_layout(layout.substr(slash + 1)));
  if (c.p < 1 || c.q < 1)
    throw InvalidArgument(fmt::format("the {} x {} filter (dilation {}) does not fit the {} x {} input padded by {}: no "
                                      "output",
                                      c.r, c.s, f.dilation, c.h, c.w, f.pad));
  const lower::DeviceLimits limits = limits_of(f);
  const lower::ConvEpilogue epilogue{};
  const LoadedModel m = search_model(f, c.dtype);
  SearchReport report;
  const auto pool = rank_conv_space(c, epilogue, limits, m.model, 32 * (f.top + 8), &report, per_split_pool);
  print_ranking<lower::ConvParams>(
      f, ir::to_string(c),
      fmt::format("{} with {} (trained on {}):\n  {} legal sets (direct and Winograd), enumerated in {:.1f} ms, "
                  "ranked by the model in {:.1f} ms (one core); its best, one per tiling (hedged as for GEMM; with a "
                  "GPU, the Winograd sweep winners are timed besides):\n",
                  ir::to_string(c), m.source, m.model.device, report.legal_sets, report.enumerate_ms,
                  report.evaluate_ms),
      pool, lower::parse_conv_params,
      [&](const lower::ConvParams& p) { return lower::check_conv(c, p, epilogue, limits); },
      [&](const lower::ConvParams& p) { return conv_features(c, p, limits); }, m.model,
      conv_occupancy);
  return 0;
}

int run_search(const SearchFlags& f) {
  target_option(f.compute_capability, "--compute-capability");
  if (f.top < 1) throw InvalidArgument(fmt::format("--top {}: at least 1", f.top));
  for (std::int64_t size : f.sizes)
    if (size < 1) throw InvalidArgument(fmt::format("size {}: every size must be at least 1", size));
  if (f.template_name == "conv") {
    if (f.batch != 1) throw InvalidArgument("--batch is for GEMMs: a convolution's batch is its N");
    return run_conv_search(f);
  }
  if (f.stride != 1 || f.pad != 0 || f.dilation != 1)
    throw InvalidArgument("--stride, --pad and --dilation are for convolutions (--template conv)");
  return run_gemm_search(f);
}

}  // namespace

void add_search_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SearchFlags>();
  auto* cmd = app.add_subcommand("search", "rank the whole legal space of a GEMM or a convolution with the model, or "
                                           "show the pruned list that annealing walks (with --gpu: run the GEMM search)");
  cmd->add_option("sizes", flags->sizes, "GEMM: M N K; CONV (--template conv): N C H W K R S")->required();
  cmd->add_option("--template", flags->template_name, "gemm or conv")
      ->check(CLI::IsMember({"gemm", "conv"}))
      ->capture_default_str();
  cmd->add_option("--layout", flags->layout,
                  "GEMM: NN, NT, TN or TT (BLAS column-major; default NN); CONV: image/filter, e.g. CHWN/CRSK "
                  "(default), NCHW/KCRS or NHWC/KRSC");
  cmd->add_option("--dtype", flags->dtype, "f16, f32 or f64")->capture_default_str();
  cmd->add_option("--batch", flags->batch, "GEMM: how many GEMMs of these sizes, one grid")->capture_default_str();
  cmd->add_option("--stride", flags->stride, "CONV: stride")->capture_default_str();
  cmd->add_option("--pad", flags->pad, "CONV: padding")->capture_default_str();
  cmd->add_option("--dilation", flags->dilation, "CONV: dilation")->capture_default_str();
  cmd->add_option("--model", flags->model_path, "model file (default: the user's or the shipped model)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--device", flags->device, "the device to pick a model for, without --gpu")->capture_default_str();
  cmd->add_option("--compute-capability", flags->compute_capability, "e.g. 90, without --gpu")->capture_default_str();
  cmd->add_option("--top", flags->top, "how many of the best to list (with --gpu: to re-benchmark)")
      ->capture_default_str();
  cmd->add_option("--show", flags->show,
                  "a parameter set (e.g. a brute-force winner) to place in the model's ranking: its predicted "
                  "TFLOP/s against the first choice's, and whether the candidates can include it (repeatable)");
  cmd->add_option("--search", flags->search, "GEMM: model, annealing or autotune (docs/searches.md)")
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget, "annealing: kernels timed at most, with --gpu")->capture_default_str();
  cmd->add_flag("--gpu", flags->gpu, "GEMM: run the search on the GPU (time its candidates) and keep the fastest");
  cmd->add_flag("--f32-tensor-cores", flags->f32_tensor_cores,
                "f32: also the TC=1 and TC=2 sets (three TF32 products per term; TuningOptions::f32_tensor_cores)");
  cmd->callback([flags, &exit_code] { exit_code = run_search(*flags); });
}

}  // namespace isaac::tune::cli
