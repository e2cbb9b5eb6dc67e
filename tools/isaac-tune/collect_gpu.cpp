#include "collect_gpu.hpp"

#include "collect_check.hpp"

#include <isaac/error.hpp>
#include <isaac/ir/evaluate.hpp>
#include <isaac/runtime/timer.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace isaac::tune::cli {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

constexpr int exit_hung = 3;

}  // namespace

runtime::Buffer random_buffer(std::int64_t elements, const HostArray& block, ir::DType dtype) {
  const std::size_t elem = ir::size_of(dtype);
  const std::size_t count = std::size_t(std::max<std::int64_t>(elements, 1));
  if (block.values.empty() || block.bytes.size() != block.values.size() * elem)
    throw InvalidArgument(fmt::format("random_buffer: a block of {} values in {} bytes is not one of {}",
                                      block.values.size(), block.bytes.size(), ir::name(dtype)));
  runtime::Buffer buffer(count * elem);
  const std::size_t prefix = std::min(count, block.values.size()) * elem;
  buffer.upload(block.bytes.data(), prefix);
  buffer.repeat_prefix(prefix);
  return buffer;
}

const HostArray& GpuRunnerBase::random_block(ir::DType dtype, std::size_t period) {
  auto [it, added] = blocks_.try_emplace({dtype, period});
  if (added) {
    std::mt19937_64 rng(options_.seed * 0x9e3779b97f4a7c15ull + period * 8 + std::uint64_t(dtype));
    it->second = random_host_array(dtype, period, rng);
  }
  return it->second;
}

Watchdog::Watchdog(RowWriter& writer, double limit_seconds) : writer_(writer), limit_(limit_seconds) {
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::arm(const ResultRow& row) {
  ResultRow hung = row;
  hung.status = "launch";
  hung.reason = fmt::format("the kernel did not finish within {:.0f} s (hung or far too slow): isaac-tune exited "
                            "(status {}); --resume goes on without it",
                            limit_, exit_hung);
  std::lock_guard lock(mutex_);
  line_ = format_row(hung);
  since_ = Clock::now();
  armed_ = true;
}

void Watchdog::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
}

void Watchdog::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (stop_ || !armed_ || ms_since(since_) < limit_ * 1e3) continue;
    std::fprintf(stderr, "\nisaac-tune collect: a kernel has not finished after %.0f s; recording it and exiting "
                         "(status %d); rerun with --resume to go on\n", limit_, exit_hung);
    try {
      writer_.write(line_);
      writer_.sync();
    } catch (...) {
    }
    std::fflush(stderr);
    std::_Exit(exit_hung);
  }
}

GpuRunnerBase::GpuRunnerBase(const GpuOptions& options, RowWriter& writer)
    : options_(options),
      info_(runtime::device_info(options.ordinal)),
      limits_(device_limits(info_)),
      stream_((runtime::use_device(options.ordinal), runtime::Stream())),
      watchdog_(writer, options.kernel_timeout_s) {}

GpuRunnerBase::~GpuRunnerBase() = default;

void GpuRunnerBase::time(const std::function<void(const runtime::Stream&)>& enqueue, ResultRow& row) {
  // One warm-up and min_repeats runs; then more, up to max_repeats, until the runs add up to target_ms.
  auto first = runtime::time_on_stream(enqueue, stream_,
                                       {.warmup = 1, .repeats = options_.min_repeats, .flush_l2 = true});
  std::vector<double> samples = first.samples_ms;
  const double sum = std::accumulate(samples.begin(), samples.end(), 0.0);
  const double mean = sum / double(samples.size());
  const int room = options_.max_repeats - int(samples.size());
  if (sum < options_.target_ms && room > 0) {
    const int more = std::clamp(int(std::ceil((options_.target_ms - sum) / std::max(mean, 1e-4))), 1, room);
    auto rest = runtime::time_on_stream(enqueue, stream_, {.warmup = 0, .repeats = more, .flush_l2 = true});
    samples.insert(samples.end(), rest.samples_ms.begin(), rest.samples_ms.end());
  }
  std::sort(samples.begin(), samples.end());
  row.median_ms = samples[samples.size() / 2];
  row.min_ms = samples.front();
  row.max_ms = samples.back();
}

std::string phases_note(const GpuRunnerBase::Phases& phases) {
  if (phases.kernels == 0) return {};
  const double n = double(phases.kernels);
  return fmt::format("  GPU thread per kernel: {:.2f} ms loading the module, {:.2f} ms spot checks, {:.2f} ms preparing "
                     "operands, {:.2f} ms timing\n",
                     phases.load_ms / n, phases.check_ms / n, phases.operands_ms / n, phases.timing_ms / n);
}

