// The CONV template on the GPU against the float64 reference (ir::evaluate of conv_contraction):
// every layout and dtype, padding, stride, dilation, R = S = 1, C = 1, N = 1, random legal
// parameter sets, beta != 0, bias and relu, CG splits; outputs poisoned (0xFF bytes = NaN) first.
#include <doctest/doctest.h>
#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/tuning.hpp>
#include <isaac/tune/search.hpp>
#include <isaac/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/lower/winograd.hpp>
#include <isaac/ir/evaluate.hpp>
#include <isaac/ir/pattern.hpp>
#include <isaac/runtime/runtime.hpp>

#include "support/conv_staged_cases.hpp"
#include "support/conv_tma_cases.hpp"
#include "support/host_data.hpp"
#include "support/parallel_compile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <random>

using namespace isaac;
using test::HostArray;
using ir::FilterLayout;
using ir::ImageLayout;

namespace {

struct Case {
  ir::Conv problem;
  lower::ConvParams params;
  lower::ConvEpilogue epilogue;
  double alpha, beta;
  std::int64_t output_offset = 0;  // elements between the output buffer's start and the output
};

std::string describe(const Case& c) {
  return fmt::format("{} params={} epilogue={} alpha={} beta={}{}", ir::to_string(c.problem), c.params.str(),
                     lower::to_string(c.epilogue), c.alpha, c.beta,
                     c.output_offset ? fmt::format(" output offset={}", c.output_offset) : "");
}

std::int64_t span(const std::array<std::int64_t, 4>& extents, const std::array<std::int64_t, 4>& strides) {
  std::int64_t s = 1;
  for (int d = 0; d < 4; ++d) s += (extents[d] - 1) * strides[d];
  return s;
}

// tc: 0, every set; 1, only TC=1 sets (mma.sync); 2, only TC=2 sets (wgmma: f16 and bf16 alone, and
// only the inputs whose vectors of eight fit their layout). `draws` sets per input and dtype (TC=2:
// one more).
std::vector<Case> make_cases(const lower::DeviceLimits& limits, int tc = 0,
                             std::vector<ir::DType> dtypes = {ir::DType::f32, ir::DType::f16, ir::DType::f64},
                             int draws = 2) {
  std::mt19937_64 rng(20170917);
  struct Shape {
    std::int64_t n, c, h, w, k, r, s, stride, pad, dilation;
  };
  const Shape shapes[] = {
      {2, 3, 11, 13, 8, 3, 3, 1, 1, 1},     // padding 1
      {1, 1, 9, 9, 5, 3, 3, 1, 0, 1},       // N = 1, C = 1
      {4, 16, 15, 15, 24, 3, 3, 2, 1, 1},   // stride 2
      {2, 8, 12, 10, 16, 3, 3, 1, 2, 2},    // dilation 2, padding 2
      {8, 32, 7, 7, 40, 1, 1, 1, 0, 1},     // R = S = 1
      {3, 5, 10, 14, 7, 5, 2, 1, 1, 1},     // R != S, odd sizes
      {16, 64, 14, 14, 64, 3, 3, 1, 1, 1},  // C*R*S = 576
      {8, 4, 20, 20, 33, 5, 5, 2, 2, 1},    // stride 2, padding 2, odd K
      {1, 128, 5, 5, 96, 3, 3, 1, 1, 1},    // N = 1, C*R*S = 1152
      {2, 1, 30, 30, 1, 1, 1, 1, 0, 1},     // C = K = R = S = 1
  };
  // NHWC with KCRS: channels are contiguous in the input but not consecutive in the reduction.
  const std::pair<ImageLayout, FilterLayout> layouts[] = {{ImageLayout::nchw, FilterLayout::kcrs},
                                                          {ImageLayout::chwn, FilterLayout::crsk},
                                                          {ImageLayout::nhwc, FilterLayout::krsc},
                                                          {ImageLayout::nchw, FilterLayout::crsk},
                                                          {ImageLayout::nhwc, FilterLayout::kcrs}};
  std::vector<Case> cases;
  if (tc == 2) std::erase_if(dtypes, [](ir::DType t) { return !ir::is_16_bit(t); });
  for (ir::DType t : dtypes)
    for (auto [il, fl] : layouts)
      for (const Shape& s : shapes) {
        ir::Conv v = ir::dense_conv(t, s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.dilation, il, fl);
        v.stride_w = s.stride;  // square strides, as dense_conv makes them
        auto space = lower::conv_space(v, {}, limits);
        if (tc) std::erase_if(space, [tc](const lower::ConvParams& p) { return p.tc != tc; });
        if (tc == 2 && space.empty()) continue;
        REQUIRE_MESSAGE(!space.empty(), "no legal " << (tc ? fmt::format("TC={} ", tc) : "") << "parameters for "
                                                    << ir::to_string(v));
        // Favour the vectorised sets (what the sweep picks) while keeping the scalar ones. Fewer inputs
        // take TC=2: three sets each.
        for (int i = 0; i < (tc == 2 ? draws + 1 : draws); ++i) {
          const lower::ConvParams& p = space[rng() % space.size()];
          int n = static_cast<int>(cases.size());
          lower::ConvEpilogue e{n % 3 == 1, p.cg == 1 && n % 4 == 2};
          double beta = n % 2 ? 0.0 : -0.75;
          cases.push_back({v, p, e, 1.25, beta});
        }
      }
  return cases;
}

// WG=1 (Winograd F(2x2, RxS)) cases: stride and dilation 1, every filter size it takes, padding,
// odd P and Q (half tiles), C and K past a tile, N = 1 and C = 1, every layout, f32 and f64, CL = 1
// and CL > 1.
// WG=2 (F(4x4, RxS) with a batched GEMM): the same shapes, with sets of its own space: one with the
// widest vector loads, one with KL > 1 warp groups where the space has them, and any set.
std::vector<Case> make_winograd_cases(const lower::DeviceLimits& limits, int wg = 1) {
  std::mt19937_64 rng(20160330);
  struct Shape {
    std::int64_t n, c, h, w, k, r, s, pad;
  };
  const Shape shapes[] = {
      {2, 3, 11, 13, 8, 3, 3, 1},    // odd P, Q
      {1, 1, 9, 9, 5, 3, 3, 0},      // N = 1, C = 1
      {4, 19, 14, 15, 37, 5, 5, 2},  // C and K past a tile, 5 x 5
      {3, 8, 12, 10, 16, 2, 2, 0},   // 2 x 2
      {2, 17, 10, 9, 33, 4, 4, 1},   // 4 x 4, odd Q
      {3, 5, 10, 14, 7, 5, 2, 1},    // R != S
      {2, 70, 8, 8, 65, 3, 5, 2},    // R != S, C and K over 64
      {1, 33, 1, 7, 9, 3, 3, 1},     // H = 1: one row of output
  };
  const std::pair<ImageLayout, FilterLayout> layouts[] = {{ImageLayout::nchw, FilterLayout::kcrs},
                                                          {ImageLayout::chwn, FilterLayout::crsk},
                                                          {ImageLayout::nhwc, FilterLayout::krsc},
                                                          {ImageLayout::nchw, FilterLayout::crsk}};
  std::vector<Case> cases;
  for (ir::DType t : {ir::DType::f32, ir::DType::f64})
    for (auto [il, fl] : layouts)
      for (const Shape& s : shapes) {
        ir::Conv v = ir::dense_conv(t, s.n, s.c, s.h, s.w, s.k, s.r, s.s, 1, s.pad, 1, il, fl);
        auto space = wg == 2 ? lower::winograd_product_space(v, {}, limits) : lower::winograd_space(v, {}, limits);
        REQUIRE_MESSAGE(!space.empty(), "no legal WG=" << wg << " parameters for " << ir::to_string(v));
        // WG=1, both epilogues: threads that transform their own tiles (CL = 1), and groups that split
        // the planes and meet in shared memory (CL > 1); then any set.
        std::vector<lower::ConvParams> own, split;
        for (const lower::ConvParams& p : space)
          if (wg == 1) (p.cl == 1 ? own : split).push_back(p);
          else if (p.vi * p.vf >= 8) own.push_back(p);
          else if (p.cl > 1) split.push_back(p);
        for (const auto* from : {&own, &split, &space}) {
          if (from->empty()) continue;
          const lower::ConvParams& p = (*from)[rng() % from->size()];
          int n = static_cast<int>(cases.size());
          lower::ConvEpilogue e{n % 3 == 1, n % 4 == 2};
          cases.push_back({v, p, e, 1.25, n % 2 ? 0.0 : -0.75});
        }
      }
  return cases;
}

// What a WG=1 kernel's rounding errors scale with, per output, in place of sum |I| |F|: the
// transforms' coefficients exceed 1. With U = G g Gt and V = Bt d B per channel, the output tile is
// At (sum_c U . V) A; the bound takes every matrix and operand by magnitude.
std::vector<double> winograd_magnitude(const ir::Conv& v, int tile, const HostArray& in, const HostArray& f,
                                       std::int64_t o_count) {
  const lower::WinogradMatrices mh = lower::winograd_matrices(tile, static_cast<int>(v.r));
  const lower::WinogradMatrices mw = lower::winograd_matrices(tile, static_cast<int>(v.s));
  const int ah = mh.alpha, aw = mw.alpha, r = static_cast<int>(v.r), s = static_cast<int>(v.s);
  // |X| (ah x r or ah x ah) times |Y| (r x s or ...) times |Z|t, all by magnitude.
  auto sandwich = [](const std::vector<double>& x, int xr, int xc, const std::vector<double>& y, int yc,
                     const std::vector<double>& z, int zr) {
    std::vector<double> left(static_cast<size_t>(xr * yc), 0.0), out(static_cast<size_t>(xr * zr), 0.0);
    for (int i = 0; i < xr; ++i)
      for (int j = 0; j < yc; ++j)
        for (int k = 0; k < xc; ++k) left[i * yc + j] += std::abs(x[i * xc + k]) * std::abs(y[k * yc + j]);
    for (int i = 0; i < xr; ++i)
      for (int j = 0; j < zr; ++j)
        for (int k = 0; k < yc; ++k) out[i * zr + j] += left[i * yc + k] * std::abs(z[j * yc + k]);
    return out;
  };
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;
  std::vector<std::vector<double>> u(static_cast<size_t>(v.k * v.c));
  for (std::int64_t k = 0; k < v.k; ++k)
    for (std::int64_t c = 0; c < v.c; ++c) {
      std::vector<double> g(static_cast<size_t>(r * s));
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < s; ++j) g[i * s + j] = f.values[k * fs[0] + c * fs[1] + i * fs[2] + j * fs[3]];
      u[k * v.c + c] = sandwich(mh.g, ah, r, g, s, mw.g, aw);
    }
  std::vector<double> magnitude(static_cast<size_t>(o_count), 0.0);
  const auto& os = v.output_strides;
  for (std::int64_t n = 0; n < v.n; ++n)
    for (std::int64_t tp = 0; tp < (v.p + tile - 1) / tile; ++tp)
      for (std::int64_t tq = 0; tq < (v.q + tile - 1) / tile; ++tq) {
        std::vector<std::vector<double>> planes(static_cast<size_t>(v.c));
        for (std::int64_t c = 0; c < v.c; ++c) {
          std::vector<double> d(static_cast<size_t>(ah * aw), 0.0);
          for (int a = 0; a < ah; ++a)
            for (int b = 0; b < aw; ++b) {
              std::int64_t h = tile * tp - v.pad_h + a, w = tile * tq - v.pad_w + b;
              if (h >= 0 && h < v.h && w >= 0 && w < v.w) d[a * aw + b] = in.values[n * is[0] + c * is[1] + h * is[2] + w * is[3]];
            }
          planes[c] = sandwich(mh.bt, ah, ah, d, aw, mw.bt, aw);
        }
        for (std::int64_t k = 0; k < v.k; ++k) {
          std::vector<double> m(static_cast<size_t>(ah * aw), 0.0);
          for (std::int64_t c = 0; c < v.c; ++c)
            for (int e = 0; e < ah * aw; ++e) m[e] += u[k * v.c + c][e] * planes[c][e];
          std::vector<double> y = sandwich(mh.at, tile, ah, m, aw, mw.at, tile);
          for (int x = 0; x < tile; ++x)
            for (int z = 0; z < tile; ++z)
              if (tile * tp + x < v.p && tile * tq + z < v.q)
                magnitude[n * os[0] + k * os[1] + (tile * tp + x) * os[2] + (tile * tq + z) * os[3]] = y[x * tile + z];
        }
      }
  return magnitude;
}

