// isaac-bench-conv tuned: the tuner (issue 6) against the brute-force sweep and cuDNN. For each winner
// of the sweep (problem, dtype, layout), in the winner's layout and on the same operands:
//   brute/<dtype>/<name>   the sweep's winner
//   top1/<dtype>/<name>    the model's first choice over the whole legal space
//   topk/<dtype>/<name>    the fastest of the model's k best, re-benchmarked (isaac::choose_conv)
//   cudnn/<dtype>/<name>   cuDNN's best algorithm, best of NCHW and NHWC
// Writes a CSV of TFLOP/s and ratios, and prints the criteria. With --bf16, the f16 winners'
// problems and layouts run in bf16, which has no sweep of its own: no brute-force column. With --candidates-csv, every
// candidate the re-benchmark timed is also timed as the contenders are (candidate/<dtype>/<name>/<rank>).
#include "../candidates.hpp"
#include "cudnn.hpp"
#include "modes.hpp"

#include <isaac/conv.hpp>
#include <isaac/gemm.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tuning.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

namespace isaac::bench {

namespace {

enum Contender { brute, top1, topk, cudnn, contenders };
constexpr const char* contender_names[] = {"brute", "top1", "topk", "cudnn"};

struct Row {
  std::string dtype, layout;
  Problem pr;
  ir::Conv conv;
  std::array<std::optional<lower::ConvParams>, 3> params;
  std::array<std::unique_ptr<CompiledConv>, 3> kernels;
  std::array<double, contenders> tflops{};
  std::array<std::string, contenders> errors;
  ConvDecision decision;
  double tuning_seconds = 0;
  std::string cudnn_how;
  std::unique_ptr<Operands> operands;
  std::vector<std::unique_ptr<CompiledConv>> candidate_kernels;  // with --candidates-csv
  std::vector<TimedCandidate> candidates;
};

// Times a kernel; 0 TFLOP/s, with the benchmark skipped, when there is none.
double bench_kernel(benchmark::State& state, Row& r, const CompiledConv* kernel, const std::string& error,
                    const runtime::Stream& stream) {
  if (!kernel) {
    state.SkipWithError(error.empty() ? "no kernel" : error.c_str());
    return 0;
  }
  if (!r.operands) r.operands = std::make_unique<Operands>(r.conv);
  double ms = 0;
  for (auto _ : state) {
    ms = median_ms(*kernel, *r.operands, stream);
    state.SetIterationTime(ms * 1e-3);
  }
  const double tflops = lower::conv_flops(r.conv) / (ms * 1e-3) / 1e12;
  state.counters["TFLOPS"] = tflops;
  state.SetLabel(kernel->params().str());
  return tflops;
}

double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0; }
std::string cell(double v) { return v > 0 ? fmt::format("{:.3f}", v) : ""; }

}  // namespace

