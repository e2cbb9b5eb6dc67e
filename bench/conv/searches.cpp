// isaac-bench-conv searches: the four ways of choosing parameters (issue 7) on the paper's CONV
// problems, in the sweep winner's layout and on the same operands:
//   brute/<dtype>/<name>      the sweep's winner (a random sample of legal sets per problem and dtype)
//   model/<dtype>/<name>      choose_conv with Search::model (the model ranks the space, top-k timed)
//   annealing/<dtype>/<name>  Search::annealing (analytic pruning, then simulated annealing)
//   autotune/<dtype>/<name>   Search::autotune (bucketed keys, problems in the winners CSV's order)
// Each search's tuning time (wall clock, compiling included) and kernels timed are recorded; the
// chosen kernels are then timed with Google Benchmark. Writes a CSV of quality and cost.
#include "modes.hpp"

#include <isaac/conv.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tuning.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

enum Contender { brute, model, annealing, autotune, contenders };
constexpr const char* contender_names[] = {"brute", "model", "annealing", "autotune"};

struct Row {
  std::string dtype, layout;
  Problem pr;
  ir::Conv conv;
  std::array<std::optional<lower::ConvParams>, contenders> params;
  std::array<std::unique_ptr<CompiledConv>, contenders> kernels;
  std::array<double, contenders> tflops{}, tuning_s{};
  std::array<double, contenders> scratch_ms{};  // the search's own median for its choice (scratch operands)
  std::array<int, contenders> timed{};
  std::array<std::string, contenders> errors, how;
  std::unique_ptr<Operands> operands;
};

std::string cell(double v) { return v > 0 ? fmt::format("{:.3f}", v) : ""; }

}  // namespace

