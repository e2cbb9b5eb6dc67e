// `sweep`: the search. For each problem x dtype (a "job"): the seeds (the earlier winner under --merge or
// --resume, tune::heuristic_gemm's set) and a random sample of gemm_space (sampling.hpp), then hill
// climbing from the fastest (refine.hpp: rounds of neighbours of the --refine-top fastest sets, while a
// round finds a faster one); every candidate compiled on all cores, timed alone on the GPU (L2 flushed);
// then the fastest checked against a float64 reference until one is right; the winners and every trial
// written.
//
// Time: the whole run stops within --budget-seconds. Each job gets an equal share of what is left when
// it starts (a job that converges early leaves its rest to the later ones): --random-share of it for the
// seeds and the sample, the rest for the refinement. Both compile and time in chunks until their share
// is spent, so every job gets a winner even when compilation turns out slower than hoped. Compilation and timing never overlap (a
// module load on another thread could delay a launch inside a timed region).
//
// Files, rewritten or appended after every job (a killed run keeps what it finished):
//   --out   the winners (winners.hpp);
//   <--all>.done  the names of the jobs finished (what --resume skips);
//   --all   every trial: dtype,suite,m,n,k,at,bt,params,status,median_ms,min_ms,max_ms,tflops,registers,
//           local_bytes,shared_bytes,threads,blocks,emit_ms,compile_ms,reason,phase
//           phase: seed | random | refine (an older file without the column gets it, as random, on --merge);
//           status: ok | pruned (first run > --prune x the best so far: timed once) | compile_failed |
//           run_failed | wrong (failed the check) | crashed (broke the CUDA context) | untried.
#include "ceilings.hpp"
#include "compile_pool.hpp"
#include "csv.hpp"
#include "cublas.hpp"
#include "modes.hpp"
#include "operands.hpp"
#include "problems.hpp"
#include "progress.hpp"
#include "refine.hpp"
#include "sampling.hpp"
#include "winners.hpp"

#include <isaac/gemm.hpp>
#include <isaac/runtime/timer.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace isaac::bench {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

struct Job {
  ir::DType dtype;
  Problem problem;
  ir::Gemm gemm;
  std::string name;  // problem_name: also the key of resume
  Sample sample;
  std::string sample_error;
};

struct Trial {
  lower::GemmParams params;
  std::string status = "untried";
  double median_ms = nan, min_ms = nan, max_ms = nan;
  int registers = -1, local_bytes = -1, shared_bytes = -1, threads = 0;
  std::int64_t blocks = 0;
  double emit_ms = nan, compile_ms = nan;
  std::string reason;
  std::string phase = "random";  // seed | random | refine
};

constexpr const char* all_header =
    "dtype,suite,m,n,k,at,bt,params,status,median_ms,min_ms,max_ms,tflops,registers,local_bytes,shared_bytes,"
    "threads,blocks,emit_ms,compile_ms,reason,phase\n";

std::string number_or_empty(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : std::string{};
}

std::string format_trial(const Job& job, const Trial& t) {
  const Problem& p = job.problem;
  double tflops = std::isfinite(t.median_ms) ? p.flops() / (t.median_ms * 1e-3) / 1e12 : nan;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", ir::name(job.dtype),
                     csv_field(p.suite), p.m, p.n, p.k, int(p.at), int(p.bt), csv_field(t.params.str()), t.status,
                     number_or_empty(t.median_ms, 6), number_or_empty(t.min_ms, 6), number_or_empty(t.max_ms, 6),
                     number_or_empty(tflops, 3), t.registers >= 0 ? std::to_string(t.registers) : "",
                     t.local_bytes >= 0 ? std::to_string(t.local_bytes) : "",
                     t.shared_bytes >= 0 ? std::to_string(t.shared_bytes) : "", t.threads, t.blocks,
                     number_or_empty(t.emit_ms, 2), number_or_empty(t.compile_ms, 2), csv_field(t.reason),
                     t.phase);
}

bool failed(const Trial& t) {
  return t.status == "compile_failed" || t.status == "run_failed" || t.status == "wrong" || t.status == "crashed";
}