// Runs one case on the GPU and compares every output element with the reference: where the
// reference is infinite or NaN (`place_specials` put such values in the input), the same value.
void check(const Case& c, const CompiledConv& kernel, std::mt19937_64& rng,
           const std::function<void(const ir::Conv&, HostArray& input)>& place_specials = {}) {
  const ir::Conv& v = c.problem;
  std::int64_t in_count = span({v.n, v.c, v.h, v.w}, v.input_strides);
  std::int64_t f_count = span({v.k, v.c, v.r, v.s}, v.filter_strides);
  // The output buffer: the offset, then the output's span (with the gaps of its strides).
  std::int64_t o_count = c.output_offset + span({v.n, v.k, v.p, v.q}, v.output_strides);
  HostArray in(v.dtype, in_count), f(v.dtype, f_count), o_in(v.dtype, o_count), bias(v.dtype, v.k);
  in.fill_random(rng);
  if (place_specials) place_specials(v, in);
  f.fill_random(rng);
  o_in.fill_random(rng);
  bias.fill_random(rng);

  runtime::Buffer di(in.bytes.size()), df(f.bytes.size()), dout(o_in.bytes.size()), dbias(bias.bytes.size());
  di.upload(in.bytes.data(), in.bytes.size());
  df.upload(f.bytes.data(), f.bytes.size());
  dbias.upload(bias.bytes.data(), bias.bytes.size());
  // Poison: 0xFF bytes are NaN in every dtype. beta = 0 must not read them; beta != 0 gets real values.
  dout.fill_bytes(0xFF);
  if (c.beta != 0) dout.upload(o_in.bytes.data(), o_in.bytes.size());
  runtime::Stream stream;
  const std::int64_t elem = ir::size_of(v.dtype);
  kernel.run(dout.ptr() + c.output_offset * elem, di.ptr(), df.ptr(), c.alpha, c.beta, stream,
             c.epilogue.bias ? dbias.ptr() : 0);
  stream.synchronize();
  HostArray out(v.dtype, o_count);
  dout.download(out.bytes.data(), out.bytes.size());
  // The kernel writes the output's elements and nothing else: the offset and the gaps keep their bytes.
  std::vector<bool> written(static_cast<std::size_t>(o_count), false);
  for (std::int64_t n = 0; n < v.n; ++n)
    for (std::int64_t k = 0; k < v.k; ++k)
      for (std::int64_t p = 0; p < v.p; ++p)
        for (std::int64_t q = 0; q < v.q; ++q)
          written[c.output_offset + n * v.output_strides[0] + k * v.output_strides[1] + p * v.output_strides[2] +
                  q * v.output_strides[3]] = true;
  std::int64_t touched = 0;
  for (std::int64_t i = 0; i < o_count; ++i)
    if (!written[i] && !std::equal(out.bytes.begin() + i * elem, out.bytes.begin() + (i + 1) * elem,
                                   c.beta != 0 ? o_in.bytes.begin() + i * elem : std::vector<unsigned char>(elem, 0xFF).begin()))
      ++touched;
  CHECK_MESSAGE(touched == 0, describe(c) << ": " << touched << " elements outside the output were written");

  // The reference sum, and the sum of magnitudes, in float64.
  ir::Contraction contraction = ir::conv_contraction(v);
  auto absolute = [](std::vector<double> x) {
    for (double& e : x) e = std::abs(e);
    return x;
  };
  std::vector<double> sum(o_count, 0.0), magnitude(o_count, 0.0);
  ir::evaluate(contraction, {{"I", in.values.data()}, {"F", f.values.data()}}, sum.data(), {{"alpha", 1.0}, {"beta", 0.0}});
  std::vector<double> abs_in = absolute(in.values), abs_f = absolute(f.values);
  ir::evaluate(contraction, {{"I", abs_in.data()}, {"F", abs_f.data()}}, magnitude.data(),
               {{"alpha", 1.0}, {"beta", 0.0}});
  const int tile = c.params.wg == 2 ? 4 : 2;
  if (c.params.wg) magnitude = winograd_magnitude(v, tile, in, f, o_count);

  ir::DType accumulation = v.dtype == ir::DType::f64 ? ir::DType::f64 : ir::DType::f32;
  // Tensor cores round their f32 sums toward zero, not to nearest: twice the unit roundoff, counted
  // as twice the terms. f32 on them adds three TF32 products per term, each off by up to about
  // 3 x 2^-22 of |I F| (docs/tensor-cores.md): three times the terms again, and 13 more.
  const bool tf32 = c.params.tc && v.dtype == ir::DType::f32 && !c.params.wg;
  std::int64_t terms = (c.params.tc ? 2 : 1) * (tf32 ? 3 : 1) * (v.c * v.r * v.s + c.params.cg + 3) + (tf32 ? 13 : 0);
  // Winograd: the channels' sum (twice with tensor cores), two sums of alpha = R + m - 1 (or S + m - 1)
  // terms in each of the input and output transforms, and the filter's planes rounded once to the dtype.
  if (c.params.wg) terms = (c.params.tc ? 2 : 1) * v.c + 4 * (std::max(v.r, v.s) + tile - 1) + 2;
  int output_roundings = c.params.cg > 1 ? c.params.cg + 3 : 2;
  int wrong = 0;
  std::string first;
  const auto& os = v.output_strides;
  for (std::int64_t n = 0; n < v.n; ++n)
    for (std::int64_t k = 0; k < v.k; ++k)
      for (std::int64_t p = 0; p < v.p; ++p)
        for (std::int64_t q = 0; q < v.q; ++q) {
          std::size_t i = n * os[0] + k * os[1] + p * os[2] + q * os[3], at = c.output_offset + i;
          double expected = c.alpha * sum[i];
          double mag = std::abs(c.alpha) * magnitude[i];
          if (c.beta != 0) expected += c.beta * o_in.values[at], mag += std::abs(c.beta * o_in.values[at]);
          if (c.epilogue.bias) expected += bias.values[k], mag += std::abs(bias.values[k]);
          if (c.epilogue.relu) expected = std::max(expected, 0.0);
          double bound = test::error_bound(mag, terms, accumulation, v.dtype, output_roundings);
          double got = out.get(at);
          bool ok = std::isfinite(expected) ? std::isfinite(got) && std::abs(got - expected) <= bound
                                            : (std::isnan(expected) ? std::isnan(got) : got == expected);
          if (!ok && wrong++ == 0)
            first = fmt::format("O(n={}, k={}, p={}, q={}) = {} but the reference is {} (bound {})", n, k, p, q, got,
                                expected, bound);
        }
  CHECK_MESSAGE(wrong == 0, describe(c) << ": " << wrong << " wrong of " << v.n * v.k * v.p * v.q
                                        << " elements; first: " << first);
}

