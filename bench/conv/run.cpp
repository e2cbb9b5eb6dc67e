// isaac-bench-conv run: the sweep's winners against cuDNN, interleaved per problem under Google Benchmark.
#include "cudnn.hpp"
#include "modes.hpp"

#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/timer.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace isaac::bench {

struct Row {
  std::string dtype;
  Problem pr;
  double isaac = 0, cudnn = 0, roofline = 0;
  std::string params, cudnn_how;
};

double measure_bandwidth_tbs(const runtime::Stream& stream) {
  std::size_t bytes = std::size_t(1) << 30;
  runtime::Buffer a(bytes), b(bytes);
  auto timing = runtime::time_on_stream(
      [&](const runtime::Stream& s) {
        if (cudaMemcpyAsync(reinterpret_cast<void*>(b.ptr()), reinterpret_cast<void*>(a.ptr()), bytes,
                            cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(s.handle())) != cudaSuccess)
          throw Error("cudaMemcpyAsync failed while measuring the bandwidth");
      },
      stream, {.warmup = 2, .repeats = 10, .flush_l2 = false});
  return 2.0 * bytes / (timing.median_ms * 1e-3) / 1e12;
}

int run(const std::vector<Problem>& problems, const std::string& winners_path, const std::string& csv_path,
        double budget_s, int argc, char** argv) {
  auto start = Clock::now();
  auto info = runtime::device_info(0);
  runtime::use_device(0);
  runtime::Stream stream;
  double bandwidth = measure_bandwidth_tbs(stream);
  double ffma_peak = info.sm_count * 128.0 * 2.0 * info.clock_khz * 1e3 / 1e12;
  // f16 and bf16: cuDNN runs them on tensor cores, so the device's ceiling is theirs: dense FLOP per clock
  // and SM, 4096 on sm_90, 2048 on sm_80, 1024 before.
  const int cc = info.compute_capability();
  double tensor_peak = info.sm_count * (cc >= 90 ? 4096.0 : cc >= 80 ? 2048.0 : 1024.0) * info.clock_khz * 1e3 / 1e12;
  fmt::print("ceilings: bandwidth {:.2f} TB/s (measured), FFMA peak {:.1f} TFLOP/s ({} SMs x 128 x 2 x {} MHz), "
             "f64 peak taken as half of it; f16 and bf16 tensor-core peak {:.1f} TFLOP/s\n",
             bandwidth, ffma_peak, info.sm_count, info.clock_khz / 1000, tensor_peak);
  const std::vector<ConvWinner> winners = read_winners(problems, winners_path);
  fmt::print("cuDNN {}\n", cudnnGetVersion());
  std::vector<Row> rows;
  std::vector<std::unique_ptr<CompiledConv>> kernels;
  std::vector<std::unique_ptr<Operands>> operands;
  for (const ConvWinner& w : winners) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > budget_s) {
      fmt::print("run: budget of {} s spent; remaining problems skipped\n", budget_s);
      break;
    }
    const ir::Conv& v = w.conv;
    const ir::DType t = v.dtype;
    Row row{w.dtype, w.problem, 0, 0, 0, {}, {}};
    row.params = w.layout + ":" + w.params;
    double flops = lower::conv_flops(v);
    double peak = t == ir::DType::f64 ? ffma_peak / 2 : ir::is_16_bit(t) ? tensor_peak : ffma_peak;
    row.roofline = std::min(peak, flops / (conv_bytes(v) / (bandwidth * 1e12)) / 1e12);
    try {
      kernels.push_back(std::make_unique<CompiledConv>(v, lower::parse_conv_params(w.params)));
      operands.push_back(std::make_unique<Operands>(v));
      CompiledConv* k = kernels.back().get();
      Operands* o = operands.back().get();
      std::string label = fmt::format("{}/{}", w.dtype, w.problem.name);
      rows.push_back(row);
      std::size_t index = rows.size() - 1;
      // Interleaved: isaac then cuDNN for each problem.
      benchmark::RegisterBenchmark(("isaac/" + label).c_str(), [&, k, o, index, flops](benchmark::State& state) {
        for (auto _ : state) {
          const double ms = median_ms(*k, *o, stream);
          state.SetIterationTime(ms * 1e-3);
          rows[index].isaac = flops / (ms * 1e-3) / 1e12;
        }
        state.counters["TFLOPS"] = rows[index].isaac;
      })->UseManualTime()->Iterations(1);
      benchmark::RegisterBenchmark(("cudnn/" + label).c_str(), [&, problem = w.problem, t, index, flops](benchmark::State& state) {
        for (auto _ : state) {
          CudnnBest best{1e30, ""};
          for (auto format : {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC}) {
            try {
              auto b = cudnn_best(problem, t, format, stream);
              if (b.ms < best.ms) best = b;
            } catch (const std::exception& e) {
              fmt::print("  cuDNN {} {}: {}\n", format == CUDNN_TENSOR_NCHW ? "NCHW" : "NHWC", problem.name, e.what());
            }
          }
          state.SetIterationTime(best.ms < 1e29 ? best.ms * 1e-3 : 0);
          rows[index].cudnn = best.ms < 1e29 ? flops / (best.ms * 1e-3) / 1e12 : 0;
          rows[index].cudnn_how = best.how;
        }
        state.counters["TFLOPS"] = rows[index].cudnn;
        state.SetLabel(rows[index].cudnn_how);
      })->UseManualTime()->Iterations(1);
    } catch (const std::exception& e) {
      fmt::print("  {} {}: cannot compile the winner {}: {}\n", w.dtype, w.problem.name, row.params, e.what());
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::ofstream out(csv_path);
  if (!out) throw InvalidArgument("cannot write " + csv_path);
  out << "dtype,name,n,p,q,k,c,r,s,isaac_tflops,cudnn_tflops,roofline_tflops,params\n";
  std::map<std::string, std::vector<double>> ratios;
  for (const Row& r : rows) {
    out << fmt::format("{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},\"{}\"\n", r.dtype, r.pr.name, r.pr.n, r.pr.p,
                       r.pr.q, r.pr.k, r.pr.c, r.pr.r, r.pr.s, r.isaac, r.cudnn, r.roofline, r.params);
    fmt::print("{:4} {:7} isaac {:7.2f}  cuDNN {:7.2f} ({:18})  ratio {:5.2f}  roofline {:7.2f}\n", r.dtype, r.pr.name,
               r.isaac, r.cudnn, r.cudnn_how, r.cudnn > 0 ? r.isaac / r.cudnn : 0.0, r.roofline);
    if (r.isaac > 0 && r.cudnn > 0) ratios[r.dtype].push_back(r.isaac / r.cudnn);
  }
  for (auto& [dt, v] : ratios) {
    double log_sum = 0;
    for (double x : v) log_sum += std::log(x);
    fmt::print("{}: geometric mean isaac/cuDNN = {:.3f} over {} problems, min {:.3f}\n", dt, std::exp(log_sum / v.size()),
               v.size(), *std::min_element(v.begin(), v.end()));
  }
  fmt::print("wrote {}\n", csv_path);
  return rows.empty() ? 1 : 0;
}
}  // namespace isaac::bench