// A kernel that never finishes would block the sweep until it is killed, and with it every later job.
// While a candidate runs, this thread watches the clock; past the limit it records the candidate as
// crashed (so that --resume skips it) and ends the process with exit_context_lost.
class Watchdog {
 public:
  Watchdog(std::string all_path, double limit_seconds) : path_(std::move(all_path)), limit_(limit_seconds) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  // From now until disarm(), `row` (an --all CSV row with status crashed) describes what runs.
  void arm(std::string row) {
    std::lock_guard lock(mutex_);
    row_ = std::move(row);
    since_ = Clock::now();
    armed_ = true;
  }
  void disarm() {
    std::lock_guard lock(mutex_);
    armed_ = false;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(250));
      if (stop_ || !armed_ || since(since_) < limit_) continue;
      std::fflush(stdout);
      std::fprintf(stderr,
                   "\nsweep: a kernel has not finished after %.0f s: recording it as crashed in %s and "
                   "exiting (exit %d); rerun with --resume to go on without it\n",
                   limit_, path_.c_str(), exit_context_lost);
      try {
        append_file(path_, "", row_);
      } catch (...) {
      }
      std::fflush(stderr);
      std::_Exit(exit_context_lost);
    }
  }

  std::string path_;
  double limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  std::string row_;
  Clock::time_point since_{};
  bool armed_ = false, stop_ = false;
};

