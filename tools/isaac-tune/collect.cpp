// isaac-tune collect: the tuner's training data (paper §4). --template gemm (the default): random GEMM
// inputs (M, N, K log-uniform with M*N*K capped, random layout and dtype, dense, batch 1), for each
// --per-shape parameter sets from the learned sampler (one per dtype), compiled on all cores
// (emission, then ptxas to a cubin; without ptxas the driver's JIT loads the PTX). --template conv:
// random DeepBench-like convolutions (N, C, K, P, Q log-uniform with the flops capped, common filters,
// strides, paddings and dilations, all three layouts), for each --per-shape parameter sets uniform
// over the legal space, emitted on all cores (the driver's JIT loads the PTX). Either way the kernels
// are timed one at a time on one stream of the GPU. A bounded queue sits between the compile workers
// and the timing thread, so the GPU always has work and memory stays bounded. Every --check-every
// kernels, the kernel is also compared with the float64 reference (GEMM: on a small awkward problem;
// CONV: on its own problem, a sample of the output). Every failure is a row with its status and
// reason, never a number. Rows are appended as they complete (collect_csv.hpp); --resume continues the
// same plan. The templates' own parts are collect_gemm.cpp and collect_conv.cpp (collect_template.hpp).
//
//   isaac-tune collect --out data.csv --count 20000 [--seconds 3600] [--dtypes f32,f16,f64] [--resume]
//   isaac-tune collect --template conv --out conv.csv --count 5000 [--dtypes f32,f16] [--resume]
//   isaac-tune collect --out data.csv --count 12 --compile-only      (no GPU: compile and record only)
#include "collect.hpp"

#include "collect_csv.hpp"
#include "collect_template.hpp"
#include "target_option.hpp"

#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/runtime/runtime.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace isaac::tune::cli {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::atomic<bool> interrupted{false};  // lock-free, so the signal handler may set it
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void on_interrupt(int) { interrupted = true; }

// SIGINT and SIGTERM stop the run cleanly (rows written and synced) while installed.
class InterruptGuard {
 public:
  InterruptGuard() {
    interrupted = false;
    old_int_ = std::signal(SIGINT, on_interrupt);
    old_term_ = std::signal(SIGTERM, on_interrupt);
  }
  ~InterruptGuard() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }

 private:
  void (*old_int_)(int) = nullptr;
  void (*old_term_)(int) = nullptr;
};

struct CollectFlags {
  std::string out, template_name = "gemm";
  std::string dtypes;  // empty: the template's default (GEMM f32,f16,f64; CONV f32,f16)
  int per_shape = 8;
  std::uint64_t count = 0;
  double seconds = 0;
  std::uint64_t seed = 1;
  int jobs = 0;
  int check_every = 16;
  bool resume = false, compile_only = false, quiet = false;
  ShapeOptions shapes;       // GEMM
  ConvShapeOptions conv;     // CONV
  std::int64_t n_min = 0, n_max = 0, k_min = 0, k_max = 0;  // N and K of either template (0: its default)
  double alpha = 1.0, uniform_share = 0.0, tc_share = 0.0;
  int max_proposals = 100000;
  int sm = 90;  // --compile-only: the target and H100-like limits
  int ordinal = 0;
  double kernel_timeout = 60;
  std::set<std::string> given;  // the long names of the options on the command line ("n-min", ...)
};

// Blocking queue of bounded size between the compile workers and the GPU thread.
class Queue {
 public:
  Queue(std::size_t capacity, int producers) : capacity_(capacity), producers_(producers) {}
  // Waits for room; false once closed (the item is dropped).
  bool push(std::unique_ptr<Job>&& item) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    ready_.notify_one();
    return true;
  }
  enum class Pop { item, timeout, finished };
  Pop pop(std::unique_ptr<Job>& out, std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, wait, [&] { return closed_ || !items_.empty() || producers_ == 0; })) return Pop::timeout;
    if (closed_ || items_.empty()) return Pop::finished;
    out = std::move(items_.front());
    items_.pop_front();
    room_.notify_one();
    return Pop::item;
  }
  void producer_done() {
    std::lock_guard lock(mutex_);
    --producers_;
    ready_.notify_all();
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    items_.clear();
    room_.notify_all();
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable room_, ready_;
  std::deque<std::unique_ptr<Job>> items_;
  std::size_t capacity_;
  int producers_;
  bool closed_ = false;
};