int searches(const std::vector<Problem>& problems, const std::string& winners_path, const std::string& csv_path,
             const SearchOptions& o, int argc, char** argv) {
  const auto info = runtime::device_info(0);
  runtime::use_device(0);
  runtime::Stream stream;
  std::vector<std::unique_ptr<Row>> rows;
  for (const ConvWinner& w : read_winners(problems, winners_path)) {
    auto row = std::make_unique<Row>();
    row->dtype = w.dtype, row->layout = w.layout, row->pr = w.problem, row->conv = w.conv;
    row->timed[brute] = o.sweep_candidates;
    try {
      row->params[brute] = lower::parse_conv_params(w.params);
    } catch (const std::exception& e) {
      row->errors[brute] = e.what();
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InvalidArgument(winners_path + " lists no problem of the problem list");

  for (Contender who : {model, annealing, autotune}) {
    TuningOptions options;
    options.search = who == model ? Search::model : who == annealing ? Search::annealing : Search::autotune;
    options.top_k = o.top_k;
    options.anneal_budget = o.anneal_budget;
    options.database = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Row& r = *rows[i];
      const auto start = std::chrono::steady_clock::now();
      try {
        const ConvDecision d = choose_conv(r.conv, {}, options);
        r.params[who] = d.params, r.timed[who] = d.timed, r.how[who] = d.how, r.scratch_ms[who] = d.measured_ms;
      } catch (const std::exception& e) {
        r.errors[who] = e.what();
      }
      r.tuning_s[who] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      fmt::print("[{} {}/{}] {}/{} {}: {:.2f} s, {} timed, chosen at {:.4f} ms: {}\n", contender_names[who], i + 1,
                 rows.size(), r.dtype, r.pr.name, r.layout, r.tuning_s[who], r.timed[who], r.scratch_ms[who],
                 r.errors[who].empty() ? r.how[who] : r.errors[who]);
    }
  }
  for (auto& r : rows)
    for (int who = 0; who < contenders; ++who)
      if (r->params[who]) try {
          r->kernels[who] = std::make_unique<CompiledConv>(r->conv, *r->params[who]);
        } catch (const std::exception& e) {
          r->errors[who] = e.what();
        }

  for (auto& owned : rows) {
    Row* r = owned.get();
    const double flops = lower::conv_flops(r->conv);
    for (int who = 0; who < contenders; ++who)
      benchmark::RegisterBenchmark(fmt::format("{}/{}/{}", contender_names[who], r->dtype, r->pr.name).c_str(),
                                   [r, who, flops, &stream](benchmark::State& state) {
                                     if (!r->kernels[who]) {
                                       state.SkipWithError(r->errors[who].c_str());
                                       return;
                                     }
                                     if (!r->operands) r->operands = std::make_unique<Operands>(r->conv);
                                     double ms = 0;
                                     for (auto _ : state) {
                                       ms = median_ms(*r->kernels[who], *r->operands, stream);
                                       state.SetIterationTime(ms * 1e-3);
                                     }
                                     if (who == contenders - 1) r->operands.reset();
                                     r->tflops[who] = flops / (ms * 1e-3) / 1e12;
                                     state.counters["TFLOPS"] = r->tflops[who];
                                     state.SetLabel(r->params[who]->str());
                                   })
          ->UseManualTime()
          ->Iterations(1);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  double annealing_s = 0;
  int annealing_timed = 0;
  for (const auto& r : rows) annealing_s += r->tuning_s[annealing], annealing_timed += r->timed[annealing];
  const double per_kernel_s = annealing_timed > 0 ? annealing_s / annealing_timed : 0;
  for (auto& r : rows) r->tuning_s[brute] = r->timed[brute] * per_kernel_s;

  std::ofstream out(csv_path);
  if (!out) throw InvalidArgument("cannot write " + csv_path);
  out << fmt::format(
      "# isaac-bench-conv searches on {} (sm_{}), driver {}; model top-{}, annealing budget {}, autotune top-{} over "
      "buckets; brute = {} ({} sets sampled per problem and dtype), its tuning time estimated as its kernels x {:.3f} s "
      "(annealing's cost per timed kernel in this run)\n",
      info.name, info.compute_capability(), runtime::driver_version(), o.top_k, o.anneal_budget, o.top_k, winners_path,
      o.sweep_candidates, per_kernel_s);
  out << "dtype,name,layout,n,p,q,k,c,r,s";
  for (const char* c : contender_names) out << fmt::format(",{}_tflops", c);
  for (int who = 1; who < contenders; ++who) out << fmt::format(",{}_vs_brute", contender_names[who]);
  for (const char* c : contender_names) out << fmt::format(",{}_timed,{}_tuning_s,{}_scratch_ms", c, c, c);
  for (const char* c : contender_names) out << fmt::format(",{}_params", c);
  out << ",autotune_how,annealing_how,errors\n";
  std::array<double, contenders> log_quality{}, total_s{};
  std::array<int, contenders> n_quality{}, at_95{}, total_timed{};
  for (const auto& r : rows) {
    std::string errors;
    for (int who = 0; who < contenders; ++who)
      if (!r->errors[who].empty())
        errors += fmt::format("{}{}: {}", errors.empty() ? "" : "; ", contender_names[who], r->errors[who]);
    const Problem& p = r->pr;
    out << fmt::format("{},{},{},{},{},{},{},{},{},{}", r->dtype, p.name, r->layout, p.n, p.p, p.q, p.k, p.c, p.r, p.s);
    for (int who = 0; who < contenders; ++who) out << "," << cell(r->tflops[who]);
    for (int who = 1; who < contenders; ++who) {
      const double q = r->tflops[who] > 0 && r->tflops[brute] > 0 ? r->tflops[who] / r->tflops[brute] : 0;
      out << "," << cell(q);
      if (q > 0) log_quality[who] += std::log(q), ++n_quality[who], at_95[who] += q >= 0.95;
    }
    for (int who = 0; who < contenders; ++who) {
      out << fmt::format(",{},{:.2f},{}", r->timed[who], r->tuning_s[who],
                         r->scratch_ms[who] > 0 ? fmt::format("{:.5f}", r->scratch_ms[who]) : "");
      total_s[who] += r->tuning_s[who], total_timed[who] += r->timed[who];
    }
    for (int who = 0; who < contenders; ++who) out << fmt::format(",\"{}\"", r->params[who] ? r->params[who]->str() : "");
    out << fmt::format(",\"{}\",\"{}\",\"{}\"\n", r->how[autotune], r->how[annealing], errors);
    fmt::print("{:4} {:7} {:10} brute {:7.2f} model {:7.2f} annealing {:7.2f} autotune {:7.2f}{}\n", r->dtype, p.name,
               r->layout, r->tflops[brute], r->tflops[model], r->tflops[annealing], r->tflops[autotune],
               errors.empty() ? "" : "  " + errors);
  }
  fmt::print("\n{:<10} {:>22} {:>12} {:>16} {:>14}\n", "search", "geomean vs brute force", ">= 95% rows",
             "tuning s (total)", "kernels timed");
  for (int who = 0; who < contenders; ++who)
    fmt::print("{:<10} {:>22} {:>12} {:>16.1f} {:>14}{}\n", contender_names[who],
               who == brute ? "1 (reference)" : fmt::format("{:.3f}", std::exp(log_quality[who] / std::max(1, n_quality[who]))),
               who == brute ? "" : fmt::format("{}/{}", at_95[who], n_quality[who]), total_s[who], total_timed[who],
               who == brute ? "  (estimated)" : "");
  fmt::print("wrote {}\n", csv_path);
  return 0;
}

}  // namespace isaac::bench