// After a failed launch: is the context still usable, or did the kernel leave a sticky error?
bool context_alive(const runtime::Stream& stream) {
  try {
    stream.synchronize();
    runtime::Buffer probe(256);
    probe.fill_bytes(0);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The most frequent failure reasons of a job, for its summary line.
std::string failure_summary(const std::vector<Trial>& trials) {
  std::map<std::string, int> reasons;
  for (const auto& t : trials)
    if (failed(t)) ++reasons[t.status + ": " + t.reason.substr(0, 160)];
  std::vector<std::pair<int, std::string>> sorted;
  for (auto& [r, n] : reasons) sorted.emplace_back(n, r);
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out;
  for (std::size_t i = 0; i < sorted.size() && i < 3; ++i)
    out += fmt::format("\n      {} x {}", sorted[i].first, sorted[i].second);
  if (sorted.size() > 3) out += fmt::format("\n      ... and {} other reasons (see the --all CSV)", sorted.size() - 3);
  return out;
}

// Draws every job's sample on all cores (gemm_space takes seconds per problem).
void draw_samples(std::vector<Job>& jobs, const lower::DeviceLimits& limits, const SampleOptions& base,
                  const std::map<std::string, std::set<std::string>>& exclude, int threads) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      Job& job = jobs[i];
      SampleOptions o = base;
      o.seed = hash_name(job.name, base.seed);
      auto ex = exclude.find(job.name);
      try {
        job.sample = draw_sample(job.gemm, limits, o, ex == exclude.end() ? std::set<std::string>{} : ex->second);
        if (job.sample.params.empty()) job.sample_error = "gemm_space has no legal parameter set for this problem";
      } catch (const std::exception& e) {
        job.sample_error = one_line(e.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, static_cast<int>(jobs.size())); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

std::vector<Job> make_jobs(const SweepOptions& o) {
  std::vector<Job> jobs;
  auto problems = load_problems(o.problems);
  for (ir::DType dtype : parse_dtypes(o.dtypes))
    for (const auto& p : problems) {
      Job job{dtype, p, to_gemm(p, dtype), problem_name(dtype, p), {}, {}};
      if (!o.only.empty() && job.name.find(o.only) == std::string::npos) continue;
      jobs.push_back(std::move(job));
    }
  if (jobs.empty())
    throw BenchError(fmt::format("no job: --dtypes '{}' and --only '{}' select nothing", o.dtypes, o.only));
  return jobs;
}

// --dry-run: no GPU. Enumerate and sample, then emit every sampled set's PTX with LLVM (for sm_90).
int dry_run(std::vector<Job>& jobs, const SweepOptions& o) {
  int threads = default_threads(o.threads);
  lower::DeviceLimits limits;  // the H100's
  SampleOptions so{.count = o.candidates, .seed = o.seed, .sm_count = 132, .acc16_fraction = o.acc16_fraction, .tc_fraction = o.tc_fraction, .only_tc = o.only_tc};
  auto t0 = Clock::now();
  draw_samples(jobs, limits, so, {}, threads);
  // --merge/--resume: the earlier winners seed the jobs (and those no longer legal are named).
  std::vector<Winner> earlier;
  std::error_code ec;
  if ((o.merge || o.resume) && std::filesystem::exists(o.out, ec)) earlier = read_winners(o.out);
  int no_longer_legal = 0;
  fmt::print("dry run: {} jobs sampled in {:.1f} s on {} threads (H100 limits, 132 SMs)\n", jobs.size(), since(t0),
             threads);
  lower::Target target = lower::target_for_compute_capability(90);
  lower::SplitMode mode = parse_split_mode(o.split_mode);
  int total_failures = 0;
  for (auto& job : jobs) {
    fmt::print("{}: {}\n", job.name,
               job.sample_error.empty() ? job.sample.summary() : "no sample: " + job.sample_error);
    // What the GPU run would add to the sample: the heuristic's seed, and (standing in for the
    // refinement, which needs timings) the neighbours of the seed and of the sample's first set.
    std::vector<lower::GemmParams> all = job.sample.params;
    std::size_t seeds = 0, refine = 0;
    if (job.sample_error.empty()) {
      std::string dropped;
      auto w = std::find_if(earlier.begin(), earlier.end(),
                            [&](const Winner& x) { return problem_name(x.dtype, x.problem) == job.name; });
      auto seed_sets = search_seeds(job.gemm, limits, w == earlier.end() ? "" : w->params, &dropped);
      if (!dropped.empty()) fmt::print("    seed: {}\n", dropped);
      no_longer_legal += dropped.find("earlier winner") != std::string::npos;
      std::vector<lower::GemmParams> around = seed_sets;
      if (!job.sample.params.empty()) around.push_back(job.sample.params.front());
      for (const auto& p : seed_sets)
        if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p), ++seeds;
      for (const auto& c : around)
        for (const auto& p : neighbours(job.gemm, c, limits)) {
          if (refine >= static_cast<std::size_t>(o.candidates)) break;
          if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p), ++refine;
        }
      fmt::print("    + {} seed(s), {} neighbours of the seed and of the first sampled set\n", seeds, refine);
    }
    for (const auto& p : all)
      if (auto why = outside_space(job.gemm, p, limits)) {
        fmt::print("    OUTSIDE THE SPACE: {}: {}\n", p.str(), *why);
        ++total_failures;
      }
    std::vector<std::string> errors(all.size());
    std::vector<double> emit_ms(all.size(), 0);
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
      for (std::size_t i; (i = next.fetch_add(1)) < all.size();) {
        try {
          auto k = lower::emit_gemm(job.gemm, all[i], target, mode);
          emit_ms[i] = k.emit_ms;
          if (k.ptx.empty()) errors[i] = "empty PTX";
        } catch (const std::exception& e) {
          errors[i] = one_line(e.what());
        }
      }
    };
    auto t1 = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    int failures = 0;
    std::string first;
    for (std::size_t i = 0; i < errors.size(); ++i)
      if (!errors[i].empty()) {
        if (!failures) first = all[i].str() + ": " + errors[i];
        ++failures;
      }
    double mean = 0, worst = 0;
    for (double ms : emit_ms) {
      mean += ms / double(std::max<std::size_t>(emit_ms.size(), 1));
      worst = std::max(worst, ms);
    }
    fmt::print("    emitted {} in {:.1f} s (LLVM {:.1f} ms mean, {:.1f} ms max per kernel), {} failed{}\n",
               errors.size(), since(t1), mean, worst, failures, failures ? "; first: " + first : "");
    total_failures += failures + !job.sample_error.empty();
  }
  if (!earlier.empty())
    fmt::print("dry run: {} earlier winners in {}, {} of the jobs' no longer legal (a GPU sweep replaces them)\n",
               earlier.size(), o.out, no_longer_legal);
  return total_failures ? exit_failed : exit_ok;
}

}  // namespace

