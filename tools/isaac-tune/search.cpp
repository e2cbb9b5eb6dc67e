#include "search.hpp"

#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/tune/bucket.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/neighbours.hpp>
#include <isaac/tune/prune.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tune/spread.hpp>
#include <isaac/tuning.hpp>

#include <fmt/format.h>

#include <memory>

namespace isaac::tune::cli {

namespace {

struct SearchFlags {
  std::int64_t m = 0, n = 0, k = 0;
  std::string layout = "NN", dtype = "f32", model_path, device = "NVIDIA H100 80GB HBM3", search = "model";
  int compute_capability = 90, top = 10, budget = 40;
  bool gpu = false, f32_tensor_cores = false;
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

int run_search(const SearchFlags& f) {
  if (f.layout.size() != 2 || f.layout.find_first_not_of("NT") != std::string::npos)
    throw InvalidArgument(fmt::format("--layout {}: use NN, NT, TN or TT", f.layout));
  const ir::Gemm g = ir::dense_gemm(ir::parse_dtype(f.dtype), f.m, f.n, f.k, f.layout[0] == 'T', f.layout[1] == 'T');
  const Search search = parse_search(f.search);
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
  if (search == Search::annealing) {
    lower::DeviceLimits limits;
    limits.sm = f.compute_capability;
    limits.f32_tensor_cores = f.f32_tensor_cores;
    show_pruned(g, limits);
    return 0;
  }
  if (search == Search::autotune) fmt::print("bucket: {}\n", gemm_bucket(g));
  Model model;
  std::string source;
  lower::DeviceLimits limits;
  limits.sm = f.compute_capability;
  limits.f32_tensor_cores = f.f32_tensor_cores;
  if (!f.model_path.empty()) {
    model = load_model(f.model_path);
    source = f.model_path;
  } else {
    auto choice = find_model("gemm", g.dtype, f.device, f.compute_capability);
    if (!choice)
      throw InvalidArgument(fmt::format("no GEMM {} model ships with this isaac and none is in {}: give one with --model",
                                        f.dtype, cache_directory()));
    model = choice->model;
    source = choice->source;
  }
  SearchReport report;
  // What --gpu would time first: the model's best, spread over tilings and hedged (tune/spread.hpp);
  // the neighbours of the fastest of them (tune/neighbours.hpp) follow once they are timed.
  const std::size_t neighbours = refinements_for(std::size_t(f.top));
  const auto ranked =
      candidate_sets(rank_gemm_space(g, limits, model, 32 * (f.top + 8), &report, per_split_pool), size_t(f.top),
                     size_t(f.top) - neighbours, neighbours);
  fmt::print("{} with {} (trained on {}):\n", ir::to_string(g), source, model.device);
  fmt::print("  {} legal sets, enumerated in {:.1f} ms, ranked by the model in {:.1f} ms (one core); its best, "
             "one per tiling (where its first splits K, the last three split it less; where these lack a kind of "
             "kernel (TC) that it rates within 15% of its first, its best of that kind is among them):\n",
             report.legal_sets, report.enumerate_ms, report.evaluate_ms);
  for (size_t i = 0; i < ranked.size(); ++i)
    fmt::print("  {:>3}  {:>8.2f} TFLOP/s predicted  {}\n", i + 1, ranked[i].predicted_tflops, ranked[i].params.str());
  if (neighbours > 0)
    fmt::print("  then, with --gpu, the model's best {} neighbours of the fastest of these (a step of one tile, U or "
               "KG, or another variant of its tiling)\n",
               neighbours);
  return 0;
}

}  // namespace

void add_search_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SearchFlags>();
  auto* cmd = app.add_subcommand("search", "rank the whole legal space of a GEMM with the model, or show the pruned "
                                           "list that annealing walks (with --gpu: run the search)");
  cmd->add_option("m", flags->m, "M")->required();
  cmd->add_option("n", flags->n, "N")->required();
  cmd->add_option("k", flags->k, "K")->required();
  cmd->add_option("--layout", flags->layout, "NN, NT, TN or TT (BLAS column-major)")->capture_default_str();
  cmd->add_option("--dtype", flags->dtype, "f16, f32 or f64")->capture_default_str();
  cmd->add_option("--model", flags->model_path, "model file (default: the user's or the shipped model)");
  cmd->add_option("--device", flags->device, "the device to pick a model for, without --gpu")->capture_default_str();
  cmd->add_option("--compute-capability", flags->compute_capability, "e.g. 90, without --gpu")->capture_default_str();
  cmd->add_option("--top", flags->top, "how many of the best to list (with --gpu: to re-benchmark)")
      ->capture_default_str();
  cmd->add_option("--search", flags->search, "model, annealing or autotune (docs/searches.md)")->capture_default_str();
  cmd->add_option("--budget", flags->budget, "annealing: kernels timed at most, with --gpu")->capture_default_str();
  cmd->add_flag("--gpu", flags->gpu, "run the search on the GPU (time its candidates) and keep the fastest");
  cmd->add_flag("--f32-tensor-cores", flags->f32_tensor_cores,
                "f32: also the TC=1 sets (three TF32 products per term; TuningOptions::f32_tensor_cores)");
  cmd->callback([flags, &exit_code] { exit_code = run_search(*flags); });
}

}  // namespace isaac::tune::cli