// Compiles every case (LLVM, and ptxas for half of them) on all cores, then checks them one at a time.
void compile_and_check(const std::vector<Case>& cases, const std::function<void(const ir::Conv&, HostArray& input)>& place_specials = {}) {
  MESSAGE(cases.size() << " CONV cases");
  auto start = std::chrono::steady_clock::now();
  auto target = lower::target_for_compute_capability(runtime::device_info(0).compute_capability());
  auto compiled = test::compile_all<lower::ConvKernel>(cases.size(), [&](size_t i, std::optional<lower::ConvKernel>& kernel) {
    kernel = lower::emit_conv(cases[i].problem, cases[i].params, target, cases[i].epilogue);
    // Even cases load ptxas's cubin (as isaac::compile does), odd ones the PTX through the driver's JIT.
    if (i % 2 == 0)
      if (auto failure = lower::assemble(kernel->ptx, target, kernel->cubin); !failure.empty()) throw Error(failure);
  });
  MESSAGE("emitted " << cases.size() << " CONV kernels on " << compiled.workers << " threads in " << compiled.seconds
                     << " s");
  auto& ptx = compiled.results;
  auto& errors = compiled.errors;
  std::mt19937_64 rng(7);
  int failed_cases = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO(describe(cases[i]));
    if (!errors[i].empty()) {
      ++failed_cases;
      FAIL_CHECK("emit failed: " << errors[i]);
      continue;
    }
    try {
      CompiledConv kernel(cases[i].problem, std::move(*ptx[i]), cases[i].params, cases[i].epilogue);
      check(cases[i], kernel, rng, place_specials);
    } catch (const DriverError& e) {
      // A launch failure poisons the context: report it and stop, rather than cascading.
      FAIL("driver error (the CUDA context is now unusable, stopping): " << e.what());
    } catch (const std::exception& e) {
      ++failed_cases;
      FAIL_CHECK("failed: " << e.what());
    }
  }
  MESSAGE("checked " << cases.size() << " CONV cases in "
                     << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
}

}  // namespace