int sweep_main(const SweepOptions& o) {
  auto start = Clock::now();
  if (o.candidates < 1) throw BenchError("--candidates must be at least 1");
  if (!(o.random_share > 0 && o.random_share <= 1)) throw BenchError("--random-share must be in (0, 1]");
  if (o.refine_top < 0 || o.refine_rounds < 0) throw BenchError("--refine-top and --refine-rounds must be >= 0");
  if (o.repeats < 1 || o.warmup < 0) throw BenchError("--repeats must be at least 1 and --warmup at least 0");
  std::vector<Job> jobs = make_jobs(o);
  if (o.dry_run) return dry_run(jobs, o);

  lower::SplitMode mode = parse_split_mode(o.split_mode);
  int threads = default_threads(o.threads);
  runtime::use_device(0);
  runtime::DeviceInfo info = runtime::device_info(0);
  lower::DeviceLimits limits = device_limits(info);
  runtime::Stream stream;
  Cublas cublas;
  fmt::print(
      "sweep on {} (sm_{}, {} SMs), driver {}, {}; {} jobs, up to {} candidates each, {} compile threads, "
      "budget {:.0f} s, split mode {}\n",
      info.name, info.compute_capability(), info.sm_count, runtime::driver_version(), cublas.version(), jobs.size(),
      o.candidates, threads, o.budget_seconds, o.split_mode);

  // Merge or resume: the winners found earlier stay (a job's own unless beaten), and the candidates that
  // broke the context earlier are not tried again.
  std::vector<Winner> winners;
  std::map<std::string, std::set<std::string>> exclude;
  const std::string done_path = o.all + ".done";  // the jobs finished, one name a line (for --resume)
  if (o.resume || o.merge) {
    std::error_code ec;
    if (std::filesystem::exists(o.out, ec)) winners = read_winners(o.out);
    if (std::filesystem::exists(o.all, ec)) {
      CsvTable t = read_csv(o.all);
      if (std::find(t.header.begin(), t.header.end(), "phase") == t.header.end()) {
        // Written before the refinement: every trial was random. Add the column, so that appending works.
        std::string text = all_header;
        for (const auto& row : t.rows) {
          for (const auto& field : row) text += csv_field(field) + ",";
          text += "random\n";
        }
        write_file(o.all, text);
        fmt::print("{}: added the column phase (random) to its {} earlier trials\n", o.all, t.rows.size());
        t = read_csv(o.all);
      }
      std::size_t dt = t.column("dtype"), su = t.column("suite"), m = t.column("m"), n = t.column("n"),
                  k = t.column("k"), at = t.column("at"), bt = t.column("bt"), pa = t.column("params"),
                  st = t.column("status");
      for (const auto& row : t.rows)
        if (row[st] == "crashed") {
          Problem p{.suite = row[su],
                    .m = std::stoll(row[m]),
                    .n = std::stoll(row[n]),
                    .k = std::stoll(row[k]),
                    .at = row[at] == "1",
                    .bt = row[bt] == "1"};
          exclude[problem_name(parse_one_dtype(row[dt]), p)].insert(row[pa]);
        }
    }
    if (o.resume) {
      // The jobs an earlier run finished (listed in <all>.done), or without that list those with a winner.
      std::set<std::string> done;
      std::ifstream list(done_path);
      if (list) {
        for (std::string line; std::getline(list, line);)
          if (!line.empty()) done.insert(line);
      } else {
        for (const auto& w : winners) done.insert(problem_name(w.dtype, w.problem));
      }
      std::erase_if(jobs, [&](const Job& j) { return done.count(j.name) > 0; });
    }
    if (!o.resume) write_file(done_path, "");  // a new run: --resume continues this one
    std::size_t excluded = 0;
    for (auto& [key, set] : exclude) excluded += set.size();
    fmt::print("{}: {} earlier winners in {}, {} jobs to run, {} candidates excluded (they broke the context)\n",
               o.resume ? "resume" : "merge", winners.size(), o.out, jobs.size(), excluded);
  } else {
    write_file(o.all, all_header);
    write_file(done_path, "");
  }
  write_file(o.out, format_winners(winners));
  if (jobs.empty()) {
    fmt::print("nothing left to sweep\n");
    return exit_ok;
  }

  // Phase 1: every job's sample, on all cores.
  auto t_sample = Clock::now();
  SampleOptions so{
      .count = o.candidates, .seed = o.seed, .sm_count = info.sm_count, .acc16_fraction = o.acc16_fraction, .tc_fraction = o.tc_fraction, .only_tc = o.only_tc};
  draw_samples(jobs, limits, so, exclude, threads);
  double sample_seconds = since(t_sample);
  std::size_t planned = 0;
  for (const auto& j : jobs) planned += j.sample.params.size();
  fmt::print("sampled {} jobs in {:.1f} s: {} candidates in all\n", jobs.size(), sample_seconds, planned);
  std::fflush(stdout);

  // Phase 2: the jobs, one after the other.
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.budget_seconds));
  auto left = [&] { return std::chrono::duration<double>(deadline - Clock::now()).count(); };
  Progress progress;
  std::size_t processed = 0;  // candidates compiled and timed (or failed), all jobs
  double compile_seconds = 0, time_seconds = 0, check_seconds = 0;
  double rate = 0;  // candidates per second through compile + time, measured
  std::vector<std::string> without_winner;
  int exit_code = exit_ok;

  Watchdog watchdog(o.all, o.hang_seconds);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    Job& job = jobs[j];
    auto hung_row = [&](const Trial& t) {
      Trial h = t;
      h.status = "crashed";
      h.reason = fmt::format("did not finish within {:.0f} s (hung)", o.hang_seconds);
      return format_trial(job, h);
    };
    auto job_start = Clock::now();
    double slice = std::max(0.0, (left() - 2.0) / double(jobs.size() - j));
    // The trials of the job in the order tried: the seeds (an earlier winner, the heuristic's set), the
    // random sample, then each refinement round's neighbours. No set is tried twice.
    std::vector<Trial> trials;
    std::vector<std::optional<CompiledGemm>> kernels;
    std::set<std::string> known;
    if (auto ex = exclude.find(job.name); ex != exclude.end()) known = ex->second;
    auto add = [&](const lower::GemmParams& p, const char* phase) {
      if (!known.insert(p.str()).second) return false;
      Trial t;
      t.params = p;
      t.phase = phase;
      trials.push_back(std::move(t));
      kernels.emplace_back();
      return true;
    };
    auto earlier_winner = std::find_if(winners.begin(), winners.end(),
                                       [&](const Winner& w) { return problem_name(w.dtype, w.problem) == job.name; });
    bool earlier_illegal = false;
    if (job.sample_error.empty()) {
      std::string dropped;
      auto seeds = search_seeds(job.gemm, limits,
                                earlier_winner == winners.end() ? std::string{} : earlier_winner->params, &dropped);
      earlier_illegal = earlier_winner != winners.end() && dropped.find("earlier winner") != std::string::npos;
      if (!dropped.empty()) {
        progress.finish_line();
        fmt::print("{}: {}\n", job.name, dropped);
      }
      for (const auto& p : seeds) add(p, "seed");
      for (const auto& p : job.sample.params) add(p, "random");
    }
    planned = planned + trials.size() - job.sample.params.size();  // the seeds (the sample is counted already)
    std::string no_winner_reason;
    double best_ms = std::numeric_limits<double>::infinity();
    bool context_lost = false;
    std::size_t next = 0, job_failures = 0;
    int round = 0;  // refinement rounds started

    auto show = [&](bool force) {
      double elapsed = since(start);
      double remaining_candidates = double(planned - processed);
      double eta = rate > 0 ? std::min(remaining_candidates / rate, std::max(0.0, left())) : std::max(0.0, left());
      progress.show(
          fmt::format("[sweep {:.0f}/{:.0f} s] job {}/{} {}: {}/{} tried{}, {} failed, best {} | all {}/{}, "
                      "{:.1f} cand/s, ETA {:.0f} s",
                      elapsed, o.budget_seconds, j + 1, jobs.size(), job.name, next, trials.size(),
                      round ? fmt::format(" (refine {})", round) : std::string{}, job_failures,
                      std::isfinite(best_ms)
                          ? fmt::format("{:.1f} TFLOP/s", job.problem.flops() / (best_ms * 1e-3) / 1e12)
                          : std::string("-"),
                      processed, planned, rate, eta),
          force);
    };

    if (!job.sample_error.empty()) no_winner_reason = job.sample_error;
    std::optional<Operands> ops;
    if (no_winner_reason.empty() && left() > 1.0) {
      try {
        ops.emplace(job.gemm, hash_name(job.name, o.seed), cublas, stream);
      } catch (const std::exception& e) {
        no_winner_reason = "could not set up the operands and the reference: " + one_line(e.what());
        if (!context_alive(stream)) context_lost = true;
      }
    } else if (no_winner_reason.empty()) {
      no_winner_reason = "not reached: the time budget was spent";
    }

    // Compiles and times trials[next, end) in chunks until `phase_end` (seconds into the job) or the end
    // of the budget; the job's very first chunk always runs.
    auto try_trials = [&](std::size_t end, double phase_end) {
      while (ops && !context_lost && next < end) {
        // Chunks of at least one candidate per thread (fewer would leave cores idle), at most four; a phase
        // stops once its share is spent or the next chunk would mostly fall outside it.
        double job_elapsed = since(job_start);
        double min_chunk_seconds = rate > 0 ? threads / rate : 0;
        if (next > 0 && (job_elapsed + 0.5 * min_chunk_seconds >= phase_end || left() <= 1.0)) break;
        double remaining = std::max(0.0, phase_end - job_elapsed);
        std::size_t chunk =
            rate > 0 ? static_cast<std::size_t>(std::clamp(remaining * rate, double(threads), 4.0 * threads))
                     : static_cast<std::size_t>(threads);
        chunk = std::min(chunk, end - next);
        std::vector<lower::GemmParams> params;
        for (std::size_t c = 0; c < chunk; ++c) params.push_back(trials[next + c].params);

        auto chunk_start = Clock::now();
        auto compiled = compile_all(job.gemm, params, mode, threads);
        compile_seconds += since(chunk_start);
        auto time_start = Clock::now();
        for (std::size_t c = 0; c < chunk; ++c) {
          Trial& t = trials[next + c];
          t.threads = t.params.threads();
          t.blocks = output_tiles(job.gemm, t.params) * t.params.kg;
          t.compile_ms = compiled[c].wall_ms;
          if (!compiled[c].gemm) {
            t.status = "compile_failed";
            t.reason = compiled[c].error;
            continue;
          }
          kernels[next + c] = std::move(compiled[c].gemm);
          const CompiledGemm& gemm = *kernels[next + c];
          t.threads = gemm.kernel().threads;  // as launched: TMA=1 may add a producer warp
          t.emit_ms = gemm.kernel().emit_ms;
          t.shared_bytes = gemm.kernel().shared_bytes;
          try {
            auto attributes = gemm.attributes();
            t.registers = attributes.registers;
            t.local_bytes = attributes.local_bytes;
          } catch (const std::exception&) {
          }
          if (left() <= 0.5) {
            t.status = "untried";
            t.reason = "the time budget was spent";
            continue;
          }
          auto enqueue = [&](const runtime::Stream& s) {
            gemm.run(job.gemm, ops->c(), ops->a(), ops->b(), 1.0, 0.0, s);
          };
          watchdog.arm(hung_row(t));
          try {
            auto first = runtime::time_on_stream(enqueue, stream, {.warmup = 1, .repeats = 1, .flush_l2 = true});
            if (std::isfinite(best_ms) && first.median_ms > o.prune * best_ms) {
              t.status = "pruned";
              t.median_ms = t.min_ms = t.max_ms = first.median_ms;
            } else {
              auto full = runtime::time_on_stream(enqueue, stream,
                                                  {.warmup = o.warmup, .repeats = o.repeats, .flush_l2 = true});
              t.status = "ok";
              t.median_ms = full.median_ms;
              t.min_ms = full.min_ms;
              t.max_ms = full.max_ms;
              best_ms = std::min(best_ms, full.median_ms);
            }
          } catch (const std::exception& e) {
            t.reason = one_line(e.what());
            if (context_alive(stream)) {
              t.status = "run_failed";
            } else {
              t.status = "crashed";
              context_lost = true;
              watchdog.disarm();
              break;
            }
          }
          watchdog.disarm();
        }
        time_seconds += since(time_start);
        for (std::size_t c = 0; c < chunk; ++c) job_failures += failed(trials[next + c]);
        next += chunk;
        processed += chunk;
        double chunk_seconds = since(chunk_start);
        if (chunk_seconds > 0)
          rate = rate > 0 ? 0.5 * rate + 0.5 * double(chunk) / chunk_seconds : double(chunk) / chunk_seconds;
        show(false);
      }
    };

    // Phase 1: the seeds and the random sample, within the random share of the job's time (all of it
    // without refinement).
    bool refine = o.refine_rounds > 0 && o.refine_top > 0;
    try_trials(trials.size(), refine ? o.random_share * slice : slice);
    std::size_t random_untried = trials.size() - next;
    planned -= random_untried;
    next = trials.size();  // what the random phase left untried stays so (recorded as untried)

    // Phase 2: hill climbing. Each round tries the neighbours of the fastest sets not expanded yet
    // (interleaved, the fastest first); it goes on while a round finds a faster set and time is left.
    std::set<std::string> expanded;
    std::size_t refined = 0;
    double before_refine_ms = best_ms;
    while (refine && ops && !context_lost && round < o.refine_rounds && std::isfinite(best_ms)) {
      double job_elapsed = since(job_start);
      double min_chunk_seconds = rate > 0 ? threads / rate : 0;
      if (job_elapsed + 0.5 * min_chunk_seconds >= slice || left() <= 1.0) break;
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < trials.size(); ++i)
        if (trials[i].status == "ok" && !expanded.count(trials[i].params.str())) order.push_back(i);
      std::sort(order.begin(), order.end(), [&](auto a, auto b) { return trials[a].median_ms < trials[b].median_ms; });
      if (order.size() > static_cast<std::size_t>(o.refine_top)) order.resize(static_cast<std::size_t>(o.refine_top));
      if (order.empty()) break;
      std::vector<std::vector<lower::GemmParams>> around;
      for (std::size_t i : order) {
        expanded.insert(trials[i].params.str());
        around.push_back(neighbours(job.gemm, trials[i].params, limits));
      }
      std::size_t first = trials.size();
      for (std::size_t k = 0;; ++k) {
        bool any = false;
        for (const auto& list : around)
          if (k < list.size()) {
            any = true;
            add(list[k], "refine");
          }
        if (!any) break;
      }
      if (trials.size() == first) break;  // every neighbour tried already: a local optimum
      ++round;
      planned += trials.size() - first;
      double round_best_before = best_ms;
      try_trials(trials.size(), slice);
      refined += next - first;
      planned -= trials.size() - next;
      next = trials.size();
      if (!(best_ms < round_best_before)) break;  // nothing faster in this round
    }
    progress.finish_line();
    if (refine && round > 0)
      fmt::print("{}: refinement: {} rounds, {} neighbours tried, best {:.4f} -> {:.4f} ms\n",
                 job.name, round, refined, before_refine_ms, best_ms);

    // The check: the fastest candidates in order until one matches the float64 reference.
    std::optional<Winner> winner;
    std::string winner_phase;
    if (ops && !context_lost) {
      auto check_start = Clock::now();
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < trials.size(); ++i)
        if (trials[i].status == "ok") order.push_back(i);
      std::sort(order.begin(), order.end(), [&](auto a, auto b) { return trials[a].median_ms < trials[b].median_ms; });
      int checked = 0;
      std::string last_check;
      for (std::size_t i : order) {
        if (checked++ >= o.verify) break;
        Trial& t = trials[i];
        const CompiledGemm& gemm = *kernels[i];
        watchdog.arm(hung_row(t));
        struct Disarm {
          Watchdog& w;
          ~Disarm() { w.disarm(); }
        } disarm{watchdog};
        try {
          ops->poison_c(stream);
          gemm.run(job.gemm, ops->c(), ops->a(), ops->b(), 1.0, 0.0, stream);
          auto check = ops->check_c(tolerance_for(job.dtype, job.problem.k, t.params.acc32 != 0,
                                                  output_roundings(t.params.kg, mode == lower::SplitMode::atomic)),
                                    stream);
          last_check = check.str();
          if (!check.ok) {
            t.status = "wrong";
            t.reason = check.str();
            ++job_failures;
            continue;
          }
          std::size_t tried = 0;
          for (const auto& tr : trials) tried += tr.status != "untried";
          int failures = 0;
          for (const auto& tr : trials) failures += failed(tr);
          winner = Winner{job.dtype,
                          job.problem,
                          t.params.str(),
                          t.median_ms,
                          job.problem.flops() / (t.median_ms * 1e-3) / 1e12,
                          static_cast<int>(tried),
                          failures};
          winner_phase = t.phase;
          break;
        } catch (const std::exception& e) {
          t.reason = one_line(e.what());
          ++job_failures;
          if (context_alive(stream)) {
            t.status = "run_failed";
          } else {
            t.status = "crashed";
            context_lost = true;
            break;
          }
        }
      }
      check_seconds += since(check_start);
      if (!winner && !context_lost)
        no_winner_reason = order.empty()
                               ? "no candidate compiled and ran"
                               : fmt::format("none of the {} fastest candidates passed the check (last: {})",
                                             std::min<int>(o.verify, static_cast<int>(order.size())), last_check);
    }

    // Record the job.
    progress.finish_line();
    bool reached = ops.has_value();
    std::string rows;
    for (const auto& t : trials) rows += format_trial(job, t);
    if (reached) append_file(o.all, all_header, rows);
    std::size_t tried = 0;
    std::map<std::string, int> tried_by_phase;
    for (const auto& t : trials)
      if (t.status != "untried") {
        ++tried;
        ++tried_by_phase[t.phase];
      }
    std::string phases;
    for (const char* ph : {"seed", "random", "refine"})
      phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", tried_by_phase[ph], ph);
    auto earlier = std::find_if(winners.begin(), winners.end(),
                                [&](const Winner& w) { return problem_name(w.dtype, w.problem) == job.name; });
    if (winner && earlier != winners.end()) {
      if (earlier_illegal || winner->median_ms < earlier->median_ms) {
        fmt::print("{}: replaces the earlier winner ({:.4f} ms, {}){}\n", job.name, earlier->median_ms, earlier->params,
                   earlier_illegal ? ": no longer legal" : "");
        *earlier = *winner;
      } else {
        fmt::print("{}: the earlier winner stays ({:.4f} ms, {}): faster than this run's best\n", job.name,
                   earlier->median_ms, earlier->params);
      }
      write_file(o.out, format_winners(winners));
    } else if (winner) {
      winners.push_back(*winner);
      write_file(o.out, format_winners(winners));
    }
    if (winner) {
      fmt::print("{}: {:.2f} TFLOP/s ({:.4f} ms) with {} ({}); {} tried of {} queued ({}), {} failed, {:.1f} s{}\n",
                 job.name, winner->tflops, winner->median_ms, winner->params, winner_phase, tried, trials.size(),
                 phases, winner->failures, since(job_start), failure_summary(trials));
    } else {
      if (no_winner_reason.empty()) no_winner_reason = "the CUDA context was lost";
      if (earlier == winners.end()) without_winner.push_back(job.name + ": " + no_winner_reason);
      fmt::print("{}: NO WINNER: {}; {} tried of {} queued ({}), {:.1f} s{}{}\n", job.name, no_winner_reason, tried,
                 trials.size(), phases, since(job_start),
                 earlier == winners.end()
                     ? std::string{}
                     : fmt::format(" (the earlier winner stays: {:.4f} ms, {})", earlier->median_ms, earlier->params),
                 failure_summary(trials));
    }
    std::fflush(stdout);
    if (context_lost) {
      std::string culprit;
      for (const auto& t : trials)
        if (t.status == "crashed") culprit = t.params.str() + ": " + t.reason;
      fmt::print(
          "CONTEXT LOST in {}: a kernel left the CUDA context unusable ({}). Winners so far are in {}; rerun "
          "with --resume to go on without that candidate.\n",
          job.name, culprit.empty() ? "while setting up the job" : culprit, o.out);
      return exit_context_lost;
    }
    if (reached) append_file(done_path, "", job.name + "\n");
    show(true);
  }
  progress.finish_line();

  fmt::print(
      "sweep done in {:.1f} s (sampling {:.1f} s, compiling {:.1f} s, timing {:.1f} s, checking {:.1f} s): "
      "{} winners in {}, every trial in {}\n",
      since(start), sample_seconds, compile_seconds, time_seconds, check_seconds, winners.size(), o.out, o.all);
  if (!without_winner.empty()) {
    fmt::print("{} jobs without a winner:\n", without_winner.size());
    for (const auto& w : without_winner) fmt::print("  {}\n", w);
    exit_code = exit_partial;
  }
  return exit_code;
}

}  // namespace isaac::bench
