// isaac-bench-conv sweep: brute force over the three layouts. Per problem and dtype: seeds (the
// earlier winner in the output file and the shipped model's best sets per layout), a random sample
// of conv_space, of its wgmma sets, and of winograd_space and winograd_product_space (where Winograd
// applies), then hill climbing from the fastest sets (refine.hpp) until the job's share of the
// budget is spent or no neighbour is left untried.
#include "modes.hpp"
#include "refine.hpp"

#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/timer.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/search.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace isaac::bench {

namespace {

struct Winner {
  std::string dtype, name, layout, params;
  double ms = 0, tflops = 0;
};

struct Trial {
  ir::Conv conv;
  lower::ConvParams params;
  double ms = INFINITY;  // INFINITY: not timed (failed)
  bool expanded = false;
};

// Emits and assembles the kernels of trials[first..] on all cores (ptxas runs in processes of its
// own; the driver's JIT, where ptxas fails, took one kernel at a time even from 16 threads).
std::vector<std::optional<lower::ConvKernel>> compile(const std::vector<Trial>& trials, std::size_t first,
                                                      const lower::Target& target, std::vector<std::string>& errors) {
  std::size_t count = trials.size() - first;
  std::vector<std::optional<lower::ConvKernel>> ptx(count);
  errors.assign(count, {});
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < std::max(2u, std::thread::hardware_concurrency()); ++w)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next++) < count;) try {
          lower::ConvKernel k = lower::emit_conv(trials[first + i].conv, trials[first + i].params, target);
          lower::assemble(k.ptx, target, k.cubin);  // where ptxas fails, the driver's JIT takes the PTX
          ptx[i] = std::move(k);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
    });
  for (auto& th : pool) th.join();
  return ptx;
}

}  // namespace