TEST_CASE("CONV: every layout, dtype, padding, stride, dilation and split matches the float64 reference") {
  compile_and_check(make_cases(device_limits(runtime::device_info(0))));
}

TEST_CASE("CONV TC=1: tensor cores (f16 mma.sync, f32 as three TF32 products, f64 DMMA) on every layout, padding, "
          "stride and split") {
  auto info = runtime::device_info(0);
  if (info.compute_capability() < 80) {
    MESSAGE("SKIPPED: TC=1 needs sm_80 or newer; this device is sm_" << info.compute_capability());
    return;
  }
  compile_and_check(make_cases(device_limits(info), 1));
}

TEST_CASE("CONV TC=2: f16 on wgmma on every layout, padding, stride and split where vectors of eight fit") {
  auto info = runtime::device_info(0);
  if (info.compute_capability() != 90) {
    MESSAGE("SKIPPED: TC=2 needs wgmma, which only sm_90 has; this device is sm_" << info.compute_capability());
    return;
  }
  auto cases = make_cases(device_limits(info), 2, {ir::DType::f16});
  // CHWN inputs with N a multiple of 8 and NHWC ones with C a multiple of 8, with a filter whose
  // contiguous extent is one too: three layouts of several shapes each.
  REQUIRE(cases.size() >= 20);
  compile_and_check(cases);
}

