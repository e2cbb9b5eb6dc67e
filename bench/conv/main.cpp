// isaac-bench-conv: the CONV template against cuDNN (issue 5).
//
//   isaac-bench-conv sweep [--budget 600] [--candidates 150] [--dtypes f32,f16] [--out bench/results/conv-sweep-winners.csv]
//     brute force: per problem of conv_problems.csv and dtype, samples legal parameter sets over the three
//     layouts (NCHW/KCRS, CHWN/CRSK, NHWC/KRSC), compiles them on all cores, times each on the GPU
//     (runtime::time_on_stream: warm-up, L2 flushed, median) and keeps the fastest.
//   isaac-bench-conv run [--winners bench/results/conv-sweep-winners.csv] [--csv bench/results/h100-conv.csv] [--budget 300]
//     Google Benchmark, isaac and cuDNN interleaved per problem: cuDNN's best algorithm found by
//     cudnnFindConvolutionForwardAlgorithmEx, best of NCHW and NHWC (FP32 in FMA math: no TF32; f16 may use
//     tensor cores). Writes dtype,name,n,p,q,k,c,r,s,isaac_tflops,cudnn_tflops,roofline_tflops,params.
// Roofline: min(FFMA peak = SMs x 128 lanes x 2 x clock, minimal bytes / bandwidth measured here with a
// 1 GiB device-to-device copy). Failures are printed with their reason, never recorded as numbers.
#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/timer.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace isaac;
using Clock = std::chrono::steady_clock;

namespace {

struct Problem {
  std::string name;
  std::int64_t n, p, q, k, c, r, s;
};

std::vector<Problem> read_problems(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read the problem list " + path + " (use --problems)");
  std::vector<Problem> out;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::stringstream ss(line);
    std::string f;
    std::vector<std::string> v;
    while (std::getline(ss, f, ',')) v.push_back(f);
    if (v.size() != 8) throw InvalidArgument("bad line in " + path + ": " + line);
    out.push_back({v[0], std::stoll(v[1]), std::stoll(v[2]), std::stoll(v[3]), std::stoll(v[4]), std::stoll(v[5]),
                   std::stoll(v[6]), std::stoll(v[7])});
  }
  return out;
}

// Stride 1, no padding: H = P + R - 1, W = Q + S - 1.
ir::Conv make_conv(const Problem& pr, ir::DType t, ir::ImageLayout il, ir::FilterLayout fl) {
  return ir::dense_conv(t, pr.n, pr.c, pr.p + pr.r - 1, pr.q + pr.s - 1, pr.k, pr.r, pr.s, 1, 0, 1, il, fl);
}

const std::pair<ir::ImageLayout, ir::FilterLayout> layouts[] = {{ir::ImageLayout::nchw, ir::FilterLayout::kcrs},
                                                                {ir::ImageLayout::chwn, ir::FilterLayout::crsk},
                                                                {ir::ImageLayout::nhwc, ir::FilterLayout::krsc}};

std::string layout_text(const ir::Conv& v) {
  return fmt::format("{}/{}", ir::name(v.input_layout), ir::name(v.filter_layout));
}

double conv_bytes(const ir::Conv& v) {
  double e = static_cast<double>(ir::size_of(v.dtype));
  return e * (v.n * v.c * v.h * v.w + v.k * v.c * v.r * v.s + v.n * v.k * v.p * v.q);
}

struct Operands {
  runtime::Buffer in, filter, out;
  explicit Operands(const ir::Conv& v)
      : in(ir::size_of(v.dtype) * v.n * v.c * v.h * v.w),
        filter(ir::size_of(v.dtype) * v.k * v.c * v.r * v.s),
        out(ir::size_of(v.dtype) * v.n * v.k * v.p * v.q) {
    // Small finite values: 0x3C00 / 0x3F80_0000-ish byte patterns are fine for timing.
    in.fill_bytes(0x3C);
    filter.fill_bytes(0x3C);
    out.fill_bytes(0);
  }
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string f;
  while (std::getline(ss, f, sep))
    if (!f.empty()) out.push_back(f);
  return out;
}