bool GpuRunnerBase::context_alive() {
  try {
    stream_.synchronize();
    runtime::Buffer probe(256);
    probe.fill_bytes(0);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void GpuRunnerBase::fail(ResultRow& row, const char* status, const std::string& what, const std::exception& e,
                         const std::string& problem) {
  row.status = status;
  row.reason = what + ": " + e.what();
  row.median_ms = row.min_ms = row.max_ms = std::nan("");
  if (!context_alive())
    throw Error(fmt::format("the CUDA context was lost after plan row {} ({} on {} with {}): {}", row.index, what,
                            problem, row.params, one_line(e.what(), 300)));
}

GpuRunner::~GpuRunner() = default;

GpuRunner::Operands& GpuRunner::operands_for(std::uint64_t shape, const ir::Gemm& g) {
  auto it = std::find_if(operands_.begin(), operands_.end(), [&](const Operands& o) { return o.shape == shape; });
  if (it != operands_.end()) {
    operands_.splice(operands_.begin(), operands_, it);
    return operands_.front();
  }
  // Rows arrive nearly in plan order: keeping two shapes covers the rows that overtake each other.
  while (operands_.size() >= 2) operands_.pop_back();
  const ir::GemmStorage s = ir::gemm_storage(g);
  // Two periods, so that A and B do not hold the same values.
  Operands o{shape, random_buffer(s.a, random_block(g.dtype, std::size_t(1) << 20), g.dtype),
             random_buffer(s.b, random_block(g.dtype, (std::size_t(1) << 20) - 3), g.dtype),
             runtime::Buffer(std::size_t(s.c) * ir::size_of(g.dtype))};
  operands_.push_front(std::move(o));
  return operands_.front();
}

std::string GpuRunner::spot_check(const CompiledGemm& gemm, const ir::Gemm& like, std::uint64_t variant) {
  const lower::GemmParams& p = gemm.params();
  const auto g = awkward_gemm(like, p, limits_, variant);
  if (!g) return {};  // no small problem is legal for these parameters (not seen in practice)
  ++checks_;
  const ir::GemmStorage s = ir::gemm_storage(*g);
  std::mt19937_64 rng(options_.seed ^ (variant * 0xbf58476d1ce4e5b9ull));
  const HostArray a = random_host_array(g->dtype, std::size_t(s.a), rng), b = random_host_array(g->dtype, std::size_t(s.b), rng);
  runtime::Buffer da(a.bytes.size()), db(b.bytes.size()), dc(std::size_t(s.c) * ir::size_of(g->dtype));
  da.upload(a.bytes.data(), a.bytes.size());
  db.upload(b.bytes.data(), b.bytes.size());
  dc.fill_bytes(0xff);  // NaN in every float type: an element the kernel does not write fails the check
  gemm.run(*g, dc.ptr(), da.ptr(), db.ptr(), 1.0, 0.0, stream_);
  stream_.synchronize();
  std::vector<unsigned char> c(dc.bytes());
  dc.download(c.data(), c.size());
  std::vector<double> ref(std::size_t(s.c), 0.0);
  ir::reference_gemm(*g, 1.0, 0.0, a.values.data(), b.values.data(), ref.data());
  const double tolerance = check_tolerance(g->dtype, g->k, p.acc32 != 0, p.kg > 1 ? p.kg : 1);
  return compare_c(*g, c, ref, tolerance);
}

void GpuRunner::process(const ir::Gemm& g, const lower::GemmParams& p, lower::GemmKernel kernel,
                        std::uint64_t shape, bool check, ResultRow& row) {
  Armed armed(watchdog_, row);
  ++phases_.kernels;
  const auto load_start = Clock::now();
  std::optional<CompiledGemm> gemm;
  try {
    gemm.emplace(std::move(kernel), p, lower::SplitMode::atomic, options_.ordinal);
    const auto attributes = gemm->attributes();
    row.registers = attributes.registers;
    row.local_bytes = attributes.local_bytes;
  } catch (const std::exception& e) {
    row.compile_ms += ms_since(load_start);
    return fail(row, "jit", "loading the module", e, ir::to_string(g));
  }
  const double load_ms = ms_since(load_start);
  row.compile_ms += load_ms;
  phases_.load_ms += load_ms;
  if (check) {
    std::string wrong;
    try {
      Phase phase(phases_.check_ms);
      wrong = spot_check(*gemm, g, row.index);
    } catch (const std::exception& e) {
      return fail(row, "launch", "spot check", e, ir::to_string(g));
    }
    if (!wrong.empty()) {
      row.status = "wrong";
      row.reason = wrong;
      return;
    }
  }
  try {
    Operands* ops = nullptr;
    {
      Phase phase(phases_.operands_ms);
      ops = &operands_for(shape, g);
    }
    Phase phase(phases_.timing_ms);
    time([&](const runtime::Stream& s) { gemm->run(g, ops->c.ptr(), ops->a.ptr(), ops->b.ptr(), 1.0, 0.0, s); }, row);
  } catch (const std::exception& e) {
    return fail(row, "launch", "timing", e, ir::to_string(g));
  }
  row.status = "ok";
}

}  // namespace isaac::tune::cli