// TMA copies (lower::conv_tma): the cases of support/conv_tma_cases.hpp, which the CPU test checks
// are legal, copy with TMA and assemble without spills.
TEST_CASE("CONV TMA: f16 NHWC/KRSC on wgmma, copied by the Tensor Memory Accelerator in im2col mode") {
  auto info = runtime::device_info(0);
  if (info.compute_capability() != 90) {
    MESSAGE("SKIPPED: TMA copies feed wgmma, which only sm_90 has; this device is sm_" << info.compute_capability());
    return;
  }
  std::vector<Case> cases;
  for (const test::ConvTmaCase& c : test::conv_tma_cases()) {
    INFO(ir::to_string(c.problem) << " " << c.params.str());
    auto legal = lower::check_conv(c.problem, c.params, c.epilogue, device_limits(info));
    REQUIRE_MESSAGE(legal, legal.reason);
    REQUIRE(lower::conv_tma(c.problem, c.params));
    cases.push_back({c.problem, c.params, c.epilogue, 1.25, c.beta});
    // beta = 0 takes the 16-bit staging where beta != 0 takes the f32 one (lower::conv_staged_stores).
    if (c.beta != 0) cases.push_back({c.problem, c.params, c.epilogue, 1.25, 0.0});
  }
  compile_and_check(cases);
}

// The staged stores of 16-bit tensor-core kernels (lower::conv_staged_stores): the cases of
// support/conv_staged_cases.hpp (and the outputs beside them that keep the direct stores), whose
// 16-byte stores the CPU test checks, in f16 and bf16, each case with beta != 0 also with beta = 0
// (the 16-bit staging, where beta != 0 stages f32). check() also finds any element written outside
// the output (its gaps, and the element before it).
TEST_CASE("CONV staged stores: 16-bit tensor-core results leave in 16-byte runs where the output allows") {
  auto info = runtime::device_info(0);
  if (info.compute_capability() != 90) {
    MESSAGE("SKIPPED: the cases run on wgmma, which only sm_90 has; this device is sm_" << info.compute_capability());
    return;
  }
  std::vector<Case> cases;
  for (ir::DType t : {ir::DType::f16, ir::DType::bf16})
    for (const test::ConvStagedCase& c : test::conv_staged_cases(t)) {
      INFO(c.what << ": " << ir::to_string(c.problem) << " " << c.params.str());
      auto legal = lower::check_conv(c.problem, c.params, c.epilogue, device_limits(info));
      REQUIRE_MESSAGE(legal, legal.reason);
      CHECK(lower::conv_staged_stores(c.problem, c.params) == c.staged);
      cases.push_back({c.problem, c.params, c.epilogue, 1.25, c.beta, c.output_offset});
      if (c.beta != 0) cases.push_back({c.problem, c.params, c.epilogue, 1.25, 0.0, c.output_offset});
    }
  compile_and_check(cases);
}

// bf16 kernels are f16's with other instruction types (mma.sync and wgmma of bf16, bf16 reductions
// for CG splits): one set per input on each path, and the TMA cases in bf16.
TEST_CASE("CONV bf16: FMA, mma.sync, wgmma with cp.async and TMA, on every layout, padding, stride and split") {
  auto info = runtime::device_info(0);
  if (info.compute_capability() < 80) {
    MESSAGE("SKIPPED: bf16 needs sm_80 or newer; this device is sm_" << info.compute_capability());
    return;
  }
  const lower::DeviceLimits limits = device_limits(info);
  std::vector<Case> cases;
  for (int tc : {0, 1, 2})
    for (Case& c : make_cases(limits, tc, {ir::DType::bf16}, 1)) cases.push_back(c);
  for (const test::ConvTmaCase& c : test::conv_tma_cases(ir::DType::bf16))
    if (lower::check_conv(c.problem, c.params, c.epilogue, limits)) {
      cases.push_back({c.problem, c.params, c.epilogue, 1.25, c.beta});
      if (c.beta != 0) cases.push_back({c.problem, c.params, c.epilogue, 1.25, 0.0});
    }
  // The tuner: the f16 model ranks bf16 sets, says so, and its choice runs like any other set.
  const ir::Conv tuned =
      ir::dense_conv(ir::DType::bf16, 4, 64, 15, 17, 96, 3, 3, 1, 1, 1, ImageLayout::nhwc, FilterLayout::krsc);
  TuningOptions options;
  options.database = false;
  const ConvDecision decision = choose_conv(tuned, {}, options);
  INFO(decision.how);
  CHECK(decision.how.find("(the f16 model, standing in for bf16)") != std::string::npos);
  cases.push_back({tuned, decision.params, {}, 1.25, 0.5});
  const auto count = [&](auto&& pred) { return std::count_if(cases.begin(), cases.end(), pred); };
  CHECK(count([](const Case& c) { return c.params.tc == 1; }) >= 40);
  CHECK(count([](const Case& c) { return c.params.cg > 1; }) >= 5);
  if (info.compute_capability() == 90) {
    CHECK(count([](const Case& c) { return c.params.tc == 2; }) >= 20);
    CHECK(count([](const Case& c) { return lower::conv_tma(c.problem, c.params); }) >= 10);
  }
  compile_and_check(cases);
}