int tuned(const std::vector<Problem>& problems, const std::string& winners_path, const std::string& csv_path,
          int top_k, const std::string& candidates_csv, bool bf16, int argc, char** argv) {
  const auto info = runtime::device_info(0);
  runtime::use_device(0);
  const lower::DeviceLimits limits = device_limits(info);
  runtime::Stream stream;
  std::vector<std::unique_ptr<Row>> rows;
  for (const ConvWinner& w : read_winners(problems, winners_path)) {
    if (bf16 && w.dtype != "f16") continue;
    auto row = std::make_unique<Row>();
    row->dtype = w.dtype, row->layout = w.layout, row->pr = w.problem, row->conv = w.conv;
    if (bf16) row->dtype = "bf16", row->conv.dtype = ir::DType::bf16;
    const std::string name = fmt::format("{}/{}", row->dtype, w.problem.name);
    if (bf16) {
      row->errors[brute] = "no bf16 sweep";
    } else {
      try {
        row->params[brute] = lower::parse_conv_params(w.params);
      } catch (const std::exception& e) {
        row->errors[brute] = e.what();
      }
    }
    const auto model = tune::find_model("conv", row->conv.dtype, info.name, info.compute_capability());
    if (!model) {
      row->errors[top1] = row->errors[topk] = fmt::format("no CONV {} model", row->dtype);
    } else {
      row->params[top1] = tune::rank_conv_space(row->conv, {}, limits, model->model, 1).front().params;
      const auto start = std::chrono::steady_clock::now();
      try {
        TuningOptions options;
        options.top_k = top_k;
        options.database = false;
        // As in `limits` above, in the GEMM benchmark and in the CONV sweep (since 0.1.22): f32 may
        // take TC=1, direct and in the Winograd products.
        options.f32_tensor_cores = true;
        row->decision = choose_conv(row->conv, {}, options);
        row->params[topk] = row->decision.params;
        if (!candidates_csv.empty())
          row->candidates = candidates_of(row->decision.candidates);
      } catch (const std::exception& e) {
        row->errors[topk] = e.what();
      }
      row->tuning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    fmt::print("{} {}: {} in {:.2f} s ({} legal sets, enumerated in {:.1f} ms, ranked in {:.1f} ms)\n", name,
               row->layout, row->decision.how, row->tuning_seconds, row->decision.search.legal_sets,
               row->decision.search.enumerate_ms, row->decision.search.evaluate_ms);
    for (int who : {brute, top1, topk})
      if (row->params[who]) try {
          row->kernels[who] = std::make_unique<CompiledConv>(row->conv, *row->params[who]);
        } catch (const std::exception& e) {
          row->errors[who] = e.what();
        }
    for (TimedCandidate& c : row->candidates) try {
        row->candidate_kernels.push_back(std::make_unique<CompiledConv>(row->conv, lower::parse_conv_params(c.params)));
      } catch (const std::exception& e) {
        row->candidate_kernels.emplace_back();
        c.error = e.what();
      }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InvalidArgument(winners_path + " lists no problem of the problem list");

  for (auto& owned : rows) {
    Row* r = owned.get();
    const double flops = lower::conv_flops(r->conv);
    for (int who : {brute, top1, topk})
      benchmark::RegisterBenchmark(fmt::format("{}/{}/{}", contender_names[who], r->dtype, r->pr.name).c_str(),
                                   [r, who, &stream](benchmark::State& state) {
                                     r->tflops[who] =
                                         bench_kernel(state, *r, r->kernels[who].get(), r->errors[who], stream);
                                   })
          ->UseManualTime()
          ->Iterations(1);
    for (size_t i = 0; i < r->candidates.size(); ++i)
      benchmark::RegisterBenchmark(
          fmt::format("candidate/{}/{}/{}", r->dtype, r->pr.name, r->candidates[i].rank).c_str(),
          [r, i, &stream](benchmark::State& state) {
            TimedCandidate& c = r->candidates[i];
            c.tflops = bench_kernel(state, *r, r->candidate_kernels[i].get(), c.error, stream);
          })
          ->UseManualTime()
          ->Iterations(1);
    benchmark::RegisterBenchmark(fmt::format("cudnn/{}/{}", r->dtype, r->pr.name).c_str(),
                                 [r, flops, &stream](benchmark::State& state) {
                                   r->operands.reset();
                                   CudnnBest best{1e30, ""};
                                   std::string failures;
                                   for (auto _ : state) {
                                     for (auto format : {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC}) try {
                                         auto b = cudnn_best(r->pr, r->conv.dtype, format, stream);
                                         if (b.ms < best.ms) best = b;
                                       } catch (const std::exception& e) {
                                         failures += fmt::format("{}{}", failures.empty() ? "" : "; ", e.what());
                                       }
                                     state.SetIterationTime(best.ms < 1e29 ? best.ms * 1e-3 : 0);
                                   }
                                   // One format failing (cuDNN has no bf16 NCHW kernels on some
                                   // versions) is not an error when the other ran.
                                   if (best.ms >= 1e29) r->errors[cudnn] = failures;
                                   if (best.ms < 1e29) r->tflops[cudnn] = flops / (best.ms * 1e-3) / 1e12;
                                   r->cudnn_how = best.how;
                                   state.counters["TFLOPS"] = r->tflops[cudnn];
                                   state.SetLabel(best.how);
                                 })
        ->UseManualTime()
        ->Iterations(1);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::ofstream out(csv_path);
  if (!out) throw InvalidArgument("cannot write " + csv_path);
  out << fmt::format("# isaac-bench-conv tuned on {} (sm_{}), driver {}, cuDNN {}; top-k = {}; brute = {}; f32 may run "
                     "on the tensor cores, direct and Winograd (TuningOptions::f32_tensor_cores); cuDNN the faster of its "
                     "legacy and graph APIs, its f32 without TF32\n",
                     info.name, info.compute_capability(), runtime::driver_version(), cudnnGetVersion(), top_k,
                     winners_path);
  out << "dtype,name,layout,n,p,q,k,c,r,s,brute_tflops,top1_tflops,topk_tflops,cudnn_tflops,top1_vs_brute,"
         "topk_vs_brute,topk_vs_cudnn,topk_rank,legal_sets,enumerate_ms,evaluate_ms,tuning_s,brute_params,top1_params,"
         "topk_params,errors\n";
  int ok = 0, top1_ok = 0, topk_ok = 0;
  std::map<std::string, std::vector<double>> vs_cudnn;
  for (const auto& r : rows) {
    std::string errors;
    for (int who = 0; who < contenders; ++who)
      if (!r->errors[who].empty()) errors += fmt::format("{}{}: {}", errors.empty() ? "" : "; ", contender_names[who], r->errors[who]);
    const double r1 = ratio(r->tflops[top1], r->tflops[brute]), rk = ratio(r->tflops[topk], r->tflops[brute]);
    const double rc = ratio(r->tflops[topk], r->tflops[cudnn]);
    if (r1 > 0 && rk > 0) ++ok, top1_ok += r1 >= 0.85, topk_ok += rk >= 0.95;
    if (rc > 0) vs_cudnn[r->dtype].push_back(rc);
    const Problem& p = r->pr;
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.1f},{:.1f},{:.2f},\"{}\",\"{}\",\"{}\",\"{}\"\n",
                       r->dtype, p.name, r->layout, p.n, p.p, p.q, p.k, p.c, p.r, p.s, cell(r->tflops[brute]),
                       cell(r->tflops[top1]), cell(r->tflops[topk]), cell(r->tflops[cudnn]), cell(r1), cell(rk), cell(rc),
                       r->params[topk] ? std::to_string(r->decision.rank) : "", r->decision.search.legal_sets,
                       r->decision.search.enumerate_ms, r->decision.search.evaluate_ms, r->tuning_seconds,
                       r->params[brute] ? r->params[brute]->str() : "", r->params[top1] ? r->params[top1]->str() : "",
                       r->params[topk] ? r->params[topk]->str() : "", errors);
    fmt::print("{:4} {:7} {:10} brute {:7.2f} top1 {:7.2f} top-k {:7.2f} cuDNN {:7.2f}  top1/bf {:.3f} top-k/bf {:.3f}{}\n",
               r->dtype, p.name, r->layout, r->tflops[brute], r->tflops[top1], r->tflops[topk], r->tflops[cudnn], r1, rk,
               errors.empty() ? "" : "  " + errors);
  }
  if (bf16)
    fmt::print("\nno bf16 sweep: the criteria against the brute-force best are not measured\n");
  else
    fmt::print("\ntop-1 >= 85% of the brute-force best: {}/{} rows; top-{} >= 95%: {}/{} rows\n", top1_ok, ok, top_k,
               topk_ok, ok);
  for (const auto& [d, v] : vs_cudnn) {
    double log_sum = 0;
    for (double x : v) log_sum += std::log(x);
    fmt::print("tuned isaac / cuDNN, {}: geometric mean {:.3f} over {} rows\n", d, std::exp(log_sum / double(v.size())),
               v.size());
  }
  fmt::print("wrote {}\n", csv_path);
  if (!candidates_csv.empty()) {
    std::vector<CandidatesOfRow> listed;
    for (const auto& r : rows) {
      const Problem& p = r->pr;
      listed.push_back({fmt::format("{},{},{},{},{},{},{},{},{},{}", r->dtype, p.name, r->layout, p.n, p.p, p.q, p.k,
                                    p.c, p.r, p.s),
                        fmt::format("{} {}", r->dtype, p.name), r->tflops[brute],
                        r->params[topk] ? r->params[topk]->str() : "", r->candidates});
    }
    write_candidates(candidates_csv,
                     fmt::format("isaac-bench-conv tuned --candidates-csv on {} (sm_{}): each candidate of the top-{} "
                                 "re-benchmark, timed again as the contenders (runtime::time_on_stream defaults)",
                                 info.name, info.compute_capability(), top_k),
                     "dtype,name,layout,n,p,q,k,c,r,s", listed);
  }
  // Without a sweep (--bf16), every row needs the tuner's kernel and cuDNN's.
  if (bf16)
    return std::ranges::all_of(rows, [](const auto& r) { return r->tflops[topk] > 0 && r->tflops[cudnn] > 0; }) ? 0 : 1;
  return ok == int(rows.size()) ? 0 : 1;
}

}  // namespace isaac::bench
