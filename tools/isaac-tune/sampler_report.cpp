// isaac-tune sampler: the paper's Table 1 for GEMM. For each dtype, one learned sampler draws
// --per-shape parameter sets for each of --shapes random inputs (the shapes of `collect`); after its
// first --warmup samples, its acceptance rate (legal sets / proposals) is compared per layout with
// that of uniform proposals over the same value lists on the same inputs. It also shows what the
// counts do to coverage: the share of sets with a large block tile among the learned sampler's and
// among the legal uniform proposals (uniform over the legal space). No GPU.
//
//   isaac-tune sampler [--dtypes f32,f16,f64] [--shapes 100] [--per-shape 8] [--warmup 100] [--alpha 1]
#include "collect.hpp"
#include "collect_plan.hpp"
#include "target_option.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/sampler.hpp>

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <memory>

namespace isaac::tune::cli {

namespace {

struct SamplerFlags {
  std::string dtypes = "f32,f16,f64";
  int shapes = 100, per_shape = 8, warmup = 100, uniform = 20000, max_proposals = 100000, sm = 90;
  std::uint64_t seed = 1;
  double alpha = 1.0;
  ShapeOptions shape_options;
  bool distributions = false;
};

struct Rates {
  std::uint64_t shapes = 0, samples = 0, proposals = 0, accepted = 0, failed = 0;
  std::uint64_t uniform_proposals = 0, uniform_legal = 0;
  // Coverage: how many legal sets have a large block tile (ML x NL >= 64 x 64), among the learned
  // sampler's and among the legal uniform proposals (which are uniform over the legal space).
  std::uint64_t learned_large = 0, uniform_large = 0;
  void add(const Rates& o) {
    shapes += o.shapes, samples += o.samples, proposals += o.proposals, accepted += o.accepted, failed += o.failed;
    uniform_proposals += o.uniform_proposals, uniform_legal += o.uniform_legal;
    learned_large += o.learned_large, uniform_large += o.uniform_large;
  }
  double learned() const { return proposals ? double(accepted) / double(proposals) : 0; }
  double uniform_rate() const { return uniform_proposals ? double(uniform_legal) / double(uniform_proposals) : 0; }
};

bool large_tile(const lower::GemmParams& p) { return p.ml * p.nl >= 64 * 64; }

std::string percent(double x) { return x >= 0.01 ? fmt::format("{:.1f}%", 100 * x) : fmt::format("{:.3f}%", 100 * x); }

void print_row(const std::string& dtype, const std::string& layout, const Rates& r) {
  const double u = r.uniform_rate();
  auto share = [](std::uint64_t part, std::uint64_t whole) {
    return whole ? fmt::format("{:.0f}%", 100.0 * double(part) / double(whole)) : std::string("-");
  };
  fmt::print("| {} | {} | {} | {} | {} / {} | {} | {} / {} | {} | {} | {} | {} |\n", dtype, layout, r.shapes,
             r.samples, r.accepted, r.proposals, percent(r.learned()), r.uniform_legal, r.uniform_proposals, percent(u),
             u > 0 ? fmt::format("{:.0f}x", r.learned() / u) : std::string("-"), share(r.learned_large, r.accepted),
             share(r.uniform_large, r.uniform_legal));
}

int run_sampler_report(const SamplerFlags& f) {
  if (f.shapes < 1 || f.per_shape < 1 || f.warmup < 0 || f.uniform < 1)
    throw InvalidArgument("--shapes, --per-shape and --uniform-proposals must be >= 1, --warmup >= 0");
  const auto dtypes = parse_dtype_list(f.dtypes);
  lower::DeviceLimits device;
  device.sm = target_option(f.sm, "--sm").sm;
  fmt::print("GEMM sampler acceptance (legal sets / proposals), alpha {}, {} random inputs per dtype x {} sets, the "
             "first {} sets of each dtype not counted; uniform: {} proposals per input; H100 limits (sm_{})\n\n",
             f.alpha, f.shapes, f.per_shape, f.warmup, f.uniform, f.sm);
  fmt::print("| dtype | layout | inputs | sets | learned: accepted / proposals | learned | uniform: legal / "
             "proposals | uniform | learned / uniform | ML·NL ≥ 64², learned | ML·NL ≥ 64², legal uniform |\n"
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  Rates all;
  const auto start = std::chrono::steady_clock::now();
  for (ir::DType dtype : dtypes) {
    ShapeOptions so = f.shape_options;
    so.dtypes = {dtype};
    so.validate();
    GemmSampler sampler(device, SamplerOptions{.alpha = f.alpha});
    std::mt19937_64 shape_rng(f.seed), sample_rng(f.seed ^ 0x5a3d1e5c0ffee123ull);
    std::map<std::string, Rates> by_layout;
    int drawn = 0;
    for (int s = 0; s < f.shapes; ++s) {
      const ir::Gemm g = random_gemm(so, shape_rng);
      Rates& r = by_layout[layout_name(g)];
      ++r.shapes;
      for (int i = 0; i < f.per_shape; ++i, ++drawn) {
        const auto proposals = sampler.proposals(), accepted = sampler.accepted();
        const auto p = sampler.sample(g, sample_rng, f.max_proposals);
        if (drawn < f.warmup) continue;
        ++r.samples;
        r.failed += !p;
        r.learned_large += p && large_tile(*p);
        r.proposals += sampler.proposals() - proposals;
        r.accepted += sampler.accepted() - accepted;
      }
      // What uniform_acceptance_rate counts, keeping the legal sets' tiles for the coverage column.
      std::mt19937_64 uniform_rng(f.seed * 1000003 + std::uint64_t(s));
      for (int i = 0; i < f.uniform; ++i) {
        const lower::GemmParams p = uniform_gemm_proposal(g, uniform_rng);
        if (!lower::gemm_legal(g, p, device)) continue;
        ++r.uniform_legal;
        r.uniform_large += large_tile(p);
      }
      r.uniform_proposals += std::uint64_t(f.uniform);
    }
    Rates total;
    for (const auto& [layout, r] : by_layout) {
      print_row(std::string(ir::name(dtype)), layout, r);
      total.add(r);
    }
    print_row(std::string(ir::name(dtype)), "all", total);
    all.add(total);
    if (total.failed) fmt::print("  ({} sets of {} found no legal proposal)\n", total.failed, ir::name(dtype));
    if (f.distributions) {
      fmt::print("\n{} learned distributions (probability of each value):\n", ir::name(dtype));
      for (int p = 0; p < GemmSampler::parameter_count; ++p) {
        const auto param = GemmSampler::Parameter(p);
        if (param == GemmSampler::ACC && dtype != ir::DType::f16) continue;
        std::string line;
        const auto values = GemmSampler::values(param);
        for (std::size_t i = 0; i < values.size(); ++i)
          line += fmt::format("  {}={:.3f}", values[i], sampler.probability(param, int(i)));
        fmt::print("  {:>3}:{}\n", GemmSampler::name(param), line);
      }
      fmt::print("\n");
    }
  }
  if (dtypes.size() > 1) print_row("all", "all", all);
  fmt::print("\n{:.1f} s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace

void add_sampler_command(CLI::App& app) {
  auto f = std::make_shared<SamplerFlags>();
  auto* cmd = app.add_subcommand("sampler", "acceptance rate of the learned GEMM parameter sampler against uniform "
                                            "proposals, per dtype and layout over random inputs (paper Table 1)");
  cmd->add_option("--dtypes", f->dtypes, "comma-separated")->capture_default_str();
  cmd->add_option("--shapes", f->shapes, "random inputs per dtype")->capture_default_str();
  cmd->add_option("--per-shape", f->per_shape, "sets drawn per input")->capture_default_str();
  cmd->add_option("--warmup", f->warmup, "the first sets of each dtype, drawn but not counted")->capture_default_str();
  cmd->add_option("--uniform-proposals", f->uniform, "uniform proposals per input")->capture_default_str();
  cmd->add_option("--max-proposals", f->max_proposals, "per set")->capture_default_str();
  cmd->add_option("--alpha", f->alpha, "Dirichlet concentration (> 0)")->capture_default_str();
  cmd->add_option("--seed", f->seed, "shapes and draws")->capture_default_str();
  cmd->add_option("--sm", f->sm, "compute capability of the limits")->capture_default_str();
  cmd->add_option("--max-mnk", f->shape_options.max_mnk, "largest M*N*K of the inputs")->capture_default_str();
  cmd->add_flag("--distributions", f->distributions, "also print each parameter's learned distribution");
  cmd->callback([f] { run_sampler_report(*f); });
}

}  // namespace isaac::tune::cli