// f32 on the tensor cores splits each element into TF32 parts; an infinite or NaN input, or one whose
// TF32 rounding overflows, turns the cells it reaches to NaN, which the kernel computes again with
// FMA (ConvEmitter::recompute_nan_cells). Images 0 to 3 hold +inf, NaN, -inf and 3.4028e38 (which
// rounds to infinity as TF32) at one tap: every output must be IEEE's (the reference's +-inf or NaN
// where it has one, finite within the bound elsewhere).
TEST_CASE("CONV f32 TC=1: infinities and NaN in the input give IEEE's results, in every layout and split") {
  auto info = runtime::device_info(0);
  if (info.compute_capability() < 80) {
    MESSAGE("SKIPPED: TC=1 needs sm_80 or newer; this device is sm_" << info.compute_capability());
    return;
  }
  std::vector<Case> cases;
  for (const Case& c : make_cases(device_limits(info), true))
    if (c.problem.dtype == ir::DType::f32 && c.problem.n >= 4) cases.push_back({c.problem, c.params, {}, 1.0, 0.0});
  REQUIRE(cases.size() >= 8);
  // Channel 1, row 3, column 2: inside the image of every shape with N >= 4 (C >= 4, H and W >= 7).
  compile_and_check(cases, [](const ir::Conv& v, HostArray& input) {
    const double specials[] = {INFINITY, std::nan(""), -INFINITY, 3.4028e38};
    const auto& is = v.input_strides;
    for (int n = 0; n < 4; ++n) input.set(std::size_t(n * is[0] + is[1] + 3 * is[2] + 2 * is[3]), specials[n]);
  });
}

// WG=1 needs cp.async (sm_80): says so and returns false on older devices.
namespace {
bool winograd_device(const runtime::DeviceInfo& info) {
  if (info.compute_capability() >= 80) return true;
  MESSAGE("SKIPPED: WG=1 needs sm_80 or newer; this device is sm_" << info.compute_capability());
  return false;
}
}  // namespace

TEST_CASE("CONV WG=1: Winograd F(2x2, RxS) on every layout, filter size 2-5, padding and tile edge") {
  auto info = runtime::device_info(0);
  if (!winograd_device(info)) return;
  compile_and_check(make_winograd_cases(device_limits(info)));
}

TEST_CASE("CONV WG=2: Winograd F(4x4, RxS) with a batched GEMM on every layout, filter size 2-5, padding and tile edge") {
  auto info = runtime::device_info(0);
  compile_and_check(make_winograd_cases(device_limits(info), 2));
}

TEST_CASE("CONV WG=1: the sweep's winning shapes of plane groups (CL=16 of 16 planes, CL=4 of 36) at tile edges") {
  auto info = runtime::device_info(0);
  if (!winograd_device(info)) return;
  std::vector<Case> cases;
  auto add = [&](ir::Conv v, const char* params, lower::ConvEpilogue e, double beta) {
    lower::ConvParams p = lower::parse_conv_params(params);
    auto legal = lower::check_conv(v, p, e, device_limits(info));
    REQUIRE_MESSAGE(legal, ir::to_string(v) << " " << params << ": " << legal.reason);
    cases.push_back({v, p, e, 1.25, beta});
  };
  // K and the tiles one past a block (33 filters, 2 x 17 x 17 tiles of 2 x 2), odd P and Q.
  for (auto [il, fl] : {std::pair{ImageLayout::chwn, FilterLayout::crsk}, {ImageLayout::nchw, FilterLayout::kcrs},
                        {ImageLayout::nhwc, FilterLayout::krsc}}) {
    auto v3 = ir::dense_conv(ir::DType::f32, 2, 21, 35, 35, 33, 3, 3, 1, 1, 1, il, fl);
    add(v3, "PL=16,KL=32,PS=4,KS=16,U=8,CL=16,DB=0,WG=1", {.bias = true}, 0.0);
    add(v3, "PL=32,KL=32,PS=8,KS=8,U=8,CL=16,DB=1,WG=1", {.relu = true}, -0.5);
    add(v3, "PL=16,KL=32,PS=8,KS=4,U=16,CL=16,DB=0,WG=1", {}, 0.0);
    auto v5 = ir::dense_conv(ir::DType::f32, 3, 17, 13, 12, 19, 5, 5, 1, 2, 1, il, fl);
    add(v5, "PL=16,KL=16,PS=2,KS=4,U=8,CL=4,DB=1,WG=1", {.bias = true, .relu = true}, 0.0);
    add(v5, "PL=16,KL=32,PS=2,KS=4,U=16,CL=4,DB=0,WG=1", {}, 0.5);
  }
  auto v64 = ir::dense_conv(ir::DType::f64, 2, 9, 11, 10, 17, 3, 3, 1, 1, 1, ImageLayout::nchw, FilterLayout::kcrs);
  add(v64, "PL=16,KL=16,PS=4,KS=4,U=4,CL=16,DB=1,WG=1", {.bias = true}, 0.25);
  compile_and_check(cases);
}

