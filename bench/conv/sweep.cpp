// isaac-bench-conv sweep: brute force over sampled legal parameter sets and the three layouts.
#include "modes.hpp"

#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/timer.hpp>

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

}  // namespace isaac::bench
