// isaac-tune collect: the tuner's training data (paper §4). Random GEMM inputs (M, N, K log-uniform with
// M*N*K capped, random layout and dtype, dense, batch 1), for each --per-shape parameter sets from the
// learned sampler (one per dtype), compiled on all cores (emission, then ptxas to a cubin; without
// ptxas the driver's JIT loads the PTX) and timed one at a time on one stream of the GPU. A bounded
// queue sits between the compile workers and the timing thread, so the GPU always has work and memory
// stays bounded. Every --check-every kernels, the kernel also runs on a small awkward problem and is
// compared with the float64 reference. Every failure is a row with its status and reason, never a
// number. Rows are appended as they complete (collect_csv.hpp); --resume continues the same plan.
//
//   isaac-tune collect --out data.csv --count 20000 [--seconds 3600] [--dtypes f32,f16,f64] [--resume]
//   isaac-tune collect --out data.csv --count 12 --compile-only      (no GPU: compile and record only)
#include "collect.hpp"

#include "collect_csv.hpp"
#include "collect_gpu.hpp"
#include "collect_plan.hpp"

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
  std::string out, dtypes = "f32,f16,f64";
  int per_shape = 8;
  std::uint64_t count = 0;
  double seconds = 0;
  std::uint64_t seed = 1;
  int jobs = 0;
  int check_every = 16;
  bool resume = false, compile_only = false, quiet = false;
  ShapeOptions shapes;
  double alpha = 1.0, uniform_share = 0.0;
  int max_proposals = 100000;
  int sm = 90;  // --compile-only: the target and H100-like limits
  int ordinal = 0;
  double kernel_timeout = 60;
};

// A kernel on its way from a compile worker to the GPU thread.
struct Compiled {
  ResultRow row;
  std::uint64_t shape = 0;
  lower::GemmKernel kernel;
};