// ---- sweep -------------------------------------------------------------------------------------

struct Winner {
  std::string dtype, name, layout, params;
  double ms = 0, tflops = 0;
};

int sweep(const std::vector<Problem>& problems, const std::vector<std::string>& dtypes, int candidates, double budget_s,
          const std::string& out_path) {
  auto start = Clock::now();
  auto info = runtime::device_info(0);
  auto limits = device_limits(info);
  auto target = lower::target_for_compute_capability(info.compute_capability());
  runtime::Stream stream;
  std::vector<Winner> winners;
  std::size_t total_jobs = problems.size() * dtypes.size();
  std::size_t done_jobs = 0;
  for (const std::string& dt : dtypes)
    for (const Problem& pr : problems) {
      double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      double left = budget_s - elapsed;
      if (left <= 5) {
        fmt::print("sweep: budget of {} s spent, {} of {} problems left unswept\n", budget_s, total_jobs - done_jobs,
                   total_jobs);
        break;
      }
      double job_budget = left / static_cast<double>(total_jobs - done_jobs);
      auto job_start = Clock::now();
      ++done_jobs;
      ir::DType t = ir::parse_dtype(dt);
      // Candidates, spread over the layouts.
      std::mt19937_64 rng(std::hash<std::string>{}(pr.name + dt));
      struct Cand {
        ir::Conv conv;
        lower::ConvParams params;
      };
      std::vector<Cand> cands;
      for (auto [il, fl] : layouts) {
        ir::Conv v = make_conv(pr, t, il, fl);
        auto space = lower::conv_space(v, {}, limits);
        std::shuffle(space.begin(), space.end(), rng);
        for (int i = 0; i < candidates / 3 && i < static_cast<int>(space.size()); ++i) cands.push_back({v, space[i]});
      }
      std::vector<std::optional<lower::ConvKernel>> ptx(cands.size());
      std::vector<std::string> errors(cands.size());
      std::atomic<size_t> next{0};
      std::vector<std::thread> pool;
      for (unsigned w = 0; w < std::max(2u, std::thread::hardware_concurrency()); ++w)
        pool.emplace_back([&] {
          for (size_t i; (i = next++) < cands.size();) try {
              ptx[i] = lower::emit_conv(cands[i].conv, cands[i].params, target);
            } catch (const std::exception& e) {
              errors[i] = e.what();
            }
        });
      for (auto& th : pool) th.join();
      Winner best{dt, pr.name, "", "", 1e30, 0};
      int failures = 0, timed = 0;
      std::map<std::string, std::unique_ptr<Operands>> operands;  // per layout
      for (size_t i = 0; i < cands.size(); ++i) {
        if (std::chrono::duration<double>(Clock::now() - job_start).count() > job_budget) break;
        if (!errors[i].empty()) {
          if (failures++ < 3) fmt::print("  {} {}: compile failed: {}\n", pr.name, cands[i].params.str(), errors[i]);
          continue;
        }
        const ir::Conv& v = cands[i].conv;
        auto& ops = operands[layout_text(v)];
        if (!ops) ops = std::make_unique<Operands>(v);
        try {
          CompiledConv kernel(v, std::move(*ptx[i]), cands[i].params);
          runtime::TimingOptions opt;
          opt.warmup = 1, opt.repeats = 5;
          auto timing = runtime::time_on_stream(
              [&](const runtime::Stream& s) { kernel.run(ops->out.ptr(), ops->in.ptr(), ops->filter.ptr(), 1, 0, s); },
              stream, opt);
          ++timed;
          if (timing.median_ms < best.ms)
            best = {dt, pr.name, layout_text(v), cands[i].params.str(), timing.median_ms,
                    lower::conv_flops(v) / (timing.median_ms * 1e-3) / 1e12};
        } catch (const DriverError& e) {
          fmt::print("  {} {} {}: DRIVER ERROR, stopping the sweep (the context is unusable): {}\n", pr.name,
                     layout_text(v), cands[i].params.str(), e.what());
          goto write;
        } catch (const std::exception& e) {
          if (failures++ < 3) fmt::print("  {} {}: failed: {}\n", pr.name, cands[i].params.str(), e.what());
        }
      }
      if (timed > 0) {
        winners.push_back(best);
        fmt::print("[{}/{}] {} {}: {} candidates, {} timed, {} failed; best {:.3f} ms = {:.2f} TFLOP/s with {} {} "
                   "({:.0f} s elapsed)\n",
                   done_jobs, total_jobs, dt, pr.name, cands.size(), timed, failures, best.ms, best.tflops, best.layout,
                   best.params, std::chrono::duration<double>(Clock::now() - start).count());
      } else {
        fmt::print("[{}/{}] {} {}: NOTHING TIMED ({} failures)\n", done_jobs, total_jobs, dt, pr.name, failures);
      }
      std::fflush(stdout);
    }
write:
  std::ofstream out(out_path);
  if (!out) throw InvalidArgument("cannot write " + out_path);
  out << "dtype,name,layout,params,ms,tflops\n";
  for (const Winner& w : winners)
    out << fmt::format("{},{},{},\"{}\",{:.5f},{:.3f}\n", w.dtype, w.name, w.layout, w.params, w.ms, w.tflops);
  fmt::print("sweep: {} winners written to {}\n", winners.size(), out_path);
  return winners.empty() ? 1 : 0;
}