TEST_CASE("CONV: hand-picked parameter sets (vectors, CG splits with bias, CL warp groups, single stage, tensor cores)") {
  std::vector<Case> cases;
  auto add = [&](ir::Conv v, const char* params, lower::ConvEpilogue e, double beta) {
    lower::ConvParams p = lower::parse_conv_params(params);
    if (p.li == 0) lower::fit_conv_load_layouts(v, p);
    auto legal = lower::check_conv(v, p, e);
    REQUIRE_MESSAGE(legal, ir::to_string(v) << " " << params << ": " << legal.reason);
    cases.push_back({v, p, e, 0.75, beta});
  };
  auto chwn = ir::dense_conv(ir::DType::f32, 16, 24, 13, 13, 64, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::crsk);
  add(chwn, "PL=64,KL=64,PS=4,KS=4,U=16,VI=4,VF=4,LI=16,LF=16", {}, 0.0);
  add(chwn, "PL=64,KL=64,PS=4,KS=4,U=16,CG=4,VI=4,VF=4,LI=16,LF=16", {.bias = true}, 0.5);
  add(chwn, "PL=64,KL=64,PS=4,KS=4,U=32,CL=2,CS=2,VI=4,VF=4,LI=16,LF=16,DB=0", {.bias = true, .relu = true}, 0.0);
  auto nhwc = ir::dense_conv(ir::DType::f16, 4, 32, 9, 11, 48, 3, 3, 2, 1, 1, ImageLayout::nhwc, FilterLayout::krsc);
  add(nhwc, "PL=32,KL=32,PS=2,KS=8,U=16,VI=8,VF=8,LI=2,LF=2", {.bias = true, .relu = true}, 0.0);
  add(nhwc, "PL=32,KL=32,PS=2,KS=8,U=16,CG=2,VI=8,VF=8,LI=2,LF=2", {}, -1.0);
  auto nchw = ir::dense_conv(ir::DType::f64, 2, 7, 17, 19, 10, 3, 3, 1, 2, 2, ImageLayout::nchw, FilterLayout::kcrs);
  add(nchw, "PL=32,KL=16,PS=2,KS=2,U=8,CG=2,LI=32,LF=8", {.bias = true}, 0.25);
  add(nchw, "PL=64,KL=32,PS=4,KS=4,U=8,CL=2,LI=64,LF=8,DB=0", {.relu = true}, 0.0);
  // Tensor cores: CG splits, bias and relu, three stages and two, single f16 elements (NCHW, VI=1).
  auto chwn16 = ir::dense_conv(ir::DType::f16, 16, 24, 13, 13, 64, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::crsk);
  add(chwn16, "PL=64,KL=64,PS=2,KS=8,U=32,VI=8,VF=8,TC=1", {.bias = true, .relu = true}, 0.0);
  add(chwn16, "PL=64,KL=64,PS=2,KS=8,U=32,CG=4,VI=8,VF=8,DB=0,TC=1", {.bias = true}, 0.5);
  auto nhwc16 = ir::dense_conv(ir::DType::f16, 4, 32, 9, 11, 48, 3, 3, 2, 1, 1, ImageLayout::nhwc, FilterLayout::krsc);
  add(nhwc16, "PL=64,KL=32,PS=4,KS=4,U=32,CL=2,VI=8,VF=4,TC=1", {}, -1.0);
  auto nchw16 = ir::dense_conv(ir::DType::f16, 2, 7, 17, 19, 10, 3, 3, 1, 2, 2, ImageLayout::nchw, FilterLayout::kcrs);
  add(nchw16, "PL=64,KL=32,PS=2,KS=4,U=16,CG=2,VF=1,TC=1", {.bias = true}, 0.25);
  auto nchw64 = ir::dense_conv(ir::DType::f64, 2, 7, 17, 19, 10, 3, 3, 1, 2, 2, ImageLayout::nchw, FilterLayout::kcrs);
  add(nchw64, "PL=64,KL=32,PS=2,KS=4,U=8,CG=2,TC=1", {}, 0.25);
  // wgmma: two warp groups, a split with bias, U = 64 in three stages, pixels and filters past a tile.
  if (runtime::device_info(0).compute_capability() == 90) {
    auto chwn16w = ir::dense_conv(ir::DType::f16, 16, 40, 13, 11, 136, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::crsk);
    add(chwn16w, "PL=128,KL=128,PS=8,KS=8,U=32,VI=8,VF=8,TC=2", {.bias = true, .relu = true}, 0.0);
    add(chwn16w, "PL=128,KL=64,PS=16,KS=4,U=64,CG=4,VI=8,VF=8,DB=0,TC=2", {.bias = true}, 0.5);
    auto nhwc16w = ir::dense_conv(ir::DType::f16, 3, 24, 19, 17, 72, 5, 5, 2, 2, 1, ImageLayout::nhwc, FilterLayout::krsc);
    add(nhwc16w, "PL=64,KL=128,PS=8,KS=8,U=16,VI=8,VF=8,TC=2", {}, -1.0);
    // The pairings the random cases lack: filters whose reduction is contiguous under an input whose
    // pixels are.
    auto chwn_kcrs = ir::dense_conv(ir::DType::f16, 16, 16, 9, 9, 40, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::kcrs);
    add(chwn_kcrs, "PL=64,KL=64,PS=8,KS=4,U=16,VI=8,VF=8,TC=2", {.relu = true}, 0.0);
    auto chwn_krsc = ir::dense_conv(ir::DType::f16, 8, 24, 10, 12, 48, 3, 3, 1, 0, 1, ImageLayout::chwn, FilterLayout::krsc);
    add(chwn_krsc, "PL=128,KL=64,PS=16,KS=4,U=32,VI=8,VF=8,DB=0,TC=2", {}, 0.5);
  }
  compile_and_check(cases);
}