int sweep(const std::vector<Problem>& problems, const std::vector<std::string>& dtypes, const SweepOptions& options,
          const std::string& out_path) {
  auto start = Clock::now();
  auto info = runtime::device_info(0);
  auto limits = device_limits(info);
  auto target = lower::target_for_compute_capability(info.compute_capability());
  runtime::Stream stream;
  // The earlier winners seed the new search, so that a sweep never ends worse than the last one.
  std::map<std::string, std::string> earlier;
  if (std::filesystem::exists(out_path)) try {
      for (const ConvWinner& w : read_winners(problems, out_path))
        earlier[w.dtype + "/" + w.problem.name + "/" + w.layout] = w.params;
    } catch (const std::exception& e) {
      fmt::print("sweep: the earlier winners in {} are not used: {}\n", out_path, e.what());
    }
  std::vector<Winner> winners;
  std::size_t total_jobs = problems.size() * dtypes.size();
  std::size_t done_jobs = 0;
  bool context_lost = false;
  for (const std::string& dt : dtypes) {
    for (const Problem& pr : problems) {
      double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      double left = options.budget_s - elapsed;
      if (left <= 5) {
        fmt::print("sweep: budget of {} s spent, {} of {} problems left unswept\n", options.budget_s,
                   total_jobs - done_jobs, total_jobs);
        break;
      }
      double job_budget = left / static_cast<double>(total_jobs - done_jobs);
      auto job_start = Clock::now();
      auto job_seconds = [&] { return std::chrono::duration<double>(Clock::now() - job_start).count(); };
      ++done_jobs;
      ir::DType t = ir::parse_dtype(dt);
      std::mt19937_64 rng(std::hash<std::string>{}(pr.name + dt));
      std::vector<Trial> trials;
      std::set<std::string> tried;
      auto add = [&](const ir::Conv& v, const lower::ConvParams& p) {
        bool fresh = tried.insert(layout_text(v) + ":" + p.str()).second;
        if (fresh) trials.push_back({v, p});
        return fresh;
      };
      int seeds = 0;
      auto model = tune::find_model("conv", t, info.name, info.compute_capability());
      for (auto [il, fl] : layouts) {
        ir::Conv v = make_conv(pr, t, il, fl);
        if (auto it = earlier.find(dt + "/" + pr.name + "/" + layout_text(v)); it != earlier.end()) try {
            lower::ConvParams p = lower::parse_conv_params(it->second);
            bool inside = p.wg ? lower::conv_legal(v, p, {}, limits) : !lower::outside_conv_space(v, p, {}, limits);
            if (inside && add(v, p)) ++seeds;
          } catch (const std::exception&) {
          }
        if (model && options.model_seeds > 0)
          for (const auto& r : tune::rank_conv_space(v, {}, limits, model->model, options.model_seeds))
            if (add(v, r.params)) ++seeds;
      }
      for (auto [il, fl] : layouts) {
        ir::Conv v = make_conv(pr, t, il, fl);
        auto space = lower::conv_space(v, {}, limits);
        std::shuffle(space.begin(), space.end(), rng);
        for (int i = 0; i < options.candidates / 3 && i < static_cast<int>(space.size()); ++i) add(v, space[i]);
        std::vector<lower::ConvParams> wgmma;
        std::copy_if(space.begin(), space.end(), std::back_inserter(wgmma),
                     [](const lower::ConvParams& p) { return p.tc == 2; });
        for (int i = 0; i < options.wgmma / 3 && i < static_cast<int>(wgmma.size()); ++i) add(v, wgmma[i]);
        auto winograd = lower::winograd_space(v, {}, limits);
        std::shuffle(winograd.begin(), winograd.end(), rng);
        for (int i = 0; i < options.winograd / 3 && i < static_cast<int>(winograd.size()); ++i) add(v, winograd[i]);
        if (options.winograd_product > 0) {
          auto product = lower::winograd_product_space(v, {}, limits);
          std::shuffle(product.begin(), product.end(), rng);
          for (int i = 0; i < options.winograd_product / 3 && i < static_cast<int>(product.size()); ++i)
            add(v, product[i]);
        }
      }

      std::map<std::string, std::unique_ptr<Operands>> operands;  // per layout
      int failures = 0, timed = 0, rounds = 0;
      // Times trials[first..] (compiled together), while the job's budget lasts.
      auto time_from = [&](std::size_t first) {
        std::vector<std::string> errors;
        auto ptx = compile(trials, first, target, errors);
        for (std::size_t i = first; i < trials.size(); ++i) {
          if (i >= std::size_t(seeds) && job_seconds() > job_budget) return;  // the seeds are always timed
          Trial& trial = trials[i];
          const std::string& error = errors[i - first];
          if (!error.empty()) {
            if (failures++ < 3) fmt::print("  {} {}: compile failed: {}\n", pr.name, trial.params.str(), error);
            continue;
          }
          auto& ops = operands[layout_text(trial.conv)];
          if (!ops) ops = std::make_unique<Operands>(trial.conv);
          try {
            CompiledConv kernel(trial.conv, std::move(*ptx[i - first]), trial.params);
            runtime::TimingOptions opt;
            opt.warmup = 1, opt.repeats = 5;
            trial.ms = runtime::time_on_stream(
                           [&](const runtime::Stream& s) {
                             kernel.run(ops->out.ptr(), ops->in.ptr(), ops->filter.ptr(), 1, 0, s);
                           },
                           stream, opt)
                           .median_ms;
            ++timed;
          } catch (const DriverError& e) {
            fmt::print("  {} {} {}: DRIVER ERROR, stopping the sweep (the context is unusable): {}\n", pr.name,
                       layout_text(trial.conv), trial.params.str(), e.what());
            context_lost = true;
            return;
          } catch (const std::exception& e) {
            if (failures++ < 3) fmt::print("  {} {}: failed: {}\n", pr.name, trial.params.str(), e.what());
          }
        }
      };
      time_from(0);
      double sampled_best = INFINITY;
      for (const Trial& trial : trials) sampled_best = std::min(sampled_best, trial.ms);
      // Hill climbing: each round tries the neighbours of the fastest sets not expanded yet.
      while (!context_lost && job_seconds() < job_budget) {
        std::vector<std::size_t> order(trials.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return trials[a].ms < trials[b].ms; });
        std::size_t first = trials.size();
        int expanded = 0;
        for (std::size_t i : order) {
          if (expanded == options.refine_top || !std::isfinite(trials[i].ms)) break;
          if (trials[i].expanded) continue;
          trials[i].expanded = true;
          ++expanded;
          const ir::Conv v = trials[i].conv;
          for (const auto& q : conv_neighbours(v, trials[i].params, limits)) add(v, q);
        }
        if (trials.size() == first) break;  // a local optimum: every neighbour tried
        ++rounds;
        time_from(first);
      }
      const Trial* best = nullptr;
      for (const Trial& trial : trials)
        if (std::isfinite(trial.ms) && (!best || trial.ms < best->ms)) best = &trial;
      if (best) {
        winners.push_back({dt, pr.name, layout_text(best->conv), best->params.str(), best->ms,
                           lower::conv_flops(best->conv) / (best->ms * 1e-3) / 1e12});
        fmt::print("[{}/{}] {} {}: {} seeds + {} sampled, {} rounds of hill climbing; {} timed, {} failed; best of the "
                   "sample {:.4f} ms, final {:.4f} ms = {:.2f} TFLOP/s with {} {} ({:.0f} s elapsed)\n",
                   done_jobs, total_jobs, dt, pr.name, seeds, options.candidates / 3 * 3, rounds, timed, failures,
                   sampled_best, best->ms, winners.back().tflops, winners.back().layout, winners.back().params,
                   std::chrono::duration<double>(Clock::now() - start).count());
      } else {
        fmt::print("[{}/{}] {} {}: NOTHING TIMED ({} failures)\n", done_jobs, total_jobs, dt, pr.name, failures);
      }
      std::fflush(stdout);
      if (context_lost) break;
    }
    if (context_lost) break;
  }
  // Problems the budget did not reach keep their earlier winners.
  if (std::filesystem::exists(out_path)) try {
      for (const ConvWinner& w : read_winners(problems, out_path)) {
        bool swept = std::any_of(winners.begin(), winners.end(), [&](const Winner& n) {
          return n.dtype == w.dtype && n.name == w.problem.name;
        });
        if (!swept) {
          fmt::print("sweep: {} {} not swept: its earlier winner is kept\n", w.dtype, w.problem.name);
          winners.push_back({w.dtype, w.problem.name, w.layout, w.params, w.ms, w.tflops});
        }
      }
    } catch (const std::exception& e) {
      fmt::print("sweep: the earlier winners in {} are not kept: {}\n", out_path, e.what());
    }
  // Written to a temporary file and renamed, so that a crash leaves the earlier winners whole.
  std::string tmp = out_path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw InvalidArgument("cannot write " + tmp);
    out << "dtype,name,layout,params,ms,tflops\n";
    for (const Winner& w : winners)
      out << fmt::format("{},{},{},\"{}\",{:.5f},{:.3f}\n", w.dtype, w.name, w.layout, w.params, w.ms, w.tflops);
  }
  std::filesystem::rename(tmp, out_path);
  fmt::print("sweep: {} winners written to {}\n", winners.size(), out_path);
  return winners.empty() || context_lost ? 1 : 0;
}

}  // namespace isaac::bench