// ---- cuDNN ---------------------------------------------------------------------------------------

#define CUDNN_CHECK(call)                                                                                  \
  do {                                                                                                     \
    cudnnStatus_t status_ = (call);                                                                        \
    if (status_ != CUDNN_STATUS_SUCCESS)                                                                   \
      throw Error(fmt::format("{} failed: {}", #call, cudnnGetErrorString(status_)));                      \
  } while (0)

struct CudnnBest {
  double ms = 0;
  std::string how;
};

// The best cuDNN time for the problem in `format` (NCHW or NHWC, filters in the matching KCRS/KRSC).
CudnnBest cudnn_best(cudnnHandle_t handle, const Problem& pr, ir::DType t, cudnnTensorFormat_t format,
                     const runtime::Stream& stream) {
  ir::Conv v = make_conv(pr, t, format == CUDNN_TENSOR_NCHW ? ir::ImageLayout::nchw : ir::ImageLayout::nhwc,
                         format == CUDNN_TENSOR_NCHW ? ir::FilterLayout::kcrs : ir::FilterLayout::krsc);
  cudnnDataType_t data = t == ir::DType::f16 ? CUDNN_DATA_HALF : t == ir::DType::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnDataType_t compute = t == ir::DType::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, format, data, v.n, v.c, v.h, v.w));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, format, data, v.n, v.k, v.p, v.q));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, data, format, v.k, v.c, v.r, v.s));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, compute));
  // FP32: FMA math, no TF32 (isaac computes in FP32 FFMA); f16: tensor cores allowed.
  CUDNN_CHECK(cudnnSetConvolutionMathType(conv, t == ir::DType::f16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
  Operands ops(v);
  std::size_t ws_bytes = std::size_t(512) << 20;
  runtime::Buffer ws(ws_bytes);
  cudnnConvolutionFwdAlgoPerf_t perf[16];
  int returned = 0;
  CUDNN_CHECK(cudnnSetStream(handle, static_cast<cudaStream_t>(stream.handle())));
  CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
      handle, x, reinterpret_cast<void*>(ops.in.ptr()), w, reinterpret_cast<void*>(ops.filter.ptr()), conv, y,
      reinterpret_cast<void*>(ops.out.ptr()), 16, &returned, perf, reinterpret_cast<void*>(ws.ptr()), ws_bytes));
  CudnnBest best{1e30, "none"};
  float one = 1, zero = 0;
  double one64 = 1, zero64 = 0;
  const void* alpha = t == ir::DType::f64 ? static_cast<const void*>(&one64) : &one;
  const void* beta = t == ir::DType::f64 ? static_cast<const void*>(&zero64) : &zero;
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > ws_bytes) continue;
    if (t != ir::DType::f16 && perf[i].mathType == CUDNN_TENSOR_OP_MATH) continue;
    auto timing = runtime::time_on_stream(
        [&](const runtime::Stream&) {
          CUDNN_CHECK(cudnnConvolutionForward(handle, alpha, x, reinterpret_cast<void*>(ops.in.ptr()), w,
                                              reinterpret_cast<void*>(ops.filter.ptr()), conv, perf[i].algo,
                                              reinterpret_cast<void*>(ws.ptr()), ws_bytes, beta, y,
                                              reinterpret_cast<void*>(ops.out.ptr())));
        },
        stream);
    if (timing.median_ms < best.ms)
      best = {timing.median_ms, fmt::format("{} algo {}", format == CUDNN_TENSOR_NCHW ? "NCHW" : "NHWC",
                                            static_cast<int>(perf[i].algo))};
  }
  cudnnDestroyTensorDescriptor(x);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyConvolutionDescriptor(conv);
  return best;
}