TEST_CASE("CONV: a missing or unexpected bias pointer is refused with the reason") {
  auto v = ir::dense_conv(ir::DType::f32, 2, 4, 8, 8, 16, 3, 3, 1, 1);
  auto p = lower::parse_conv_params("PL=32,KL=16,PS=2,KS=2,U=8,LI=32,LF=8");
  REQUIRE(lower::check_conv(v, p));
  CompiledConv with_bias(v, p, {.bias = true});
  CompiledConv plain(v, p);
  runtime::Buffer buffer(1 << 16);
  runtime::Stream stream;
  CHECK_THROWS_WITH_AS(with_bias.run(buffer.ptr(), buffer.ptr(), buffer.ptr(), 1, 0, stream),
                       doctest::Contains("adds a bias"), InvalidArgument);
  CHECK_THROWS_WITH_AS(plain.run(buffer.ptr(), buffer.ptr(), buffer.ptr(), 1, 0, stream, buffer.ptr()),
                       doctest::Contains("compiled without a bias"), InvalidArgument);
  // An illegal parameter set is refused before any compilation, naming the rule.
  CHECK_THROWS_WITH_AS(CompiledConv(v, lower::parse_conv_params("PL=32,KL=16,PS=2,KS=2,U=8,VI=2,LI=16,LF=8")),
                       doctest::Contains("VI=2 must be 1 for an NCHW input"), InvalidArgument);
}

TEST_CASE("CONV: the kernels chosen by pruning + annealing and by runtime autotuning match the reference") {
  std::vector<Case> cases;
  auto nchw = ir::dense_conv(ir::DType::f32, 3, 13, 17, 15, 24, 3, 3, 1, 1, 1, ImageLayout::nchw, FilterLayout::kcrs);
  auto nhwc = ir::dense_conv(ir::DType::f16, 2, 32, 9, 11, 40, 3, 3, 2, 1, 1, ImageLayout::nhwc, FilterLayout::krsc);
  auto chwn = ir::dense_conv(ir::DType::f64, 5, 7, 8, 8, 9, 1, 1, 1, 0, 1, ImageLayout::chwn, FilterLayout::crsk);
  for (const ir::Conv& v : {nchw, nhwc, chwn})
    for (Search search : {Search::annealing, Search::autotune}) {
      TuningOptions options;
      options.search = search;
      options.anneal_budget = 6;
      options.top_k = 3;
      options.database = false;
      const lower::ConvEpilogue epilogue{.bias = true};
      const ConvDecision d = choose_conv(v, epilogue, options);
      MESSAGE(ir::to_string(v) << ": " << d.params.str() << " by " << d.how);
      CHECK(d.timed >= 1);
      CHECK(d.timed <= 6);
      cases.push_back({v, d.params, epilogue, 0.75, 0.5});
    }
  compile_and_check(cases);
}

TEST_CASE("CONV: the model search ranks and times Winograd sets where they apply, f32 off the tensor cores by default; its choice matches") {
  auto info = runtime::device_info(0);
  if (!winograd_device(info)) return;
  std::vector<Case> cases;
  // Winograd applies to the first two (f32 and f64, stride 1); not to the strided one.
  auto chwn = ir::dense_conv(ir::DType::f32, 8, 64, 30, 30, 64, 3, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::crsk);
  auto nchw = ir::dense_conv(ir::DType::f64, 2, 19, 17, 15, 24, 5, 5, 1, 2, 1, ImageLayout::nchw, FilterLayout::kcrs);
  auto strided = ir::dense_conv(ir::DType::f32, 4, 16, 20, 20, 32, 3, 3, 2, 1, 1, ImageLayout::nchw, FilterLayout::kcrs);
  for (const ir::Conv& v : {chwn, nchw, strided}) {
    TuningOptions options;
    options.top_k = 3;
    options.database = false;
    const lower::ConvEpilogue epilogue{.bias = true};
    const ConvDecision d = choose_conv(v, epilogue, options);
    auto winograd = std::count_if(d.candidates.begin(), d.candidates.end(),
                                  [](const auto& t) { return t.params.wg == 1; });
    MESSAGE(ir::to_string(v) << ": " << d.params.str() << " by " << d.how << "; " << winograd << " of "
                             << d.candidates.size() << " candidates WG=1");
    // The swept Winograd sets are timed whatever the model ranks first (its own top may hold more).
    for (const lower::ConvParams& p : tune::winograd_candidates(v, epilogue, device_limits(info))) {
      CAPTURE(p.str());
      CHECK(std::any_of(d.candidates.begin(), d.candidates.end(), [&](const auto& t) { return t.params == p; }));
    }
    if (v.stride_h == 1) CHECK(winograd >= 1);
    else CHECK(winograd == 0);
    // f32 on the tensor cores (TC=1 Winograd products) only when TuningOptions::f32_tensor_cores asks.
    if (v.dtype == ir::DType::f32)
      CHECK(std::none_of(d.candidates.begin(), d.candidates.end(), [](const auto& t) { return t.params.tc == 1; }));
    cases.push_back({v, d.params, epilogue, 0.75, 0.5});
  }
  compile_and_check(cases);
}