// Blocking queue of bounded size between the compile workers and the GPU thread.
class Queue {
 public:
  Queue(std::size_t capacity, int producers) : capacity_(capacity), producers_(producers) {}
  // Waits for room; false once closed (the item is dropped).
  bool push(Compiled&& item) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    ready_.notify_one();
    return true;
  }
  enum class Pop { item, timeout, finished };
  Pop pop(Compiled& out, std::chrono::milliseconds wait) {
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
  std::deque<Compiled> items_;
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

// Kernels that ptxas failed on and that go to the driver's JIT instead (GPU runs only).
std::atomic<std::uint64_t> ptxas_fallbacks{0};

// Compiles one plan row on a worker: emission, then ptxas to a cubin where it is installed. With
// `jit_fallback` (a GPU run), a kernel that ptxas fails on keeps its PTX for the driver's JIT, so that
// a ptxas older than the PTX that LLVM writes costs speed, not the run; the first such failure is
// reported on stderr and the summary counts them.
Compiled compile_row(const PlanRow& r, const lower::Target& target, bool use_ptxas, bool jit_fallback,
                     int max_proposals) {
  Compiled c;
  c.shape = r.shape;
  c.row.index = r.index;
  c.row.problem = r.problem;
  c.row.params = r.params;
  c.row.phase = r.uniform ? "uniform" : "sampler";
  if (!r.params) {
    c.row.status = "illegal";
    c.row.reason = fmt::format("{} found no legal parameter set for {} in {} proposals",
                               r.uniform ? "uniform sampling" : "the learned sampler", ir::to_string(r.problem),
                               max_proposals);
    return c;
  }
  const lower::GemmParams& p = *r.params;
  const ir::Gemm& g = r.problem;
  c.row.threads = p.threads();
  c.row.blocks = ((g.m + p.ml - 1) / p.ml) * ((g.n + p.nl - 1) / p.nl) * p.kg * g.batch;
  const auto start = Clock::now();
  try {
    c.kernel = lower::emit_gemm(g, p, target, lower::SplitMode::atomic);
    c.row.emit_ms = c.kernel.emit_ms;
    c.row.shared_bytes = c.kernel.shared_bytes;
  } catch (const std::exception& e) {
    c.row.status = "compile";
    c.row.reason = std::string("emission: ") + e.what();
  }
  if (c.row.status.empty() && use_ptxas) {
    std::string failure;
    try {
      const auto report = lower::run_ptxas(c.kernel.ptx, target, c.kernel.main_name, &c.kernel.cubin);
      if (!report.ok) {
        failure = "ptxas: " + report.log;
      } else {
        c.row.registers = report.registers;
        c.row.local_bytes = report.stack_bytes;
      }
    } catch (const std::exception& e) {
      failure = std::string("ptxas: ") + e.what();
    }
    if (!failure.empty() && jit_fallback) {
      c.kernel.cubin.clear();
      if (ptxas_fallbacks++ == 0)
        fmt::print(stderr, "\nisaac-tune collect: {} (plan row {}); this and later such kernels go to the driver's JIT\n",
                   one_line(failure, 400), r.index);
    } else if (!failure.empty()) {
      c.row.status = "compile";
      c.row.reason = failure;
    }
  }
  if (!c.row.status.empty()) c.kernel = {};
  c.row.compile_ms = ms_since(start);
  return c;
}

int run_collect(const CollectFlags& f) {
  if (f.out.empty()) throw InvalidArgument("--out: the CSV to write is required");
  if (f.count == 0 && !(f.seconds > 0))
    throw InvalidArgument("give --count N (kernels in the plan) or --seconds S (a time budget), or both");
  if (f.check_every < 0) throw InvalidArgument(fmt::format("--check-every {}: 0 (never) or more", f.check_every));
  if (!(f.kernel_timeout > 0)) throw InvalidArgument("--kernel-timeout must be > 0 seconds");
  const int jobs = f.jobs > 0 ? f.jobs : int(std::max(1u, std::thread::hardware_concurrency()));

  PlanOptions po;
  po.shapes = f.shapes;
  po.shapes.dtypes = parse_dtype_list(f.dtypes);
  po.per_shape = f.per_shape;
  po.seed = f.seed;
  po.alpha = f.alpha;
  po.uniform_share = f.uniform_share;
  po.max_proposals = f.max_proposals;

  // Without --compile-only, no work starts without a driver and a device.
  lower::Target target;
  std::string device_name = "no GPU (--compile-only)";
  if (!f.compile_only) {
    std::string why;
    if (!runtime::driver_available(&why))
      throw DriverError(why + " (isaac-tune collect times kernels on the GPU; --compile-only only compiles them)");
    const runtime::DeviceInfo info = runtime::device_info(f.ordinal);
    po.device = device_limits(info);
    target = lower::target_for_compute_capability(info.compute_capability());
    device_name = fmt::format("{} (sm_{}, {} SMs)", info.name, info.compute_capability(), info.sm_count);
  } else {
    po.device.sm = f.sm;
    target = lower::target_for_compute_capability(f.sm);
  }
  Plan plan(po);  // validates the options
  const std::string signature = po.signature();

  std::size_t torn = 0;
  const std::map<std::uint64_t, StoredRow> stored =
      f.resume ? read_for_resume(f.out, signature, &torn) : std::map<std::uint64_t, StoredRow>{};
  RowWriter writer(f.out, signature, f.resume);
  const std::uint64_t limit = f.count ? f.count : std::numeric_limits<std::uint64_t>::max();
  std::uint64_t present = 0;
  for (const auto& [index, row] : stored) present += index < limit;
  const std::uint64_t to_do = f.count ? f.count - present : 0;  // 0: unbounded (time budget)

  const bool use_ptxas = lower::ptxas_available();
  std::unique_ptr<GpuRunner> gpu;
  if (!f.compile_only) gpu = std::make_unique<GpuRunner>(GpuOptions{.ordinal = f.ordinal, .seed = f.seed,
                                                                    .kernel_timeout_s = f.kernel_timeout},
                                                         writer);
  fmt::print(stderr, "isaac-tune collect: {} -> {}\n  device {}, target {}, {} ({} compile workers)\n  plan: {}\n",
             f.resume && !stored.empty() ? "resuming" : "starting", f.out, device_name, target.name(),
             use_ptxas ? "ptxas to cubins" : "PTX for the driver's JIT (no ptxas)", jobs, signature);
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
  auto next_row = [&]() -> std::optional<PlanRow> {
    std::lock_guard lock(plan_mutex);
    while (!stop && !interrupted && plan.next_index() < limit) {
      PlanRow r = plan.next();
      auto it = stored.find(r.index);
      if (it == stored.end()) return r;
      if (!(stored_form(r.problem, r.params) == it->second))
        throw InvalidArgument(fmt::format(
            "{}: row {} holds {} {} {} {} {}{} {}, where this plan has {} with {}: the file was written by another "
            "version of the sampler or of the legality check; collect into a new --out",
            f.out, r.index, it->second.dtype, it->second.m, it->second.n, it->second.k, it->second.at, it->second.bt,
            it->second.params, ir::to_string(r.problem), r.params ? r.params->str() : "no legal set"));
    }
    return std::nullopt;
  };
  auto worker = [&] {
    try {
      while (auto r = next_row()) {
        const auto start = Clock::now();
        Compiled c = compile_row(*r, target, use_ptxas, !f.compile_only, f.max_proposals);
        compiled_count += 1;
        compile_ms_total += ms_since(start);
        if (stop || interrupted || !queue.push(std::move(c))) break;
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
    Compiled c;
    const auto got = queue.pop(c, std::chrono::milliseconds(200));
    if (got == Queue::Pop::finished) break;
    if (got == Queue::Pop::timeout) {
      show(false);
      continue;
    }
    if (interrupted) {
      stopped_by = "interrupted";
      break;
    }
    ResultRow& row = c.row;
    if (row.status.empty() && f.compile_only) row.status = "compiled";
    if (row.status.empty()) {
      const auto busy = Clock::now();
      const bool check = f.check_every > 0 && gpu_kernels++ % std::uint64_t(f.check_every) == 0;
      try {
        gpu->process(std::move(c.kernel), c.shape, check, row);
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
             use_ptxas ? "emission + ptxas" : "emission only");
  if (ptxas_fallbacks)
    fmt::print("  ptxas failed on {} kernels, which were loaded through the driver's JIT instead\n", ptxas_fallbacks.load());
  if (!f.compile_only) {
    const auto ok = tally.status.count("ok") ? tally.status.at("ok") : 0;
    fmt::print("  timed {} kernels: {:.2f} per second; GPU thread busy {:.0f}% of the time; {} spot checks\n", ok,
               elapsed > 0 ? double(ok) / elapsed : 0.0, elapsed > 0 ? 100 * gpu_busy_s / elapsed : 0.0, gpu->checks());
  }
  return 0;
}

}  // namespace

void add_collect_command(CLI::App& app) {
  auto f = std::make_shared<CollectFlags>();
  auto* cmd = app.add_subcommand("collect", "training data: random GEMMs x sampled parameter sets, compiled on all "
                                            "cores and timed on the GPU (or only compiled, --compile-only)");
  cmd->add_option("--out", f->out, "CSV to write (rows appended as they complete)")->required();
  cmd->add_option("--count", f->count, "kernels in the plan (rows 0 .. N-1)");
  cmd->add_option("--seconds", f->seconds, "time budget: stop cleanly after this many seconds");
  cmd->add_flag("--resume", f->resume, "continue the plan in --out: skip the rows present, append the rest");
  cmd->add_flag("--compile-only", f->compile_only, "no GPU: compile the plan and record status 'compiled'");
  cmd->add_option("--dtypes", f->dtypes, "dtypes to draw from, comma-separated")->capture_default_str();
  cmd->add_option("--per-shape", f->per_shape, "parameter sets per random input")->capture_default_str();
  cmd->add_option("--seed", f->seed, "the plan's seed")->capture_default_str();
  cmd->add_option("--jobs", f->jobs, "compile workers (default: all cores)");
  cmd->add_option("--check-every", f->check_every, "spot-check every Nth kernel against the float64 reference (0: "
                                                   "never)")->capture_default_str();
  cmd->add_option("--m-min", f->shapes.m_min, "smallest M")->capture_default_str();
  cmd->add_option("--m-max", f->shapes.m_max, "largest M")->capture_default_str();
  cmd->add_option("--n-min", f->shapes.n_min, "smallest N")->capture_default_str();
  cmd->add_option("--n-max", f->shapes.n_max, "largest N")->capture_default_str();
  cmd->add_option("--k-min", f->shapes.k_min, "smallest K")->capture_default_str();
  cmd->add_option("--k-max", f->shapes.k_max, "largest K")->capture_default_str();
  cmd->add_option("--max-mnk", f->shapes.max_mnk, "largest M*N*K (keeps each kernel short)")->capture_default_str();
  cmd->add_option("--alpha", f->alpha, "the sampler's Dirichlet concentration (> 0)")->capture_default_str();
  cmd->add_option("--uniform-share", f->uniform_share, "fraction of the rows drawn uniformly over the legal space "
                                                       "instead of by the learned sampler (which favours small "
                                                       "tiles)")->capture_default_str();
  cmd->add_option("--max-proposals", f->max_proposals, "sampler proposals per parameter set before a row is "
                                                       "'illegal'")->capture_default_str();
  cmd->add_option("--sm", f->sm, "with --compile-only: the target (limits are the H100's)")->capture_default_str();
  cmd->add_option("--device", f->ordinal, "CUDA device ordinal")->capture_default_str();
  cmd->add_option("--kernel-timeout", f->kernel_timeout, "seconds after which a kernel counts as hung (the row is "
                                                         "recorded and the process exits 3)")->capture_default_str();
  cmd->add_flag("--quiet", f->quiet, "no progress line");
  cmd->callback([f] {
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