// ---- run -----------------------------------------------------------------------------------------

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
  fmt::print("ceilings: bandwidth {:.2f} TB/s (measured), FFMA peak {:.1f} TFLOP/s ({} SMs x 128 x 2 x {} MHz); "
             "f64 peak taken as half of it\n",
             bandwidth, ffma_peak, info.sm_count, info.clock_khz / 1000);
  // Winners: dtype,name,layout,params,ms,tflops
  std::ifstream in(winners_path);
  if (!in) throw InvalidArgument("cannot read the sweep winners " + winners_path + ": run `sweep` first (or --winners)");
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> winners;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    auto q1 = line.find('"'), q2 = line.rfind('"');
    auto head = split(line.substr(0, q1), ',');
    if (head.size() < 3 || q1 == std::string::npos) continue;
    winners[{head[0], head[1]}] = {head[2], line.substr(q1 + 1, q2 - q1 - 1)};
  }
  cudnnHandle_t handle;
  CUDNN_CHECK(cudnnCreate(&handle));
  fmt::print("cuDNN {}\n", cudnnGetVersion());
  std::vector<Row> rows;
  std::vector<std::unique_ptr<CompiledConv>> kernels;
  std::vector<std::unique_ptr<Operands>> operands;
  for (const auto& [key, value] : winners) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > budget_s) {
      fmt::print("run: budget of {} s spent; remaining problems skipped\n", budget_s);
      break;
    }
    auto pr = std::find_if(problems.begin(), problems.end(), [&](const Problem& p) { return p.name == key.second; });
    if (pr == problems.end()) continue;
    ir::DType t = ir::parse_dtype(key.first);
    auto slash = value.first.find('/');
    ir::Conv v = make_conv(*pr, t, ir::parse_image_layout(value.first.substr(0, slash)),
                           ir::parse_filter_layout(value.first.substr(slash + 1)));
    Row row{key.first, *pr};
    row.params = value.first + ":" + value.second;
    double flops = lower::conv_flops(v);
    double peak = t == ir::DType::f64 ? ffma_peak / 2 : ffma_peak;
    row.roofline = std::min(peak, flops / (conv_bytes(v) / (bandwidth * 1e12)) / 1e12);
    try {
      kernels.push_back(std::make_unique<CompiledConv>(v, lower::parse_conv_params(value.second)));
      operands.push_back(std::make_unique<Operands>(v));
      CompiledConv* k = kernels.back().get();
      Operands* o = operands.back().get();
      std::string label = fmt::format("{}/{}", key.first, pr->name);
      rows.push_back(row);
      std::size_t index = rows.size() - 1;
      // Interleaved: isaac then cuDNN for each problem.
      benchmark::RegisterBenchmark(("isaac/" + label).c_str(), [&, k, o, index, flops](benchmark::State& state) {
        for (auto _ : state) {
          auto timing = runtime::time_on_stream(
              [&](const runtime::Stream& s) { k->run(o->out.ptr(), o->in.ptr(), o->filter.ptr(), 1, 0, s); }, stream);
          state.SetIterationTime(timing.median_ms * 1e-3);
          rows[index].isaac = flops / (timing.median_ms * 1e-3) / 1e12;
        }
        state.counters["TFLOPS"] = rows[index].isaac;
      })->UseManualTime()->Iterations(1);
      benchmark::RegisterBenchmark(("cudnn/" + label).c_str(), [&, pr, t, index, flops](benchmark::State& state) {
        for (auto _ : state) {
          CudnnBest best{1e30, ""};
          for (auto format : {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC}) {
            try {
              auto b = cudnn_best(handle, *pr, t, format, stream);
              if (b.ms < best.ms) best = b;
            } catch (const std::exception& e) {
              fmt::print("  cuDNN {} {}: {}\n", format == CUDNN_TENSOR_NCHW ? "NCHW" : "NHWC", pr->name, e.what());
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
      fmt::print("  {} {}: cannot compile the winner {}: {}\n", key.first, pr->name, row.params, e.what());
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
  cudnnDestroy(handle);
  return rows.empty() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::string(argv[1]) != "sweep" && std::string(argv[1]) != "run")) {
    fmt::print(stderr,
               "usage: isaac-bench-conv sweep [--problems CSV] [--dtypes f32,f16] [--candidates 150] [--budget S] [--out CSV]\n"
               "       isaac-bench-conv run [--problems CSV] [--winners CSV] [--csv CSV] [--budget S] [google benchmark flags]\n");
    return 2;
  }
  std::string mode = argv[1];
  std::string problems_path = ISAAC_CONV_PROBLEMS, dtypes = "f32,f16", out = "bench/results/conv-sweep-winners.csv";
  std::string winners = "bench/results/conv-sweep-winners.csv", csv = "bench/results/h100-conv.csv";
  int candidates = 150;
  double budget = mode == "sweep" ? 600 : 300;
  std::vector<char*> rest{argv[0]};
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InvalidArgument(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--problems") problems_path = value();
      else if (a == "--dtypes") dtypes = value();
      else if (a == "--candidates") candidates = std::stoi(value());
      else if (a == "--budget") budget = std::stod(value());
      else if (a == "--out") out = value();
      else if (a == "--winners") winners = value();
      else if (a == "--csv") csv = value();
      else rest.push_back(argv[i]);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      return 2;
    }
  }
  try {
    std::string why;
    if (!runtime::driver_available(&why)) {
      fmt::print(stderr, "isaac-bench-conv needs a CUDA device: {}\n", why);
      return 77;
    }
    if (!std::ifstream(problems_path)) problems_path = "bench/problems/conv_problems.csv";  // run from the repo root
    for (const std::string& path : {out, csv}) {
      auto dir = std::filesystem::path(path).parent_path();
      if (!dir.empty()) std::filesystem::create_directories(dir);
    }
    auto problems = read_problems(problems_path);
    fmt::print("{} problems from {}; device {}\n", problems.size(), problems_path, runtime::device_info(0).name);
    if (mode == "sweep") return sweep(problems, split(dtypes, ','), candidates, budget, out);
    int rargc = static_cast<int>(rest.size());
    return run(problems, winners, csv, budget, rargc, rest.data());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