std::string clock_text(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  const long t = long(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

struct Tally {
  std::map<std::string, std::uint64_t> status;
  std::uint64_t rows = 0, good = 0, failed = 0;
  void add(const std::string& s) {
    ++status[s];
    ++rows;
    (s == "ok" || s == "compiled" ? good : failed) += 1;
  }
};

// The template's collector from the flags (options of the other template are refused).
std::unique_ptr<Collector> make_collector(const CollectFlags& f, const lower::DeviceLimits& device) {
  const bool conv = f.template_name == "conv";
  if (!conv && f.template_name != "gemm")
    throw InvalidArgument(fmt::format("--template {}: gemm or conv", f.template_name));
  static const char* const gemm_only[] = {"m-min", "m-max", "max-mnk", "alpha", "uniform-share", "max-proposals"};
  static const char* const conv_only[] = {"c-min", "c-max", "pq-min", "pq-max", "max-flops", "max-elements"};
  for (const char* name : conv ? std::span<const char* const>(gemm_only) : std::span<const char* const>(conv_only))
    if (f.given.count(name))
      throw InvalidArgument(fmt::format("--{} applies to --template {} only", name, conv ? "gemm" : "conv"));
  auto range = [&](const char* name, std::int64_t value, std::int64_t& field) {
    if (f.given.count(name)) field = value;
  };
  if (conv) {
    ConvPlanOptions po;
    po.shapes = f.conv;
    range("n-min", f.n_min, po.shapes.n_min);
    range("n-max", f.n_max, po.shapes.n_max);
    range("k-min", f.k_min, po.shapes.k_min);
    range("k-max", f.k_max, po.shapes.k_max);
    if (f.given.count("aligned-share")) po.shapes.aligned_share = f.shapes.aligned_share;
    if (!f.dtypes.empty()) po.shapes.dtypes = parse_dtype_list(f.dtypes);
    po.per_shape = f.per_shape;
    po.seed = f.seed;
    po.tc_share = f.tc_share;
    po.device = device;
    return make_conv_collector(po);
  }
  PlanOptions po;
  po.shapes = f.shapes;
  range("n-min", f.n_min, po.shapes.n_min);
  range("n-max", f.n_max, po.shapes.n_max);
  range("k-min", f.k_min, po.shapes.k_min);
  range("k-max", f.k_max, po.shapes.k_max);
  po.shapes.dtypes = parse_dtype_list(f.dtypes.empty() ? "f32,f16,f64" : f.dtypes);
  po.per_shape = f.per_shape;
  po.seed = f.seed;
  po.alpha = f.alpha;
  po.uniform_share = f.uniform_share;
  po.tc_share = f.tc_share;
  po.max_proposals = f.max_proposals;
  po.device = device;
  return make_gemm_collector(po);
}

int run_collect(const CollectFlags& f) {
  if (f.out.empty()) throw InvalidArgument("--out: the CSV to write is required");
  if (f.count == 0 && !(f.seconds > 0))
    throw InvalidArgument("give --count N (kernels in the plan) or --seconds S (a time budget), or both");
  if (f.check_every < 0) throw InvalidArgument(fmt::format("--check-every {}: 0 (never) or more", f.check_every));
  if (!(f.kernel_timeout > 0)) throw InvalidArgument("--kernel-timeout must be > 0 seconds");
  const int jobs = f.jobs > 0 ? f.jobs : int(std::max(1u, std::thread::hardware_concurrency()));

  // Without --compile-only, no work starts without a driver and a device.
  lower::DeviceLimits device;
  lower::Target target;
  std::string device_name = "no GPU (--compile-only)";
  if (!f.compile_only) {
    std::string why;
    if (!runtime::driver_available(&why))
      throw DriverError(why + " (isaac-tune collect times kernels on the GPU; --compile-only only compiles them)");
    runtime::block_on_waits(f.ordinal);  // the timing thread leaves the cores to the compile workers
    const runtime::DeviceInfo info = runtime::device_info(f.ordinal);
    device = device_limits(info);
    target = lower::target_for_compute_capability(info.compute_capability());
    device_name = fmt::format("{} (sm_{}, {} SMs)", info.name, info.compute_capability(), info.sm_count);
  } else {
    target = target_option(f.sm, "--sm");  // a target ptxas would refuse fails every row
    device.sm = target.sm;
  }
  const std::unique_ptr<Collector> collector = make_collector(f, device);  // validates the options
  const std::string signature = collector->signature();
  const std::string header = collector->header();

  std::size_t torn = 0;
  const std::map<std::uint64_t, StoredRow> stored =
      f.resume ? read_for_resume(f.out, signature, header, &torn) : std::map<std::uint64_t, StoredRow>{};
  RowWriter writer(f.out, signature, header, f.resume);
  const std::uint64_t limit = f.count ? f.count : std::numeric_limits<std::uint64_t>::max();
  std::uint64_t present = 0;
  for (const auto& [index, row] : stored) present += index < limit;
  const std::uint64_t to_do = f.count ? f.count - present : 0;  // 0: unbounded (time budget)

  const CompileSettings settings{.target = target, .ptxas = lower::ptxas_available(), .compile_only = f.compile_only};
  if (!f.compile_only)
    collector->open_gpu(GpuOptions{.ordinal = f.ordinal, .seed = f.seed, .kernel_timeout_s = f.kernel_timeout}, writer);
  fmt::print(stderr, "isaac-tune collect: {} -> {}\n  device {}, target {}, {} ({} compile workers)\n  plan: {}\n",
             f.resume && !stored.empty() ? "resuming" : "starting", f.out, device_name, target.name(),
             collector->compile_steps(settings), jobs, signature);
  if (f.resume)
    fmt::print(stderr, "  {} rows already in the file ({} of this plan's first {}){}\n", stored.size(), present,
               f.count ? std::to_string(f.count) : std::string("..."),
               torn ? fmt::format("; dropped a torn last line of {} bytes", torn) : std::string{});
  if (f.count && to_do == 0) {
    fmt::print("isaac-tune collect: all {} rows of the plan are already in {}\n", f.count, f.out);
    return 0;
  }

  InterruptGuard interrupt_guard;
  Queue queue(std::size_t(2 * jobs), jobs);
  std::mutex plan_mutex, fatal_mutex;
  std::atomic<bool> stop{false};
  std::exception_ptr fatal;
  std::atomic<std::uint64_t> compiled_count{0};
  std::atomic<double> compile_ms_total{0};
  auto set_fatal = [&](std::exception_ptr e) {
    {
      std::lock_guard lock(fatal_mutex);
      if (!fatal) fatal = e;
    }
    stop = true;
    queue.close();
  };
  auto next_job = [&]() -> std::unique_ptr<Job> {
    std::lock_guard lock(plan_mutex);
    while (!stop && !interrupted && collector->next_index() < limit) {
      auto it = stored.find(collector->next_index());
      std::unique_ptr<Job> job = collector->next(it != stored.end());
      if (it == stored.end()) return job;
      if (job->row.problem != it->second.problem || (job->params_planned && job->row.params != it->second.params))
        throw InvalidArgument(fmt::format(
            "{}: row {} holds {} {}, where this plan has {} {}: the file was written by another version of the "
            "sampler, of the shapes or of the legality check; collect into a new --out",
            f.out, job->row.index, it->second.problem, it->second.params.empty() ? "(no legal set)" : it->second.params,
            job->row.problem,
            !job->params_planned ? "(parameters not worked out)"
                                 : job->row.params.empty() ? "(no legal set)" : job->row.params));
    }
    return nullptr;
  };
  auto worker = [&] {
    try {
      while (std::unique_ptr<Job> job = next_job()) {
        const auto start = Clock::now();
        job->compile(settings);
        compiled_count += 1;
        compile_ms_total += ms_since(start);
        if (stop || interrupted || !queue.push(std::move(job))) break;
      }
    } catch (...) {
      set_fatal(std::current_exception());
    }
    queue.producer_done();
  };
  std::vector<std::thread> workers;
  struct Joiner {
    std::atomic<bool>& stop;
    Queue& queue;
    std::vector<std::thread>& threads;
    ~Joiner() {
      stop = true;
      queue.close();
      for (auto& t : threads)
        if (t.joinable()) t.join();
    }
  } joiner{stop, queue, workers};
  const auto start = Clock::now();
  for (int j = 0; j < jobs; ++j) workers.emplace_back(worker);

  Tally tally;
  double gpu_busy_s = 0;
  std::uint64_t gpu_kernels = 0;
  auto last_progress = Clock::now() - std::chrono::seconds(1);
  auto show = [&](bool force) {
    if (f.quiet || (!force && Clock::now() - last_progress < std::chrono::milliseconds(200))) return;
    last_progress = Clock::now();
    const double elapsed = seconds_since(start);
    const double rate = elapsed > 0 ? double(tally.rows) / elapsed : 0;
    double left = to_do && rate > 0 ? double(to_do - std::min(to_do, tally.rows)) / rate
                                    : std::numeric_limits<double>::infinity();
    if (f.seconds > 0) left = std::min(left, std::max(0.0, f.seconds - elapsed));
    fmt::print(stderr, "\r  {}/{}  {:.2f} kernels/s  {} {}  failed {}  {} elapsed  {} left   ", tally.rows,
               to_do ? std::to_string(to_do) : std::string("?"), rate, f.compile_only ? "compiled" : "ok", tally.good,
               tally.failed, clock_text(elapsed), clock_text(left));
    std::fflush(stderr);
  };

  const char* stopped_by = nullptr;
  for (;;) {
    if (interrupted) {
      stopped_by = "interrupted";
      break;
    }
    if (f.seconds > 0 && seconds_since(start) >= f.seconds) {
      stopped_by = "the time budget (--seconds) is spent";
      break;
    }
    std::unique_ptr<Job> job;
    const auto got = queue.pop(job, std::chrono::milliseconds(200));
    if (got == Queue::Pop::finished) break;
    if (got == Queue::Pop::timeout) {
      show(false);
      continue;
    }
    if (interrupted) {
      stopped_by = "interrupted";
      break;
    }
    ResultRow& row = job->row;
    if (row.status.empty() && f.compile_only) row.status = "compiled";
    if (row.status.empty()) {
      const auto busy = Clock::now();
      const bool check = f.check_every > 0 && gpu_kernels++ % std::uint64_t(f.check_every) == 0;
      try {
        job->run(check);
      } catch (const Error&) {  // the context is lost: keep the row, then stop
        writer.write(format_row(row));
        writer.sync();
        if (!f.quiet) fmt::print(stderr, "\n");
        throw;
      }
      gpu_busy_s += seconds_since(busy);
    }
    writer.write(format_row(row));
    tally.add(row.status);
    show(false);
  }
  stop = true;
  queue.close();
  for (auto& t : workers) t.join();
  writer.sync();
  show(true);
  if (!f.quiet) fmt::print(stderr, "\n");
  if (fatal) std::rethrow_exception(fatal);

  const double elapsed = seconds_since(start);
  fmt::print("isaac-tune collect: {} rows written to {} in {:.1f} s{}\n", tally.rows, f.out, elapsed,
             stopped_by ? fmt::format(" (stopped: {}; --resume goes on)", stopped_by) : std::string{});
  std::string statuses;
  for (const auto& [s, n] : tally.status) statuses += fmt::format("{}{} {}", statuses.empty() ? "" : ", ", s, n);
  fmt::print("  status: {}\n", statuses.empty() ? "none" : statuses);
  const double per_kernel = compiled_count ? compile_ms_total.load() / double(compiled_count) : 0;
  fmt::print("  compiled {} kernels: {:.2f} kernels/s on {} workers ({:.0f} ms per kernel on one core, {})\n",
             compiled_count.load(), elapsed > 0 ? double(compiled_count) / elapsed : 0.0, jobs, per_kernel,
             collector->compile_steps(settings));
  fmt::print("{}", collector->notes());
  if (!f.compile_only) {
    const auto ok = tally.status.count("ok") ? tally.status.at("ok") : 0;
    fmt::print("  timed {} kernels: {:.2f} per second; GPU thread busy {:.0f}% of the time; {} spot checks\n", ok,
               elapsed > 0 ? double(ok) / elapsed : 0.0, elapsed > 0 ? 100 * gpu_busy_s / elapsed : 0.0,
               collector->checks());
  }
  return 0;
}

}  // namespace

void add_collect_command(CLI::App& app) {
  auto f = std::make_shared<CollectFlags>();
  auto* cmd = app.add_subcommand("collect", "training data: random GEMMs (or convolutions, --template conv) x "
                                            "parameter sets, compiled on all cores and timed on the GPU (or only "
                                            "compiled, --compile-only)");
  cmd->add_option("--out", f->out, "CSV to write (rows appended as they complete)")->required();
  cmd->add_option("--template", f->template_name, "gemm (parameter sets from the learned sampler) or conv (uniform "
                                                  "over the legal space)")
      ->check(CLI::IsMember({"gemm", "conv"}))
      ->capture_default_str();
  cmd->add_option("--count", f->count, "kernels in the plan (rows 0 .. N-1)");
  cmd->add_option("--seconds", f->seconds, "time budget: stop cleanly after this many seconds");
  cmd->add_flag("--resume", f->resume, "continue the plan in --out: skip the rows present, append the rest");
  cmd->add_flag("--compile-only", f->compile_only, "no GPU: compile the plan and record status 'compiled'");
  cmd->add_option("--dtypes", f->dtypes, "dtypes to draw from, comma-separated (default: f32,f16,f64 for gemm, "
                                         "f32,f16 for conv)");
  cmd->add_option("--per-shape", f->per_shape, "parameter sets per random input")->capture_default_str();
  cmd->add_option("--seed", f->seed, "the plan's seed")->capture_default_str();
  cmd->add_option("--jobs", f->jobs, "compile workers (default: all cores)");
  cmd->add_option("--check-every", f->check_every, "spot-check every Nth kernel against the float64 reference (0: "
                                                   "never)")->capture_default_str();
  // Both templates: N and K (GEMM: columns and depth; CONV: images and filters).
  const ShapeOptions gemm_shapes;
  const ConvShapeOptions conv_shapes;
  cmd->add_option("--n-min", f->n_min, fmt::format("smallest N (default: gemm {}, conv {})", gemm_shapes.n_min,
                                                   conv_shapes.n_min));
  cmd->add_option("--n-max", f->n_max, fmt::format("largest N (default: gemm {}, conv {})", gemm_shapes.n_max,
                                                   conv_shapes.n_max));
  cmd->add_option("--k-min", f->k_min, fmt::format("smallest K (default: gemm {}, conv {})", gemm_shapes.k_min,
                                                   conv_shapes.k_min));
  cmd->add_option("--k-max", f->k_max, fmt::format("largest K (default: gemm {}, conv {})", gemm_shapes.k_max,
                                                   conv_shapes.k_max));
  cmd->add_option("--aligned-share", f->shapes.aligned_share,
                  "share of the inputs with M, N and K (gemm) or N, C and K (conv) rounded up to multiples of 8")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  // GEMM only.
  cmd->add_option("--m-min", f->shapes.m_min, "gemm: smallest M")->capture_default_str();
  cmd->add_option("--m-max", f->shapes.m_max, "gemm: largest M")->capture_default_str();
  cmd->add_option("--max-mnk", f->shapes.max_mnk, "gemm: largest M*N*K (keeps each kernel short)")->capture_default_str();
  cmd->add_option("--alpha", f->alpha, "gemm: the sampler's Dirichlet concentration (> 0)")->capture_default_str();
  cmd->add_option("--uniform-share", f->uniform_share, "gemm: fraction of the rows drawn uniformly over the legal "
                                                       "space instead of by the learned sampler (which favours small "
                                                       "tiles)")->capture_default_str();
  cmd->add_option("--tc-share", f->tc_share, "f16, f32 and f64: fraction of the rows drawn uniformly over the "
                                             "tensor-core sets alone (on sm_90, half of the f16 and f32 ones TC=2)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--max-proposals", f->max_proposals, "gemm: sampler proposals per parameter set before a row is "
                                                       "'illegal'")->capture_default_str();
  // CONV only.
  cmd->add_option("--c-min", f->conv.c_min, "conv: fewest input channels C")->capture_default_str();
  cmd->add_option("--c-max", f->conv.c_max, "conv: most input channels C")->capture_default_str();
  cmd->add_option("--pq-min", f->conv.pq_min, "conv: smallest output height P and width Q")->capture_default_str();
  cmd->add_option("--pq-max", f->conv.pq_max, "conv: largest output height P and width Q")->capture_default_str();
  cmd->add_option("--max-flops", f->conv.max_flops, "conv: largest 2*N*P*Q*K*C*R*S (keeps each kernel short)")
      ->capture_default_str();
  cmd->add_option("--max-elements", f->conv.max_elements, "conv: largest input and output, in elements")
      ->capture_default_str();
  cmd->add_option("--sm", f->sm, "with --compile-only: the target (limits are the H100's)")->capture_default_str();
  cmd->add_option("--device", f->ordinal, "CUDA device ordinal")->capture_default_str();
  cmd->add_option("--kernel-timeout", f->kernel_timeout, "seconds after which a kernel counts as hung (the row is "
                                                         "recorded and the process exits 3)")->capture_default_str();
  cmd->add_flag("--quiet", f->quiet, "no progress line");
  cmd->callback([f, cmd] {
    f->given.clear();
    for (const CLI::Option* option : cmd->get_options())
      if (option->count() > 0)
        for (const std::string& name : option->get_lnames()) f->given.insert(name);
    try {
      run_collect(*f);
    } catch (const isaac::Error&) {
      throw;
    } catch (const std::exception& e) {
      throw isaac::Error(fmt::format("collect: {}", e.what()));
    }
  });
}

}  // namespace isaac::tune::cli
