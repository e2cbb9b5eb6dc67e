#include "search.hpp"

#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/tuning.hpp>

#include <fmt/format.h>

#include <memory>

namespace isaac::tune::cli {

namespace {

struct SearchFlags {
  std::int64_t m = 0, n = 0, k = 0;
  std::string layout = "NN", dtype = "f32", model_path, device = "NVIDIA H100 80GB HBM3";
  int compute_capability = 90, top = 10;
  bool gpu = false;
};

int run_search(const SearchFlags& f) {
  if (f.layout.size() != 2 || f.layout.find_first_not_of("NT") != std::string::npos)
    throw InvalidArgument(fmt::format("--layout {}: use NN, NT, TN or TT", f.layout));
  const ir::Gemm g = ir::dense_gemm(ir::parse_dtype(f.dtype), f.m, f.n, f.k, f.layout[0] == 'T', f.layout[1] == 'T');
  if (f.gpu) {
    const GemmDecision d = choose_gemm(g, {.top_k = f.top});
    fmt::print("{}\n  {}\n  by {}; predicted {:.2f} TFLOP/s, measured {:.4f} ms = {:.2f} TFLOP/s\n", ir::to_string(g),
               d.params.str(), d.how, d.predicted_tflops, d.measured_ms,
               2.0 * double(g.m) * double(g.n) * double(g.k) / (d.measured_ms * 1e-3) / 1e12);
    fmt::print("  search: {} legal sets, enumerated in {:.1f} ms, ranked by the model in {:.1f} ms\n",
               d.search.legal_sets, d.search.enumerate_ms, d.search.evaluate_ms);
    return 0;
  }
  Model model;
  std::string source;
  lower::DeviceLimits limits;
  limits.sm = f.compute_capability;
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
  const auto ranked = rank_gemm_space(g, limits, model, f.top, &report);
  fmt::print("{} with {} (trained on {}):\n", ir::to_string(g), source, model.device);
  fmt::print("  {} legal sets, enumerated in {:.1f} ms, ranked by the model in {:.1f} ms (one core)\n",
             report.legal_sets, report.enumerate_ms, report.evaluate_ms);
  for (size_t i = 0; i < ranked.size(); ++i)
    fmt::print("  {:>3}  {:>8.2f} TFLOP/s predicted  {}\n", i + 1, ranked[i].predicted_tflops, ranked[i].params.str());
  return 0;
}

}  // namespace

void add_search_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SearchFlags>();
  auto* cmd = app.add_subcommand("search", "rank the whole legal space of a GEMM with the model (and re-benchmark "
                                           "its best on the GPU with --gpu)");
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
  cmd->add_flag("--gpu", flags->gpu, "re-benchmark the top sets on the GPU and keep the fastest");
  cmd->callback([flags, &exit_code] { exit_code = run_search(*flags); });
}

}  // namespace isaac::tune::cli
