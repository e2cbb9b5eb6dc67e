#include "operands.hpp"

#include "device_sync.hpp"

#include <isaac/runtime/timer.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

namespace isaac::bench {

std::string CheckResult::str() const {
  if (nonfinite > 0)
    return fmt::format("{} non-finite elements of C (unwritten or overflowed; C was poisoned with NaN)", nonfinite);
  const std::string where = batch > 1 ? fmt::format(" in matrix {} of {}", worst_entry, batch) : "";
  return fmt::format("rel. error {:.2e}{} (tolerance {:.1e}, max abs. error {:.2e})", rel_error, where, tolerance,
                     max_abs_error);
}

double tolerance_for(ir::DType dtype, std::int64_t k, bool acc32, int output_roundings) {
  double sqrt_k = std::sqrt(double(std::max<std::int64_t>(k, 1)));
  double rounds = std::sqrt(double(std::max(output_roundings, 1)));
  switch (dtype) {
    case ir::DType::f64:
      return 10 * 0x1p-53 * sqrt_k + 2 * 0x1p-53 * rounds;
    case ir::DType::f32:
      return 10 * 0x1p-24 * sqrt_k + 2 * 0x1p-24 * rounds;
    case ir::DType::f16:
      // The output is rounded to f16 (relative 2^-11 at most per element) on top of the accumulation.
      return (acc32 ? 10 * 0x1p-24 * sqrt_k : 3 * 0x1p-11 * sqrt_k) + 2 * 0x1p-11 * rounds;
    case ir::DType::bf16:  // f32 accumulation, the output rounded to bf16 (2^-8)
      return 10 * 0x1p-24 * sqrt_k + 2 * 0x1p-8 * rounds;
    default:
      break;
  }
  throw BenchError(fmt::format("no tolerance for dtype {}", ir::name(dtype)));
}

int output_roundings(int kg, bool atomic) { return atomic && kg > 1 ? kg : 1; }

double checked_median_ms(const CompiledGemm& kernel, Operands& ops, const runtime::Stream& stream,
                         lower::SplitMode mode, int repeats) {
  const ir::Gemm& g = ops.gemm();
  auto enqueue = [&](const runtime::Stream& s) { kernel.run(g, ops.c(), ops.a(), ops.b(), 1.0, 0.0, s); };
  ops.poison_c(stream);
  enqueue(stream);
  const lower::GemmParams& p = kernel.params();
  const auto check = ops.check_c(
      tolerance_for(g.dtype, g.k, p.acc32 != 0, output_roundings(p.kg, mode == lower::SplitMode::atomic)), stream);
  if (!check.ok) throw BenchError("wrong result: " + check.str());
  return runtime::time_on_stream(enqueue, stream, {.warmup = 2, .repeats = repeats, .flush_l2 = true}).median_ms;
}

std::uint64_t hash_name(const std::string& text, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ seed;  // FNV-1a
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

// Counter-based: element i of a stream is splitmix64's output for state seed + (i + 1) * golden ratio,
// so the values do not depend on how the work is split among threads.
std::uint64_t splitmix64_at(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void draw_range(ir::DType dtype, std::size_t begin, std::size_t end, std::uint64_t seed, unsigned char* bytes,
                double* values) {
  for (std::size_t i = begin; i < end; ++i) {
    const double v = double(splitmix64_at(seed, i) >> 11) * 0x1p-53 * 2.0 - 1.0;
    unsigned char* element = bytes + i * ir::size_of(dtype);
    ir::store_element(dtype, v, element);
    values[i] = ir::load_element(dtype, element);
  }
}

// Values uniform in [-1, 1) rounded to `dtype`: the device bytes and the same values as doubles.
void draw(ir::DType dtype, std::size_t count, std::uint64_t seed, std::vector<unsigned char>& bytes,
          std::vector<double>& values) {
  if (dtype != ir::DType::f64 && dtype != ir::DType::f32 && dtype != ir::DType::f16 && dtype != ir::DType::bf16)
    throw BenchError(fmt::format("cannot draw operands of dtype {}", ir::name(dtype)));
  bytes.assign(count * ir::size_of(dtype), 0);
  values.resize(count);
  std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 32);
  if (count < (std::size_t(1) << 20)) workers = 1;
  std::vector<std::thread> threads;
  std::size_t chunk = (count + workers - 1) / workers;
  for (std::size_t w = 0; w < workers; ++w) {
    std::size_t begin = w * chunk, end = std::min(count, begin + chunk);
    if (begin >= end) break;
    threads.emplace_back(draw_range, dtype, begin, end, seed, bytes.data(), values.data());
  }
  for (auto& t : threads) t.join();
}

// Elements of an operand of `cols` columns of leading dimension `ld`, `batch` of them `stride` apart.
std::size_t stored_elements(std::int64_t ld, std::int64_t cols, std::int64_t batch, std::int64_t stride) {
  return static_cast<std::size_t>((batch - 1) * stride + ld * cols);
}

}  // namespace

Operands::Operands(const ir::Gemm& g, std::uint64_t seed, Cublas& cublas, const runtime::Stream& stream, bool reference)
    : g_(g) {
  // Stored extents, each matrix of the batch: A is lda x (at ? M : K), B is ldb x (bt ? K : N), C is ldc x N.
  std::size_t na = stored_elements(g.lda, g.a_trans ? g.m : g.k, g.batch, g.stride_a);
  std::size_t nb = stored_elements(g.ldb, g.b_trans ? g.k : g.n, g.batch, g.stride_b);
  std::size_t nc = stored_elements(g.ldc, g.n, g.batch, g.stride_c);
  std::size_t elem = ir::size_of(g.dtype);
  std::vector<unsigned char> bytes;
  std::vector<double> va, vb;
  a_ = runtime::Buffer(na * elem);
  b_ = runtime::Buffer(nb * elem);
  c_ = runtime::Buffer(nc * elem);
  draw(g.dtype, na, seed ^ 0xa, bytes, va);
  a_.upload(bytes.data(), bytes.size());
  draw(g.dtype, nb, seed ^ 0xb, bytes, vb);
  b_.upload(bytes.data(), bytes.size());
  bytes.clear();
  bytes.shrink_to_fit();
  device_synchronize("after uploading A and B");
  if (!reference) return;

  // The reference: DGEMM, strided batched for a batch, on the same values (for f64 on the operands themselves).
  ir::Gemm g64 = g;
  g64.dtype = ir::DType::f64;
  runtime::Buffer c64(nc * 8);
  if (g.dtype == ir::DType::f64) {
    cublas.gemm_ex(g64, c64.ptr(), a_.ptr(), b_.ptr(), stream);
    stream.synchronize();
  } else {
    runtime::Buffer a64(na * 8), b64(nb * 8);
    a64.upload(va.data(), na * 8);
    b64.upload(vb.data(), nb * 8);
    device_synchronize("after uploading the float64 copies of A and B");
    cublas.gemm_ex(g64, c64.ptr(), a64.ptr(), b64.ptr(), stream);
    stream.synchronize();
  }
  ref_.resize(nc);
  c64.download(ref_.data(), nc * 8);
  ref_norms_.assign(static_cast<std::size_t>(g.batch), 0);
  for (std::int64_t entry = 0; entry < g.batch; ++entry) {
    double sum = 0;
    for (std::int64_t n = 0; n < g.n; ++n)
      for (std::int64_t m = 0; m < g.m; ++m) {
        const double r = ref_[static_cast<std::size_t>(entry * g.stride_c + m + n * g.ldc)];
        sum += r * r;
      }
    double& norm = ref_norms_[static_cast<std::size_t>(entry)];
    norm = std::sqrt(sum);
    if (!(norm > 0) || !std::isfinite(norm))
      throw BenchError(fmt::format("the float64 reference of {} has norm {} (matrix {})", ir::to_string(g), norm, entry));
  }
}

void Operands::poison_c(const runtime::Stream& stream) { c_.fill_bytes(0xff, stream); }

CheckResult Operands::check_c(double tolerance, const runtime::Stream& stream) const {
  if (ref_.empty()) throw BenchError("Operands::check_c: these operands were made without a reference");
  stream.synchronize();
  std::size_t nc = ref_.size();
  std::size_t elem = ir::size_of(g_.dtype);
  std::vector<unsigned char> bytes(nc * elem);
  c_.download(bytes.data(), bytes.size());
  auto element = [&](std::size_t i) { return ir::load_element(g_.dtype, &bytes[i * ir::size_of(g_.dtype)]); };
  CheckResult r;
  r.tolerance = tolerance;
  r.batch = g_.batch;
  for (std::int64_t entry = 0; entry < g_.batch; ++entry) {
    double sum = 0;
    for (std::int64_t n = 0; n < g_.n; ++n)
      for (std::int64_t m = 0; m < g_.m; ++m) {
        const std::size_t i = static_cast<std::size_t>(entry * g_.stride_c + m + n * g_.ldc);
        const double v = element(i);
        if (!std::isfinite(v)) {
          ++r.nonfinite;
          continue;
        }
        const double d = v - ref_[i];
        sum += d * d;
        r.max_abs_error = std::max(r.max_abs_error, std::abs(d));
      }
    const double rel_error = std::sqrt(sum) / ref_norms_[static_cast<std::size_t>(entry)];
    if (rel_error > r.rel_error) {
      r.rel_error = rel_error;
      r.worst_entry = entry;
    }
  }
  r.ok = r.nonfinite == 0 && r.rel_error <= tolerance;
  return r;
}

}  // namespace isaac::bench
