// Round 66 probe (not part of the project): where the re-benchmark's time per candidate timing goes.
#include <isaac/gemm.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/streaming.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tune/heuristic.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
using namespace isaac;
static double wall_ms(int n, const std::function<void()>& f) {
  f();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / n;
}
int main() {
  runtime::use_device(0);
  auto info = runtime::device_info(0);
  std::printf("%s, L2 %lld bytes\n", info.name.c_str(), (long long)info.l2_bytes);
  runtime::Stream s;
  const ir::Gemm g = ir::dense_gemm(ir::DType::f64, 896, 896, 32, false, true);
  const lower::DeviceLimits limits{.sm = 90, .max_threads_per_block = 1024, .max_shared_per_block = info.max_shared_per_block_optin,
                                   .registers_per_block = info.registers_per_block, .max_registers_per_thread = 255,
                                   .sm_count = info.sm_count, .max_shared_per_sm = info.max_shared_per_sm};
  const auto p = tune::heuristic_gemm(g, limits);
  auto kernel = build_gemm_kernel(g, p, lower::SplitMode::atomic, 0);
  std::printf("kernel %s, cubin %zu bytes\n", p.str().c_str(), kernel.cubin.size());
  runtime::Buffer a(8 * 896 * 32), b(8 * 896 * 32), c(8 * 896 * 896);
  for (auto* x : {&a, &b, &c}) x->fill_bytes(0x3c);
  CompiledGemm gemm(kernel, p, lower::SplitMode::atomic, 0);
  auto run = [&](const runtime::Stream& st) { gemm.run(g, c.ptr(), a.ptr(), b.ptr(), 1.0, 0.0, st); };
  runtime::TimingOptions t7;
  t7.warmup = 1, t7.repeats = 7;
  double kernel_ms = 0;
  std::printf("time_on_stream, 1 warm-up + 7 runs, L2 flushed: %.3f ms a call\n",
              wall_ms(100, [&] { kernel_ms = runtime::time_on_stream(run, s, t7).median_ms; }));
  std::printf("  (kernel median %.4f ms)\n", kernel_ms);
  runtime::TimingOptions nf = t7;
  nf.flush_l2 = false;
  std::printf("time_on_stream, 1 warm-up + 7 runs, no flush: %.3f ms a call\n",
              wall_ms(100, [&] { runtime::time_on_stream(run, s, nf); }));
  std::printf("a buffer of twice the L2, allocated, zeroed and freed: %.3f ms\n", wall_ms(50, [&] {
                runtime::Buffer x(std::size_t(2 * info.l2_bytes));
                x.fill_bytes(0);
              }));
  std::printf("CompiledGemm from its kernel (module load, destroy): %.3f ms\n",
              wall_ms(50, [&] { CompiledGemm again(kernel, p, lower::SplitMode::atomic, 0); }));
  std::printf("device_info(0): %.4f ms a call\n", wall_ms(50, [&] { runtime::device_info(0); }));
  std::printf("one run, synchronized: %.4f ms\n", wall_ms(200, [&] { run(s); s.synchronize(); }));
}
