// The CONV code generator without a GPU: the parameters' text form, the legality function and its
// reasons, the look-up table, and the CI proof -- ptxas assembles the PTX of 300+ legal
// parameter sets across layouts and dtypes (sm_80 and sm_90 alternating) with no spills.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/lower/target.hpp>
#include <isaac/runtime/tensor_map.hpp>

#include "support/conv_staged_cases.hpp"
#include "support/conv_tma_cases.hpp"
#include "support/legality_checks.hpp"
#include "support/occurrences.hpp"
#include "support/parallel_compile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace isaac;
using lower::ConvParams;
using lower::Legality;
using ir::DType;
using ir::FilterLayout;
using ir::ImageLayout;

namespace {

// 256 threads; NCHW: input tile 64 pixels (contiguous) x 8; KCRS: filter tile 8 (contiguous) x 64.
ConvParams base() { return lower::parse_conv_params("PL=64,KL=64,PS=4,KS=4,U=8,LI=64,LF=8"); }

// `p` with the keys of `more` (KEY=VALUE,...) replaced: the parser refuses a key given twice.
ConvParams with_keys(const ConvParams& p, const std::string& more) {
  std::string text;
  std::stringstream items(p.str());
  for (std::string item; std::getline(items, item, ',');) {
    const std::string key = item.substr(0, item.find('='));
    if (("," + more).find("," + key + "=") == std::string::npos) text += item + ",";
  }
  return lower::parse_conv_params(text + more);
}

ir::Conv conv(DType t, ImageLayout il, FilterLayout fl, std::int64_t n = 8, std::int64_t c = 32, std::int64_t h = 28,
              std::int64_t k = 64, std::int64_t r = 3, std::int64_t stride = 1, std::int64_t pad = 1,
              std::int64_t dilation = 1) {
  return ir::dense_conv(t, n, c, h, h, k, r, r, stride, pad, dilation, il, fl);
}

// The lines of PTX `ptx` that hold a stmatrix, transposed or not.
int stmatrix_lines(const std::string& ptx, bool trans) {
  int n = 0;
  std::istringstream lines(ptx);
  for (std::string line; std::getline(lines, line);)
    if (line.find("stmatrix.sync") != std::string::npos && (line.find(".trans") != std::string::npos) == trans) ++n;
  return n;
}

}  // namespace

TEST_CASE("CONV parameters print in one order and parse back") {
  ConvParams p;
  p.pl = 128, p.kl = 32, p.ps = 8, p.ks = 2, p.u = 16, p.cs = 2, p.cl = 4, p.cg = 8, p.vi = 4, p.vf = 2;
  p.li = 16, p.lf = 8, p.db = 0;
  CHECK(p.str() == "PL=128,KL=32,PS=8,KS=2,U=16,CS=2,CL=4,CG=8,VI=4,VF=2,LI=16,LF=8,DB=0,TC=0");
  // Text written before TC existed reads as TC=0.
  CHECK(lower::parse_conv_params("PL=128,KL=32,PS=8,KS=2,U=16,CS=2,CL=4,CG=8,VI=4,VF=2,LI=16,LF=8,DB=0") == p);
  CHECK(lower::parse_conv_params(p.str()) == p);
  CHECK(lower::parse_conv_params("") == ConvParams{});
  ConvParams q = lower::parse_conv_params("KL=32,PL=128");
  CHECK(q.pl == 128);
  CHECK(q.kl == 32);
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    ConvParams r;
    for (int ConvParams::*f : {&ConvParams::pl, &ConvParams::kl, &ConvParams::ps, &ConvParams::ks, &ConvParams::u,
                               &ConvParams::cs, &ConvParams::cl, &ConvParams::cg, &ConvParams::vi, &ConvParams::vf,
                               &ConvParams::li, &ConvParams::lf, &ConvParams::db, &ConvParams::tc})
      r.*f = static_cast<int>(rng() % 300);
    CHECK(lower::parse_conv_params(r.str()) == r);
  }
  CHECK_THROWS_WITH_AS(lower::parse_conv_params("PL=64,FOO=3"),
                       doctest::Contains("unknown CONV parameter 'FOO': the keys are PL, KL, PS, KS, U, CS, CL, CG, "
                                         "VI, VF, LI, LF, DB, TC"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(lower::parse_conv_params("PL=6x"), doctest::Contains("non-integer value '6x'"), InvalidArgument);
  CHECK_THROWS_WITH_AS(lower::parse_conv_params("PL"), doctest::Contains("expected KEY=VALUE"), InvalidArgument);
}

TEST_CASE("CONV legality: the parameters alone") {
  auto check = [](const ConvParams& p, lower::DeviceLimits d = {}) {
    return lower::check_conv_params(DType::f32, false, false, p, d);
  };
  CHECK(check(base()));
  auto mod = [](auto f) {
    ConvParams p = base();
    f(p);
    return p;
  };
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.pl = 48; })), "PL=48 must be a power of two");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.db = 2; })), "DB=2 must be 0 or 1");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.ps = 128; })), "PS=128 must divide PL=64");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.cl = 4, p.cs = 4; })), "CL=4 x CS=4 must divide U=8");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.pl = 16, p.kl = 16; })),
                 "(PL/PS)x(KL/KS)xCL = 16 threads is not a whole number of warps");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.pl = 256, p.kl = 128; })), "2048 threads per block exceed");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.vi = 8; })), "VI=8 exceeds 16-byte loads for 4-byte elements");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.li = 3; })), "LI=3 must divide the 256 threads of a block");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.li = 32, p.vi = 4; })),
                 "LI=32 threads x VI=4 elements must divide the 64 contiguous elements of the input tile");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.lf = 2; })),
                 "the 128 threads not along the contiguous axis (256 / LF=2) must divide the other extent 64");
  lower::DeviceLimits small;
  small.max_shared_per_block = 4096;
  CHECK_REJECTED(check(base(), small), "bytes of shared memory exceed the device's 4096 per block");
  lower::DeviceLimits tight;
  tight.max_registers_per_thread = 32;
  CHECK_REJECTED(check(base(), tight), "registers per thread (+8 of margin) exceed the budget of 32 for 256 threads");
  CHECK_REJECTED(check(mod([](ConvParams& p) { p.pl = 128, p.kl = 128, p.ps = 16, p.ks = 8, p.cl = 2, p.li = 32; })),
                 "CL=2 with PS x KS = 128 accumulators per thread: ptxas spills such sets");
  CHECK_LEGAL(lower::check_conv_params(DType::bf16, false, false, base(), {}));
  CHECK_REJECTED(lower::check_conv_params(DType::bf16, false, false, base(), {.sm = 75}),
                 "bf16 needs sm_80 or newer, not sm_75");
  CHECK_REJECTED(lower::check_conv_params(DType::bf16, false, false, mod([](ConvParams& p) { p.cg = 2; }), {.sm = 80}),
                 "CG=2 with bf16 adds partial sums into the output with bf16 reductions, which need sm_90, not sm_80");
}

TEST_CASE("CONV legality: TC=1 (tensor cores) has GEMM's rules, in CONV's names") {
  // 8 x 4 warps' threads of 4 PS x 8 KS: a 128 x 64 tile of 256 threads, U = 32.
  ConvParams t = lower::parse_conv_params("PL=128,KL=64,PS=4,KS=8,U=32,VI=8,VF=8,LI=16,LF=4,TC=1");
  auto check = [](DType dtype, const ConvParams& p, lower::DeviceLimits d = {}) {
    return lower::check_conv_params(dtype, false, false, p, d);
  };
  auto with = [&](std::string more) { return with_keys(t, more); };
  CHECK_LEGAL(check(DType::f16, t));
  CHECK_LEGAL(check(DType::f16, with("CL=2,KL=32,VF=4,LF=8")));
  // f32: three TF32 products per term, 8-deep steps; only where the device limits allow it.
  CHECK_LEGAL(check(DType::f32, with("VI=4,VF=4,LI=32,LF=8")));
  CHECK_REJECTED(check(DType::f32, with("VI=4,VF=4,LI=32,LF=8,PL=256,PS=8,KS=16")),
                 "f32 TC=1 with PS x KS = 128 accumulators per thread: ptxas spills such sets");
  CHECK_REJECTED(check(DType::f32, with("VI=4,VF=4,LI=32,LF=8"), {.f32_tensor_cores = false}),
                 "TC=1 for f32 (three TF32 products per term, a larger rounding error than FMA) is off");
  CHECK_REJECTED(check(DType::f32, with("VI=4,VF=4,LI=32,U=8,CL=2,KL=32,LF=4")),
                 "TC=1 consumes C*R*S 8 at a time: U/CL=8/2 must be a multiple of 8");
  CHECK_REJECTED(check(DType::f16, t, {.sm = 75}), "TC=1 needs mma.sync (m16n8k16), sm_80 or newer, not sm_75");
  CHECK_REJECTED(check(DType::f16, with("CS=2")), "CS=2 must be 1");
  CHECK_REJECTED(check(DType::f16, with("KS=2,KL=16,LF=2")), "KS=2 a multiple of 4");
  CHECK_REJECTED(check(DType::f16, with("PL=64,PS=16")), "PL/PS=4 must be a multiple of 8");
  CHECK_REJECTED(check(DType::f16, with("U=16,CL=2")), "TC=1 consumes C*R*S 16 at a time: U/CL=16/2 must be a multiple of 16");
  CHECK_REJECTED(check(DType::f16, with("TC=2")), "TC=2 gives each warp group PS/8 tiles of 64 rows: PS=4 must be 8 or 16");
  ConvParams d = lower::parse_conv_params("PL=64,KL=64,PS=4,KS=8,U=16,VI=2,VF=2,LI=32,LF=8,TC=1");
  CHECK_LEGAL(check(DType::f64, d));
  CHECK_REJECTED(check(DType::f64, with_keys(d, "KS=1,KL=8")), "KS=1 must be even");
}

TEST_CASE("CONV legality: TC=2 (wgmma) has GEMM's rules, in CONV's names: f16 on sm_90, 16-byte copies") {
  // Two warp groups of 8 x 16 threads, each a 64 x 128 tile of 8 PS x 8 KS: a 128 x 128 tile.
  ConvParams w = lower::parse_conv_params("PL=128,KL=128,PS=8,KS=8,U=32,VI=8,VF=8,LI=4,LF=4,TC=2");
  auto check = [](DType dtype, const ConvParams& p, lower::DeviceLimits d = {}) {
    return lower::check_conv_params(dtype, true, false, p, d);
  };
  auto with = [&](std::string more) { return with_keys(w, more); };
  CHECK_LEGAL(check(DType::f16, w));
  CHECK_LEGAL(check(DType::f16, with("U=64,LI=8,LF=8")));
  CHECK_LEGAL(check(DType::f16, with("PS=16")));
  CHECK_REJECTED(check(DType::f32, with("VI=4,VF=4")), "TC=2 (wgmma) is implemented for f16, bf16 and, in GEMM, f32; not f32 here: use TC=0 or 1");
  CHECK_REJECTED(check(DType::f16, w, {.sm = 80}), "TC=2 needs wgmma.mma_async, which only sm_90 (compiled as sm_90a) has");
  CHECK_REJECTED(check(DType::f16, with("CL=2")), "CS=1 and CL=2 must be 1");
  CHECK_REJECTED(check(DType::f16, with("KS=16,LF=2")), "KL/KS=8 a multiple of 16");
  CHECK_REJECTED(check(DType::f16, with("U=8,LI=1")), "TC=2 consumes C*R*S 16 at a time: U=8 must be a multiple of 16");
  CHECK_REJECTED(check(DType::f16, with("VF=4")), "TC=2 copies its tiles 16 bytes (8 elements) at a time: VI=8 and VF=4 must be 8");
  CHECK_REJECTED(check(DType::f16, with("LI=64")), "TC=2: 8 x LI=64 must divide the 256 threads");
}

TEST_CASE("CONV legality against a problem: layouts, vectors, alignment, splits, epilogue") {
  ir::Conv nchw = conv(DType::f32, ImageLayout::nchw, FilterLayout::kcrs);
  CHECK(lower::check_conv(nchw, base()));
  ConvParams p = base();
  p.vi = 2, p.li = 32;
  CHECK_REJECTED(lower::check_conv(nchw, p), "VI=2 must be 1 for an NCHW input");

  // CHWN: vectors along n.
  ir::Conv chwn = conv(DType::f32, ImageLayout::chwn, FilterLayout::crsk, 6);
  ConvParams q = lower::parse_conv_params("PL=64,KL=64,PS=4,KS=4,U=16,VI=4,VF=4,LI=16,LF=16");
  CHECK_REJECTED(lower::check_conv(chwn, q), "VI=4 must divide N=6");
  chwn = conv(DType::f32, ImageLayout::chwn, FilterLayout::crsk, 8);
  CHECK(lower::check_conv(chwn, q));
  chwn.align_input = 8;
  CHECK_REJECTED(lower::check_conv(chwn, q), "VI=4 needs a 16-byte aligned input, which is only 8-byte aligned");
  ir::Conv odd_k = conv(DType::f32, ImageLayout::chwn, FilterLayout::crsk, 8, 32, 28, 62);
  CHECK_REJECTED(lower::check_conv(odd_k, q), "VF=4 must divide K=62");

  // NHWC: vectors along c; the reduction runs (r, s, c).
  ir::Conv nhwc = conv(DType::f16, ImageLayout::nhwc, FilterLayout::krsc, 2, 12);
  ConvParams h = lower::parse_conv_params("PL=64,KL=64,PS=4,KS=8,U=16,VI=8,VF=8,LI=2,LF=2");
  CHECK_REJECTED(lower::check_conv(nhwc, h), "VI=8 must divide C=12");
  nhwc = conv(DType::f16, ImageLayout::nhwc, FilterLayout::krsc, 2, 16);
  CHECK(lower::check_conv(nhwc, h));
  // With a KCRS or CRSK filter the reduction runs (c, r, s): an input vector would be eight channels
  // of one tap where the kernel wants eight taps (it read the wrong elements before 0.1.23).
  for (FilterLayout fl : {FilterLayout::kcrs, FilterLayout::crsk}) {
    ir::Conv other = conv(DType::f16, ImageLayout::nhwc, fl, 2, 16);
    ConvParams scalar = h;
    scalar.vi = 1;
    lower::fit_conv_load_layouts(other, scalar);
    ConvParams vector = scalar;
    vector.vi = 8;
    lower::fit_conv_load_layouts(other, vector);
    CHECK_REJECTED(lower::check_conv(other, vector), "VI=8 must be 1 for an NHWC input with a");
    CHECK(lower::check_conv(other, scalar));
    for (const ConvParams& p : lower::conv_space(other)) REQUIRE(p.vi == 1);
  }

  // Filter strides that do not nest.
  ir::Conv bad = nchw;
  bad.filter_strides[3] = 2;
  CHECK_REJECTED(lower::check_conv(bad, base()), "do not nest C, R, S densely");

  // CG: not more splits than tiles, not with relu.
  ConvParams g = base();
  g.cg = 64;
  ir::Conv shallow = conv(DType::f32, ImageLayout::nchw, FilterLayout::kcrs, 8, 2, 28, 64, 3);  // CRS = 18
  CHECK_REJECTED(lower::check_conv(shallow, g), "CG=64 splits C*R*S=18 into more pieces than its 3 tiles of U=8");
  g.cg = 2;
  CHECK(lower::check_conv(nchw, g));
  CHECK_REJECTED(lower::check_conv(nchw, g, {.bias = false, .relu = true}), "cannot pass through relu");
  CHECK(lower::check_conv(nchw, g, {.bias = true, .relu = false}));

  ir::Conv empty = nchw;
  empty.c = 0;
  CHECK_REJECTED(lower::check_conv(empty, base()), "CONV extent c=0 must be positive");
  ir::Conv huge = ir::dense_conv(DType::f32, 64, 512, 256, 256, 64, 3, 3);
  CHECK_REJECTED(lower::check_conv(huge, base()), "the look-up table holds 32-bit offsets");

  CHECK_THROWS_WITH_AS(lower::emit_conv(nchw, p, lower::parse_target("sm_90")),
                       doctest::Contains("illegal CONV parameters"), InvalidArgument);
}

TEST_CASE("conv_legal agrees with check_conv, legal or not") {
  std::mt19937_64 rng(9);
  auto pick = [&](std::initializer_list<int> values) { return *(values.begin() + rng() % values.size()); };
  const ir::Conv problems[] = {
      ir::dense_conv(DType::f16, 3, 24, 17, 13, 40, 3, 3, 1, 1, 1, ImageLayout::nhwc, FilterLayout::krsc),
      ir::dense_conv(DType::f32, 8, 5, 30, 31, 16, 5, 5, 2, 2, 1, ImageLayout::chwn, FilterLayout::crsk),
      ir::dense_conv(DType::f64, 1, 7, 9, 9, 9, 3, 3, 1, 0, 2, ImageLayout::nchw, FilterLayout::kcrs)};
  int legal = 0;
  for (int i = 0; i < 20000; ++i) {
    const ir::Conv& v = problems[i % std::size(problems)];
    ConvParams p;
    p.pl = pick({16, 32, 64, 128, 256}), p.kl = pick({8, 16, 32, 64, 128});
    p.ps = pick({1, 2, 3, 4, 8, 16}), p.ks = pick({1, 2, 4, 8, 16});
    p.u = pick({4, 8, 16, 32}), p.cs = pick({1, 2}), p.cl = pick({1, 2, 4}), p.cg = pick({1, 2, 8, 64});
    p.vi = pick({1, 2, 4, 8}), p.vf = pick({1, 2, 4, 8}), p.li = pick({1, 2, 4, 8, 16, 32}),
    p.lf = pick({1, 2, 4, 8, 16, 32}), p.db = pick({0, 1}), p.tc = pick({0, 0, 1});
    if (i % 3 == 0) lower::fit_conv_load_layouts(v, p);
    const lower::ConvEpilogue epilogue{.relu = i % 5 == 0};
    const Legality explained = lower::check_conv(v, p, epilogue);
    REQUIRE(explained.legal == lower::conv_legal(v, p, epilogue));
    if (explained.legal) ++legal;
    else CHECK(!explained.reason.empty());
  }
  CHECK(legal > 100);
}

TEST_CASE("conv_space: tensor cores on sm_80+ (f32 only where allowed), wgmma for f16 and bf16 on sm_90, every set inside") {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (int sm : {75, 90})
      for (bool f32_tensor_cores : {true, false}) {
        ir::Conv v = conv(t, ImageLayout::chwn, FilterLayout::crsk, 16, 64, 14, 64);
        lower::DeviceLimits device{.sm = sm, .f32_tensor_cores = f32_tensor_cores};
        if (t == DType::bf16 && sm < 80) {
          CHECK_REJECTED(lower::check_conv_problem(v, device), "bf16 needs sm_80 or newer, not sm_75");
          CHECK(lower::conv_space(v, {}, device).empty());
          continue;
        }
        auto space = lower::conv_space(v, {}, device);
        REQUIRE(!space.empty());
        auto tc = std::count_if(space.begin(), space.end(), [](const ConvParams& p) { return p.tc == 1; });
        auto wgmma = std::count_if(space.begin(), space.end(), [](const ConvParams& p) { return p.tc == 2; });
        bool mma = (t != DType::f32 || f32_tensor_cores) && sm >= 80;
        INFO(ir::name(t), " sm_", sm, " f32_tensor_cores=", f32_tensor_cores, ": ", tc, " TC=1 and ", wgmma,
             " TC=2 sets of ", space.size());
        CHECK((tc > 0) == mma);
        CHECK((wgmma > 0) == (ir::is_16_bit(t) && sm == 90));
        // U = 64 is the wgmma sets' alone.
        CHECK(std::all_of(space.begin(), space.end(), [](const ConvParams& p) { return p.u < 64 || p.tc == 2; }));
        CHECK(std::any_of(space.begin(), space.end(), [](const ConvParams& p) { return p.u == 64; }) == (wgmma > 0));
        CHECK(std::any_of(space.begin(), space.end(), [](const ConvParams& p) { return p.ps == 16 || p.ks == 16; }));
        for (std::size_t i = 0; i < space.size(); i += 97) {
          auto why = lower::outside_conv_space(v, space[i], {}, device);
          CHECK_MESSAGE(!why, space[i].str() << ": " << why.value_or(""));
        }
        ConvParams off = space.front();
        off.li = off.li == 1 ? 2 : 1;
        CHECK(lower::outside_conv_space(v, off, {}, device).value_or("").find("conv_space sets LI=") != std::string::npos);
        off = space.front();
        off.u = 128;
        CHECK(lower::outside_conv_space(v, off, {}, device).value_or("").find("outside conv_space's lists") !=
              std::string::npos);
        off.u = 64;
        off.tc = 0;
        CHECK(lower::outside_conv_space(v, off, {}, device).value_or("").find("U=64: conv_space has it for TC=2 alone") !=
              std::string::npos);
      }
}

TEST_CASE("conv_space: TC=2 filter tiles fitted to K (16 KS filters a warp group), where K is no power of two") {
  const lower::DeviceLimits h100{.sm = 90};
  auto params = [](const char* text) { return lower::parse_conv_params(text); };
  // The rule: a power of two, but with TC=2 any KS up to 16 (wgmma's N = 16 KS).
  CHECK_REJECTED(lower::check_conv_params(DType::f16, true, false, with_keys(base(), "KL=176,KS=11"), h100),
                 "KL=176 and KS=11 must be powers of two (with TC=2, any KS up to 16)");
  CHECK_REJECTED(lower::check_conv_params(DType::f16, true, false,
                                          params("PL=64,KL=272,PS=8,KS=17,U=64,VI=8,VF=8,TC=2"), h100),
                 "KS=17 must be 1 to 16");
  auto fitted_tiles = [&](const ir::Conv& v) {
    std::map<int, std::vector<int>> out;  // KL: its KS
    for (const ConvParams& p : lower::conv_space(v, {}, h100)) {
      if (std::has_single_bit(unsigned(p.kl))) continue;
      CHECK(p.tc == 2);
      auto& ks = out[p.kl];
      if (std::find(ks.begin(), ks.end(), p.ks) == ks.end()) ks.push_back(p.ks);
    }
    for (auto& [kl, ks] : out) std::sort(ks.begin(), ks.end());
    return out;
  };
  // DeepBench's Conv11 (K = 174): one tile of 176 (11 x 16), or two of 96 (K in three tiles is 64).
  ir::Conv conv11 = ir::dense_conv(DType::f16, 16, 64, 132, 43, 174, 5, 5, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
  CHECK(fitted_tiles(conv11) == std::map<int, std::vector<int>>{{96, {3, 6}}, {176, {11}}});
  const ConvParams whole = params("PL=128,KL=176,PS=8,KS=11,U=64,VI=8,VF=8,LI=8,LF=8,TC=2");
  CHECK(!lower::outside_conv_space(conv11, whole, {}, h100));
  CHECK(lower::conv_tma(conv11, whole));
  // Conv12 (K = 87): 96, or two tiles of 48.
  ir::Conv conv12 = ir::dense_conv(DType::f16, 16, 128, 260, 23, 87, 5, 5, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
  CHECK(fitted_tiles(conv12) == std::map<int, std::vector<int>>{{48, {3}}, {96, {3, 6}}});
  // A tile fitted to another K is outside this problem's space, though legal.
  CHECK(lower::outside_conv_space(conv12, whole, {}, h100).value_or("").find("outside conv_space's lists") !=
        std::string::npos);
  // K a power of two, K past 3 x 256, or a filter with K contiguous (wgmma reads it in blocks of 64
  // filters): none.
  CHECK(fitted_tiles(ir::dense_conv(DType::f16, 16, 64, 30, 30, 128, 3, 3, 1, 0, 1, ImageLayout::nhwc,
                                    FilterLayout::krsc)).empty());
  CHECK(fitted_tiles(ir::dense_conv(DType::f16, 16, 64, 30, 30, 1000, 3, 3, 1, 0, 1, ImageLayout::nhwc,
                                    FilterLayout::krsc)).empty());
  CHECK(fitted_tiles(ir::dense_conv(DType::f16, 16, 64, 30, 30, 174, 3, 3, 1, 0, 1, ImageLayout::chwn,
                                    FilterLayout::crsk)).empty());
  // Off the tensor cores' wgmma, the space keeps powers of two.
  CHECK(fitted_tiles(ir::dense_conv(DType::f32, 16, 64, 30, 30, 174, 3, 3, 1, 0, 1, ImageLayout::nhwc,
                                    FilterLayout::krsc)).empty());
}

TEST_CASE("CONV with CG > 1 for sm_90: main waits for the prepare kernel, which lets it start after its stores") {
  ir::Conv v = conv(DType::f32, ImageLayout::chwn, FilterLayout::crsk, 8, 64, 16);
  ConvParams p = lower::parse_conv_params("PL=64,KL=64,PS=4,KS=4,U=16,CG=4,VI=4,VF=4,LI=16,LF=16");
  lower::ConvKernel k = lower::emit_conv(v, p, lower::Target{90, false}, {});
  CHECK(k.overlaps_previous);
  auto main_begin = k.ptx.find(".entry " + k.main_name + "(");
  auto prepare_begin = k.ptx.find(".entry " + k.prepare_name + "(");
  REQUIRE(main_begin < prepare_begin);
  std::string main = k.ptx.substr(main_begin, prepare_begin - main_begin);
  std::string prepare = k.ptx.substr(prepare_begin);
  // Block order in the text is not execution order: the GPU suite checks that the wait is in time.
  CHECK(main.find("griddepcontrol.wait;") != std::string::npos);
  REQUIRE(prepare.find("griddepcontrol.launch_dependents;") != std::string::npos);
  CHECK(prepare.find("st.global") < prepare.find("griddepcontrol.launch_dependents;"));
  lower::ConvKernel older = lower::emit_conv(v, p, lower::Target{80, false}, {});
  CHECK_FALSE(older.overlaps_previous);
  CHECK(older.ptx.find("griddepcontrol") == std::string::npos);
}

// The CONV kernels compute their shared addresses in 64 bits and hand them to cp.async as such:
// narrowing them as the GEMM does cost f16 Conv11's winner 3 registers and a block per SM.
TEST_CASE("CONV cp.async copies take their shared address as a 64-bit register") {
  ir::Conv v = conv(DType::f16, ImageLayout::nhwc, FilterLayout::krsc, 16, 64, 43, 174, 5, 1, 0);
  ConvParams p = lower::parse_conv_params("PL=128,KL=64,PS=4,KS=16,U=32,VI=4,VF=4,LI=8,LF=8,TC=1");
  lower::ConvKernel k = lower::emit_conv(v, p, lower::Target{90, false}, {});
  const std::string copy = ".shared.global [";
  const int copies = count(k.ptx, copy);
  CHECK(copies > 0);
  CHECK(count(k.ptx, copy + "%rd") == copies);
}

// A TC=2 kernel is sm_90a PTX: per stage and warp group, U/16 x PS/8 wgmma; imm-trans 0 where an operand's
// reduction is contiguous (NHWC input; KRSC and KCRS filters), 1 where its pixels or filters are.
TEST_CASE("f16 and bf16 TC=2 CONV kernels are sm_90a PTX with U/16 x PS/8 wgmma per stage for every layout") {
  const std::pair<ImageLayout, FilterLayout> layouts[] = {{ImageLayout::chwn, FilterLayout::crsk},
                                                          {ImageLayout::nhwc, FilterLayout::krsc},
                                                          {ImageLayout::chwn, FilterLayout::kcrs},
                                                          {ImageLayout::chwn, FilterLayout::krsc}};
  for (DType t : {DType::f16, DType::bf16})
  for (auto [il, fl] : layouts)
    for (const char* text : {"PL=128,KL=128,PS=8,KS=8,U=32,VI=8,VF=8,DB=1,TC=2", "PL=128,KL=64,PS=16,KS=4,U=64,VI=8,VF=8,DB=0,TC=2"}) {
      ir::Conv v = conv(t, il, fl, 8, 64, 30, 128, 3, 1, 1);
      ConvParams p = lower::parse_conv_params(text);
      lower::fit_conv_load_layouts(v, p);
      INFO(ir::to_string(v) << " " << p.str());
      auto legal = lower::check_conv(v, p);
      REQUIRE_MESSAGE(legal.legal, legal.reason);
      auto kernel = lower::emit_conv(v, p, lower::Target{90, false}, {});
      CHECK(kernel.ptx.find(".target sm_90a") != std::string::npos);
      const std::string shape = fmt::format("wgmma.mma_async.sync.aligned.m64n{0}k16.f32.{1}.{1}", 16 * p.ks, ir::name(t));
      CHECK(count(kernel.ptx, shape) == p.u / 16 * p.ps / 8);
      // One inline-asm statement a product: merged as GEMM's are, 4 of the 28 f16 CONV sweep winners
      // assembled to other cubins (docs/emission.md).
      CHECK(inline_asm_blocks_with(kernel.ptx, shape) == count(kernel.ptx, shape));
      const bool input_reduction = il == ImageLayout::nhwc, filter_reduction = fl != FilterLayout::crsk;
      const std::string flags = fmt::format("isaac_scale, 1, 1, {}, {};", input_reduction ? 0 : 1, filter_reduction ? 0 : 1);
      CHECK(count(kernel.ptx, flags) == count(kernel.ptx, shape));
      // NHWC/KRSC copies with TMA (C = 64 is a multiple of U), which needs no proxy fence, and stores
      // by TMA (K = 128 is one matrix of KL = 64 or 128 columns), whose staging needs one.
      const bool tma = il == ImageLayout::nhwc && fl == FilterLayout::krsc;
      CHECK(lower::conv_tma(v, p) == tma);
      CHECK(lower::conv_stores_by_tma(v, p) == tma);
      CHECK(count(kernel.ptx, "fence.proxy.async.shared::cta;") == 1);
      if (lower::ptxas_available()) {
        auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
        REQUIRE_MESSAGE(report.ok, report.log);
        CHECK(report.spill_stores == 0);
      }
    }
}

// f16 TC=2 with an NHWC input and a KRSC filter copies with TMA (lower::conv_tma) where the problem
// allows it; the tensor maps carry its geometry per axis.
TEST_CASE("f16 TC=2 NHWC/KRSC CONV kernels copy with TMA where the problem allows it; the maps hold its geometry") {
  // R != S, and stride, padding and dilation differ between the axes.
  auto make = [](std::int64_t c, std::int64_t pad_h, std::int64_t stride_h) {
    ir::Conv v = ir::dense_conv(DType::f16, 3, c, 19, 17, 72, 5, 3, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
    v.stride_h = stride_h, v.pad_h = pad_h, v.pad_w = 1, v.dilation_w = 2;
    v.p = ir::output_size(v.h, v.r, v.stride_h, v.pad_h, v.dilation_h);
    v.q = ir::output_size(v.w, v.s, v.stride_w, v.pad_w, v.dilation_w);
    v.output_strides = ir::dense_strides(ImageLayout::nhwc, {v.n, v.k, v.p, v.q});
    return v;
  };
  const ir::Conv v = make(32, 2, 2);
  ConvParams p = lower::parse_conv_params("PL=64,KL=64,PS=8,KS=4,U=32,VI=8,VF=8,TC=2");
  lower::fit_conv_load_layouts(v, p);
  auto legal = lower::check_conv(v, p);
  REQUIRE_MESSAGE(legal.legal, legal.reason);
  CHECK(lower::conv_tma(v, p));

  // (TC=2's 16-byte copies already need 16-byte aligned tensors and strides, and an NHWC input's
  // reduction along its channels: a KRSC filter.)
  SUBCASE("where TMA cannot copy, the same set copies with cp.async") {
    auto without = [&](ir::Conv u, ConvParams q, const char* why) {
      INFO(std::string(why));
      lower::fit_conv_load_layouts(u, q);
      auto legal = lower::check_conv(u, q);
      CHECK_MESSAGE(legal.legal, legal.reason);
      CHECK_FALSE(lower::conv_tma(u, q));
    };
    without(make(40, 2, 2), p, "C = 40 is not a multiple of U = 32");
    without(make(32, 130, 2), p, "the window's lower corner, -130, is out of [-128, 127]");
    without(make(32, 2, 9), p, "a stride of 9 is more than TMA's 8");
    ConvParams split = lower::parse_conv_params("PL=128,KL=256,PS=16,KS=8,U=32,CG=2,VI=8,VF=8,TC=2");
    without(v, split, "ptxas spills the TMA kernel of a KL = 256 tile under a CG split");
    ConvParams mma = p;
    mma.tc = 1, mma.u = 16;
    without(v, mma, "TC=1 (mma.sync) copies with cp.async");
    ir::Conv chwn = ir::dense_conv(DType::f16, 8, 32, 19, 17, 72, 5, 3, 1, 1, 1, ImageLayout::chwn, FilterLayout::krsc);
    without(chwn, p, "a CHWN input has no contiguous channels");
  }

  SUBCASE("the maps: (C, W, H, N) in im2col mode with the windows' corners per axis, (C, S, R, K) tiled") {
    // P = (19 + 4 - 4 - 1) / 2 + 1 = 10 rows of windows from -2 by 2: the last starts at 16, two before
    // the image's end (19); Q = (17 + 2 - 4 - 1) + 1 = 15 columns from -1: the last starts at 13.
    REQUIRE(v.p == 10);
    REQUIRE(v.q == 15);
    const lower::ConvTensorMaps m = lower::conv_tensor_maps(v, p);
    CHECK(m.input_dims == std::array<std::uint64_t, 4>{32, 17, 19, 3});
    CHECK(m.input_strides == std::array<std::uint64_t, 3>{64, 17 * 64, 19 * 17 * 64});
    CHECK(m.lower_corner == std::array<int, 2>{-1, -2});
    CHECK(m.upper_corner == std::array<int, 2>{13 + 1 - 17, 16 + 1 - 19});
    CHECK(m.element_strides == std::array<std::uint32_t, 4>{1, 1, 2, 1});
    CHECK(m.channels == 32);
    CHECK(m.pixels == 64);
    CHECK(m.filter_dims == std::array<std::uint64_t, 4>{32, 3, 5, 72});
    CHECK(m.filter_strides == std::array<std::uint64_t, 3>{64, 3 * 64, 5 * 3 * 64});
    CHECK(m.filter_box == std::array<std::uint32_t, 4>{32, 1, 1, 64});
    CHECK(m.swizzle_bytes == 64);
  }

  SUBCASE("the kernel: im2col and tiled copies, no thread copies, mbarriers after the tiles") {
    auto kernel = lower::emit_conv(v, p, lower::Target{90, false}, {});
    CHECK(count(kernel.ptx, "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes") >= 1);
    CHECK(count(kernel.ptx, "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes") >= 1);
    CHECK(count(kernel.ptx, "cp.async.cg") == 0);
    CHECK(count(kernel.ptx, "cp.async.ca") == 0);
    CHECK(count(kernel.ptx, "mbarrier.try_wait.parity") >= 1);
    // 16 blocks, each reading 15 stages: a ring of all 15 (conv_pipeline_stages), each of (64 + 64) x
    // 32 halves, then a filled and an emptied mbarrier per stage and the one of TMA's copy of O.
    REQUIRE(lower::conv_pipeline_stages(v, p) == 15);
    REQUIRE(lower::conv_stores_by_tma(v, p));
    CHECK(kernel.shared_bytes == 15 * 128 * 32 * 2 + 15 * 16 + 8);
    CHECK(kernel.threads == p.threads() + (lower::conv_tma_producer_warp(v, p) ? 32 : 0));
    if (lower::ptxas_available()) {
      auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
      REQUIRE_MESSAGE(report.ok, report.log);
      CHECK(report.spill_stores == 0);
    }
  }

  SUBCASE("the GPU test's TMA cases are legal, copy with TMA, and assemble without spills") {
    auto cases = test::conv_tma_cases();
    for (const test::ConvTmaCase& c : test::conv_tma_cases(DType::bf16)) cases.push_back(c);
    int producers = 0, deep = 0, loops = 0;
    // The filter tiles fitted to K, by how their results leave: direct, staged, stored by TMA, in a loop.
    std::array<int, 4> fitted{};
    for (const test::ConvTmaCase& c : cases) {
      INFO(ir::to_string(c.problem) << " " << c.params.str());
      auto legal = lower::check_conv(c.problem, c.params, c.epilogue);
      REQUIRE_MESSAGE(legal.legal, legal.reason);
      REQUIRE(lower::conv_tma(c.problem, c.params));
      producers += lower::conv_tma_producer_warp(c.problem, c.params);
      deep += lower::conv_pipeline_stages(c.problem, c.params) > 0;
      loops += lower::conv_tile_loop(c.problem, c.params);
      if (!std::has_single_bit(unsigned(c.params.kl)))
        ++fitted[lower::conv_tile_loop(c.problem, c.params)         ? 3
                 : lower::conv_stores_by_tma(c.problem, c.params)   ? 2
                 : lower::conv_staged_stores(c.problem, c.params) ? 1
                                                                  : 0];
      if (!lower::ptxas_available()) continue;
      auto kernel = lower::emit_conv(c.problem, c.params, lower::Target{90, false}, c.epilogue);
      auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
      REQUIRE_MESSAGE(report.ok, report.log);
      CHECK(report.spill_stores == 0);
    }
    // Some run long enough for a producer warp of their own, others issue from thread 0; some on grids
    // small enough for a deep ring (conv_pipeline_stages), others on four stages.
    CHECK(producers >= 2);
    CHECK(producers < static_cast<int>(cases.size()));
    CHECK(deep >= 2);
    CHECK(deep < static_cast<int>(cases.size()));
    CHECK(loops == 6);  // three shapes, in f16 and bf16
    CHECK(fitted == std::array{4, 2, 2, 2});
  }

  SUBCASE("the maps of the GPU test's TMA cases pass the runtime's rules") {
    // The runtime checks its rules before it asks the driver: without one, a map that passes them
    // ends in DriverError, and one that breaks a rule in InvalidArgument, which fails this test.
    auto encode = [](const std::function<void()>& f) {
      try {
        f();
      } catch (const DriverError&) {
      }
    };
    for (const test::ConvTmaCase& c : test::conv_tma_cases()) {
      INFO(ir::to_string(c.problem) << " " << c.params.str());
      const lower::ConvTensorMaps m = lower::conv_tensor_maps(c.problem, c.params);
      const auto swizzle = static_cast<runtime::TensorSwizzle>(m.swizzle_bytes);
      encode([&] {
        runtime::encode_im2col_tensor_map(0x10000, 2, m.input_dims, m.input_strides, m.lower_corner, m.upper_corner,
                                          m.channels, m.pixels, m.element_strides, swizzle);
      });
      encode([&] { runtime::encode_tensor_map(0x10000, 2, m.filter_dims, m.filter_strides, m.filter_box, swizzle); });
    }
  }

  SUBCASE("a long reduction gets a producer warp") {
    ir::Conv deep = ir::dense_conv(DType::f16, 2, 256, 9, 9, 64, 3, 3, 1, 1, 1, ImageLayout::nhwc, FilterLayout::krsc);
    ConvParams q = lower::parse_conv_params("PL=128,KL=64,PS=16,KS=4,U=64,VI=8,VF=8,TC=2");
    lower::fit_conv_load_layouts(deep, q);
    REQUIRE(lower::conv_legal(deep, q));
    CHECK(lower::conv_tma_producer_warp(deep, q));  // 36 stages
    CHECK(lower::emit_conv(deep, q, lower::Target{90, false}, {}).threads == q.threads() + 32);
  }
}

// GEMM's deep pipeline on the implicit GEMM: where the grid (tiles x CG) fits on the SMs one block
// each, the ring holds as many stages as fit in 200 KB, the block's stages at most, where that is at
// least eight.
TEST_CASE("TMA CONV kernels deepen their ring where the grid fits on the SMs one block each") {
  // DeepBench's Conv13: 784 pixels x 512 filters, C*R*S = 4608 (72 stages of U = 64).
  const ir::Conv v = ir::dense_conv(DType::f16, 16, 512, 9, 9, 512, 3, 3, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
  auto fitted = [&](const char* text) {
    ConvParams p = lower::parse_conv_params(text);
    lower::fit_conv_load_layouts(v, p);
    auto legal = lower::check_conv(v, p);
    REQUIRE_MESSAGE(legal.legal, legal.reason);
    return p;
  };
  const ConvParams one_wave = fitted("PL=64,KL=64,PS=8,KS=4,U=64,VI=8,VF=8,TC=2");  // 13 x 8 = 104 blocks
  REQUIRE(lower::conv_tma(v, one_wave));
  // Stages of (64 + 64) x 64 halves, 16 KB: 12 fit in 200 KB with their mbarriers, 13 do not.
  CHECK(lower::conv_pipeline_stages(v, one_wave) == 12);
  // A split that keeps the grid within the SMs: 52 x 2 blocks of 36 stages each, of 24 KB: 8 fit.
  CHECK(lower::conv_pipeline_stages(v, fitted("PL=64,KL=128,PS=8,KS=8,U=64,CG=2,VI=8,VF=8,TC=2")) == 8);
  // Four stages elsewhere: 208 blocks; 104 x 2 blocks; one stage buffer (DB=0); a 128 x 128 tile,
  // whose stages of 32 KB leave room for six (slower than four); and a 128 x 256 tile (four).
  CHECK(lower::conv_pipeline_stages(v, fitted("PL=64,KL=32,PS=8,KS=2,U=64,VI=8,VF=8,TC=2")) == 0);
  CHECK(lower::conv_pipeline_stages(v, fitted("PL=64,KL=64,PS=8,KS=4,U=64,CG=2,VI=8,VF=8,TC=2")) == 0);
  CHECK(lower::conv_pipeline_stages(v, fitted("PL=64,KL=64,PS=8,KS=4,U=64,DB=0,VI=8,VF=8,TC=2")) == 0);
  CHECK(lower::conv_pipeline_stages(v, fitted("PL=128,KL=128,PS=8,KS=8,U=64,VI=8,VF=8,TC=2")) == 0);
  CHECK(lower::conv_pipeline_stages(v, fitted("PL=128,KL=256,PS=8,KS=16,U=64,VI=8,VF=8,TC=2")) == 0);
  // A block of seven stages (C*R*S = 448): a ring of all seven would be shallower than eight.
  const ir::Conv short_reduction =
      ir::dense_conv(DType::f16, 16, 448, 7, 7, 512, 1, 1, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
  REQUIRE(lower::conv_tma(short_reduction, one_wave));
  CHECK(lower::conv_pipeline_stages(short_reduction, one_wave) == 0);
  // Copied with cp.async (a CHWN input): no TMA ring.
  const ir::Conv chwn = ir::dense_conv(DType::f16, 16, 512, 9, 9, 512, 3, 3, 1, 0, 1, ImageLayout::chwn, FilterLayout::krsc);
  CHECK(lower::conv_pipeline_stages(chwn, lower::parse_conv_params("PL=64,KL=64,PS=8,KS=4,U=64,VI=8,VF=8,TC=2")) == 0);

  // The kernel holds the ring: 12 stages, their mbarriers after the tiles (and O's, which TMA stores),
  // and a producer warp.
  auto kernel = lower::emit_conv(v, one_wave, lower::Target{90, false}, {});
  REQUIRE(lower::conv_stores_by_tma(v, one_wave));
  CHECK(kernel.shared_bytes == 12 * 128 * 64 * 2 + 12 * 16 + 8);
  CHECK(kernel.threads == one_wave.threads() + 32);
  if (lower::ptxas_available()) {
    auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
    REQUIRE_MESSAGE(report.ok, report.log);
    CHECK(report.spill_stores == 0);
  }
}

// GEMM's tile loop on the implicit GEMM: where each block of the grid would run two tiles or more, a
// block loops over tiles, its producer warp filling the ring with the next tile's operands while the
// consumers stage and store this one's results in shared memory of their own.
TEST_CASE("TMA CONV kernels with staged stores loop over their tiles where each block would run two or more") {
  auto problem = [](std::int64_t n, std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t rs) {
    return ir::dense_conv(DType::f16, n, c, hw, hw, k, rs, rs, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
  };
  auto fitted = [](const ir::Conv& v, const char* text) {
    ConvParams p = lower::parse_conv_params(text);
    lower::fit_conv_load_layouts(v, p);
    auto legal = lower::check_conv(v, p);
    REQUIRE_MESSAGE(legal.legal, legal.reason);
    REQUIRE(lower::conv_tma(v, p));
    return p;
  };
  // DeepBench's Conv10: 25088 pixels x 256 filters, 18 K tiles of U = 64. Its sweep winner, 196 x 2
  // tiles of 128 x 128 (two warp groups, 64 accumulators a thread), one block per SM.
  const ir::Conv conv10 = problem(8, 128, 58, 256, 3);
  const ConvParams winner = fitted(conv10, "PL=128,KL=128,PS=8,KS=8,U=64,VI=8,VF=8,TC=2");
  CHECK(lower::conv_tile_loop(conv10, winner));
  CHECK(lower::conv_tma_producer_warp(conv10, winner));
  CHECK(lower::conv_tile_loop_blocks(conv10, winner, 132) == 132);
  CHECK(lower::conv_tile_loop_blocks(conv10, winner, 1000) == 392);
  CHECK(lower::conv_tile_loop_blocks(conv10, winner, 0) == 1);
  // Not loops: a split (CG = 2); 256-pixel tiles (gemm_tile_loop_max_rows); 128 accumulators a thread.
  CHECK_FALSE(lower::conv_tile_loop(conv10, fitted(conv10, "PL=128,KL=128,PS=8,KS=8,U=64,CG=2,VI=8,VF=8,TC=2")));
  CHECK_FALSE(lower::conv_tile_loop(conv10, fitted(conv10, "PL=256,KL=128,PS=16,KS=8,U=64,VI=8,VF=8,TC=2")));
  CHECK_FALSE(lower::conv_tile_loop(conv10, fitted(conv10, "PL=128,KL=128,PS=16,KS=8,U=64,VI=8,VF=8,TC=2")));
  // Conv9 (100352 pixels x 128 filters): a ring of three stages (DB=0, 96 KB) lets the grid hold two
  // blocks per SM, the loop's staging one: no loop. With four (128 KB), the grid holds one: a loop.
  const ir::Conv conv9 = problem(8, 64, 114, 128, 3);
  CHECK_FALSE(lower::conv_tile_loop(conv9, fitted(conv9, "PL=128,KL=128,PS=8,KS=8,U=64,DB=0,VI=8,VF=8,TC=2")));
  CHECK(lower::conv_tile_loop(conv9, fitted(conv9, "PL=128,KL=128,PS=8,KS=8,U=64,DB=1,VI=8,VF=8,TC=2")));
  // Too few tiles: 784 pixels x 2048 filters (Conv14) make 112 tiles of 128 x 128 for 132 SMs.
  const ir::Conv conv14 = problem(16, 1024, 7, 2048, 1);
  CHECK_FALSE(lower::conv_tile_loop(conv14, fitted(conv14, "PL=128,KL=128,PS=8,KS=8,U=64,VI=8,VF=8,TC=2")));
  // A block reads at most 32 K tiles: C*R*S = 2048 at U = 64 is 32, 2304 is 36.
  CHECK(lower::conv_tile_loop(problem(8, 128, 56, 256, 4), fitted(problem(8, 128, 56, 256, 4), "PL=128,KL=128,PS=8,KS=8,U=64,VI=8,VF=8,TC=2")));
  CHECK_FALSE(lower::conv_tile_loop(problem(8, 256, 58, 256, 3), fitted(problem(8, 256, 58, 256, 3), "PL=128,KL=128,PS=8,KS=8,U=64,VI=8,VF=8,TC=2")));
  // No staged stores (K = 174, not a multiple of 8), or copied with cp.async (a CHWN input): no loop.
  const ir::Conv odd_k = problem(8, 128, 58, 174, 3);
  CHECK_FALSE(lower::conv_tile_loop(odd_k, fitted(odd_k, "PL=128,KL=64,PS=8,KS=4,U=64,VI=8,VF=8,TC=2")));
  const ir::Conv chwn = ir::dense_conv(DType::f16, 8, 128, 58, 58, 256, 3, 3, 1, 0, 1, ImageLayout::chwn, FilterLayout::krsc);
  CHECK_FALSE(lower::conv_tile_loop(chwn, lower::parse_conv_params("PL=128,KL=128,PS=8,KS=8,U=64,VI=8,VF=8,TC=2")));

  // The kernel: the ring of four stages of 32 KB, its mbarriers and O's, then, on 1024 bytes, the
  // staging that TMA stores: 128 x 128 halves. The blocks take tiles %ctaid.x, + %nctaid.x, ...; the
  // consumers' barriers are named, of 256 threads (the producer warp takes no part).
  auto kernel = lower::emit_conv(conv10, winner, lower::Target{90, false}, {});
  CHECK(kernel.tile_loop);
  REQUIRE(lower::conv_stores_by_tma(conv10, winner));
  CHECK(kernel.shared_bytes == (4 * 32768 + 4 * 16 + 8 + 1023) / 1024 * 1024 + 128 * 128 * 2);
  CHECK(kernel.shared_bytes == lower::conv_kernel_shared_bytes(conv10, winner));
  CHECK(kernel.threads == winner.threads() + 32);
  CHECK(count(kernel.ptx, "%nctaid.x") == 1);
  // Before and after the staging.
  CHECK(count(kernel.ptx, "barrier.sync \t1, 256;") == 2);
  // A loop's leader waits for the last tile's stores to have read the staging before the next tile's
  // staging and once more at the end.
  CHECK(count(kernel.ptx, "cp.async.bulk.wait_group.read 0;") == 2);
  CHECK(count(kernel.ptx, "bar.sync \t0;") == 1);            // the mbarriers' initialisation
  if (lower::ptxas_available()) {
    auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
    REQUIRE_MESSAGE(report.ok, report.log);
    CHECK(report.spill_stores == 0);
  }
}

// 16-bit tensor-core kernels without a split stage their results in shared memory and store runs of
// 16 bytes where the output's strides keep a run contiguous and aligned (lower::conv_staged_stores);
// elsewhere they keep the direct stores.
TEST_CASE("16-bit tensor-core CONV kernels store their results in 16-byte runs where the output allows") {
  int stored_by_tma = 0;
  for (DType t : {DType::f16, DType::bf16})
    for (const test::ConvStagedCase& c : test::conv_staged_cases(t)) {
      INFO(c.what << ": " << ir::to_string(c.problem) << " " << c.params.str());
      auto legal = lower::check_conv(c.problem, c.params, c.epilogue);
      REQUIRE_MESSAGE(legal.legal, legal.reason);
      CHECK(lower::conv_staged_stores(c.problem, c.params) == c.staged);
      CHECK((lower::conv_staging_bytes(c.problem, c.params) > 0) == c.staged);
      auto kernel = lower::emit_conv(c.problem, c.params, lower::Target{90, false}, c.epilogue);
      // Under a CG split the runs are added: red.global.add.noftz.v4.f16x2 (or .bf16x2). Where TMA
      // stores the tile (and, beta != 0, copies O's tile in first), the threads neither store nor stage f32.
      const bool by_tma = lower::conv_stores_by_tma(c.problem, c.params);
      stored_by_tma += by_tma;
      CHECK((count(kernel.ptx, "cp.async.bulk.tensor.3d.global.shared::cta") > 0) == by_tma);
      if (by_tma) CHECK(count(kernel.ptx, "ldmatrix") > 0);
      const auto vector_ops = count(kernel.ptx, "st.global.v4.b32") + count(kernel.ptx, "red.global.add.noftz.v4");
      CHECK((vector_ops > 0) == (c.staged && !by_tma));
      CHECK((count(kernel.ptx, "red.global.add.noftz.v4") > 0) == (c.staged && c.params.cg > 1));
      CHECK(kernel.shared_bytes >= lower::conv_staging_bytes(c.problem, c.params));
      // sm_90 stages finished 16-bit values with stmatrix, transposed where the runs go down the
      // pixels; the f32 staging remains for beta != 0, which a split's parts never need.
      const bool along_pixels = c.problem.output_strides[1] != 1;
      CHECK((stmatrix_lines(kernel.ptx, false) > 0) == (c.staged && !along_pixels));
      CHECK((stmatrix_lines(kernel.ptx, true) > 0) == (c.staged && along_pixels));
      CHECK((count(kernel.ptx, "st.shared.f32") > 0) == (c.staged && c.params.cg == 1 && !by_tma));
      if (lower::ptxas_available()) {
        auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
        REQUIRE_MESSAGE(report.ok, report.log);
        CHECK(report.spill_stores == 0);
      }
    }
  // K = 72, beta 0 and not, in f16 and bf16. Not K = 36 in rows of 48: TMA wrote into its gaps.
  CHECK(stored_by_tma == 4);

  SUBCASE("before sm_90 (no stmatrix) the staging is f32 whatever beta") {
    ir::Conv v = conv(DType::f16, ImageLayout::nhwc, FilterLayout::krsc, 3, 32, 9, 72);
    ConvParams p = lower::parse_conv_params("PL=64,KL=64,PS=4,KS=8,U=16,VI=8,VF=8,TC=1");
    lower::fit_conv_load_layouts(v, p);
    REQUIRE(lower::conv_staged_stores(v, p));
    const std::string ptx = lower::emit_conv(v, p, lower::Target{80, false}, {.bias = true}).ptx;
    CHECK(count(ptx, "stmatrix") == 0);
    CHECK(count(ptx, "st.shared.f32") > 0);
    CHECK(count(ptx, "st.global.v4.b32") > 0);
  }

  SUBCASE("the staging runs along the output's contiguous axis, and may need more memory than the tiles") {
    // 64 x 32 cells of f32 in rows of 64 + 4 pixels (NCHW) or 32 + 4 filters (NHWC).
    ConvParams p = lower::parse_conv_params("PL=64,KL=32,PS=4,KS=4,U=16,VI=1,VF=1,DB=0,TC=1");
    ir::Conv nchw = conv(DType::f16, ImageLayout::nchw, FilterLayout::kcrs, 2, 16, 8, 48);
    lower::fit_conv_load_layouts(nchw, p);
    REQUIRE(lower::conv_legal(nchw, p));
    CHECK(lower::conv_staging_bytes(nchw, p) == 32 * 68 * 4);
    // Two stages of (64 + 32) rows of 16 + 4 halves take 7,680 bytes.
    CHECK(lower::emit_conv(nchw, p, lower::Target{90, false}, {}).shared_bytes == 32 * 68 * 4);
    ir::Conv nhwc = conv(DType::f16, ImageLayout::nhwc, FilterLayout::krsc, 2, 16, 8, 48);
    CHECK(lower::conv_staging_bytes(nhwc, p) == 64 * 36 * 4);
  }

  SUBCASE("f32, f64, FMA kernels and warp groups splitting a stage keep their stores") {
    ir::Conv v = conv(DType::f16, ImageLayout::nhwc, FilterLayout::krsc, 3, 32, 9, 72);
    CHECK_FALSE(lower::conv_staged_stores(v, lower::parse_conv_params("PL=64,KL=64,PS=4,KS=8,U=32,CL=2,VI=8,VF=8,TC=1")));
    CHECK_FALSE(lower::conv_staged_stores(v, lower::parse_conv_params("PL=64,KL=64,PS=4,KS=4,U=16,VI=8,VF=8,TC=0")));
    for (DType t : {DType::f32, DType::f64})
      CHECK_FALSE(lower::conv_staged_stores(conv(t, ImageLayout::nhwc, FilterLayout::krsc, 3, 32, 9, 72),
                                            lower::parse_conv_params("PL=64,KL=64,PS=4,KS=8,U=16,VI=2,VF=2,TC=1")));
  }
}

// A TMA kernel's threads hold no copy addresses: a 64 x 256 tile in one warp group (128 accumulators
// per thread) is legal where TMA copies it, and refused where its threads would copy with cp.async.
TEST_CASE("CONV register estimate: TMA kernels hold no copy addresses") {
  ConvParams p = lower::parse_conv_params("PL=64,KL=256,PS=8,KS=16,U=64,VI=8,VF=8,TC=2");
  ir::Conv tma = ir::dense_conv(DType::f16, 16, 1024, 7, 7, 2048, 1, 1, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
  lower::fit_conv_load_layouts(tma, p);
  auto legal = lower::check_conv(tma, p);
  REQUIRE_MESSAGE(legal.legal, legal.reason);
  CHECK(lower::conv_tma(tma, p));
  // C = 1000 is not a multiple of U: the threads copy with cp.async.
  ir::Conv copies = ir::dense_conv(DType::f16, 16, 1000, 7, 7, 2048, 1, 1, 1, 0, 1, ImageLayout::nhwc, FilterLayout::krsc);
  CHECK_FALSE(lower::conv_tma(copies, p));
  CHECK_REJECTED(lower::check_conv(copies, p), "an estimated");
  CHECK(lower::estimate_conv_registers(tma, p) < lower::estimate_conv_registers(copies, p));
  if (lower::ptxas_available()) {
    auto kernel = lower::emit_conv(tma, p, lower::Target{90, false}, {});
    auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
    REQUIRE_MESSAGE(report.ok, report.log);
    CHECK(report.spill_stores == 0);
    CHECK(report.registers <= lower::estimate_conv_registers(tma, p));
  }
}

TEST_CASE("the CONV look-up table: offsets and taps per reduction index, padded with taps outside the image") {
  // NCHW, c=3, 5x7 image, 3x2 filter, dilation 2: j runs (c, r, s).
  ir::Conv v = ir::dense_conv(DType::f32, 2, 3, 5, 7, 4, 3, 2, 1, 1, 2);
  ConvParams p = base();
  auto lut = lower::conv_lookup_table(v, p);
  CHECK(lut.size() == 24);  // 18 rounded up to U = 8
  for (int j = 0; j < 18; ++j) {
    int c = j / 6, r = (j / 2) % 3, s = j % 2;
    CHECK(lut[j][0] == c * 35 + 2 * r * 7 + 2 * s);
    CHECK(lut[j][1] == 2 * r);
    CHECK(lut[j][2] == 2 * s);
  }
  for (int j = 18; j < 24; ++j) CHECK(lut[j][1] >= (1 << 28));
  // KRSC / NHWC: j runs (r, s, c), c fastest.
  ir::Conv n = ir::dense_conv(DType::f32, 2, 3, 5, 7, 4, 3, 2, 1, 1, 1, ImageLayout::nhwc, FilterLayout::krsc);
  auto lut2 = lower::conv_lookup_table(n, p);
  for (int j = 0; j < 18; ++j) {
    int c = j % 3, s = (j / 3) % 2, r = j / 6;
    CHECK(lut2[j][0] == c + s * 3 + r * 7 * 3);
  }
}

// ---------------------------------------------------------------------------------------------
// The ptxas sweep.

TEST_CASE("ptxas assembles 300+ legal CONV parameter sets across layouts and dtypes with no spills") {
  if (!lower::ptxas_available()) {
    MESSAGE("SKIPPED: ptxas is not on PATH (nor $ISAAC_PTXAS): the CONV ptxas sweep needs it");
    return;
  }
  struct Job {
    ir::Conv problem;
    ConvParams params;
    lower::ConvEpilogue epilogue;
    lower::Target target;
  };
  std::mt19937_64 rng(20170917);
  std::vector<Job> jobs;
  const std::pair<ImageLayout, FilterLayout> layouts[] = {
      {ImageLayout::nchw, FilterLayout::kcrs}, {ImageLayout::chwn, FilterLayout::crsk},
      {ImageLayout::nhwc, FilterLayout::krsc}, {ImageLayout::nchw, FilterLayout::crsk},
      {ImageLayout::nhwc, FilterLayout::kcrs}};
  struct Shape {
    std::int64_t n, c, h, k, r, stride, pad, dil;
  };
  const Shape shapes[] = {{8, 64, 30, 128, 3, 1, 1, 1}, {16, 32, 17, 64, 5, 2, 2, 1}, {4, 16, 20, 96, 3, 1, 2, 2},
                          {8, 128, 9, 256, 1, 1, 0, 1}};
  int count = 0;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (auto [il, fl] : layouts)
      for (const Shape& s : shapes) {
        ir::Conv v = ir::dense_conv(t, s.n, s.c, s.h, s.h, s.k, s.r, s.r, s.stride, s.pad, s.dil, il, fl);
        auto space = lower::conv_space(v);
        REQUIRE_MESSAGE(!space.empty(), "no legal parameters for " << ir::to_string(v));
        // The space is sm_90's: sm_80 draws leave its wgmma (TC=2) sets out, and bf16's splits (CG > 1
        // adds with bf16 reductions, sm_90's).
        std::vector<ConvParams> mma, wgmma, sm80;
        for (const ConvParams& p : space) {
          if (p.tc == 2) wgmma.push_back(p);
          if (p.tc == 2 || (t == DType::bf16 && p.cg > 1)) continue;
          sm80.push_back(p);
          if (p.tc == 1) mma.push_back(p);
        }
        // bf16's kernels are f16's with other instruction types: fewer draws.
        for (int i = 0; i < (t == DType::bf16 ? 2 : 6); ++i) {
          lower::ConvEpilogue e{(count % 3) == 0, false};
          lower::Target target = lower::parse_target(count % 2 ? "sm_80" : "sm_90");
          // Half the tensor-core dtypes' draws from their mma.sync sets (on sm_80), and f16's sm_90
          // draws from its wgmma sets where the input has them.
          const auto& from = target.sm == 90 && !wgmma.empty() ? wgmma
                             : i % 2 && !mma.empty()                        ? mma
                             : target.sm == 90                              ? space
                                                                            : sm80;
          ConvParams p = from[rng() % from.size()];
          if (p.cg == 1 && count % 5 == 0) e.relu = true;
          jobs.push_back({v, p, e, target});
          ++count;
        }
      }
  REQUIRE(jobs.size() >= 300);
  struct Result {
    std::string error;
    int regs = 0, spills = 0, est = 0;
    double emit_ms = 0;
  };
  std::vector<Result> results(jobs.size());
  auto start = std::chrono::steady_clock::now();
  test::parallel_for(jobs.size(), 2, [&](size_t i) {
    const Job& j = jobs[i];
    try {
      auto k = lower::emit_conv(j.problem, j.params, j.target, j.epilogue);
      results[i].emit_ms = k.emit_ms;
      results[i].est = lower::estimate_conv_registers(j.problem.dtype, lower::conv_input_reduction_contiguous(j.problem),
                                                      lower::conv_filter_k_contiguous(j.problem), j.params);
      auto rep = lower::run_ptxas(k.ptx, j.target, k.main_name);
      if (!rep.ok) results[i].error = "ptxas failed: " + rep.log.substr(0, 400);
      results[i].regs = rep.registers;
      results[i].spills = rep.spill_stores + rep.spill_loads;
      if (k.ptx.find(".entry " + k.main_name + "(") == std::string::npos) results[i].error = "no main entry";
      if (j.params.cg > 1 && k.ptx.find(".entry " + k.prepare_name + "(") == std::string::npos)
        results[i].error = "no prepare entry";
    } catch (const std::exception& e) {
      results[i].error = e.what();
    }
  });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int failed = 0, spilled = 0;
  auto tc_jobs = std::count_if(jobs.begin(), jobs.end(), [](const Job& j) { return j.params.tc; });
  auto wgmma_jobs = std::count_if(jobs.begin(), jobs.end(), [](const Job& j) { return j.params.tc == 2; });
  auto tma_jobs = std::count_if(jobs.begin(), jobs.end(), [](const Job& j) { return lower::conv_tma(j.problem, j.params); });
  CHECK(tc_jobs >= 50);
  CHECK(wgmma_jobs >= 20);
  CHECK(tma_jobs >= 5);
  double emit_total = 0, est_error = 0, est_bias = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& r = results[i];
    emit_total += r.emit_ms;
    est_error += std::abs(r.est - r.regs);
    est_bias += r.est - r.regs;
    std::string what = fmt::format("{} {} {} {}", ir::to_string(jobs[i].problem), jobs[i].params.str(),
                                   lower::to_string(jobs[i].epilogue), jobs[i].target.name());
    if (!r.error.empty()) {
      ++failed;
      FAIL_CHECK(what << ": " << r.error);
    } else if (r.spills > 0) {
      ++spilled;
      FAIL_CHECK(what << ": " << r.spills << " bytes of spills (" << r.regs << " registers)");
    }
  }
  MESSAGE(fmt::format("{} CONV kernels ({} on tensor cores, {} of them TC=2, {} with TMA) through ptxas in {:.1f} s on 2 threads: {} "
                      "failed, {} spilled; LLVM {:.1f} ms per kernel on average; register estimate off by {:.1f} on "
                      "average (estimate - ptxas: {:+.1f})",
                      jobs.size(), tc_jobs, wgmma_jobs, tma_jobs, seconds, failed, spilled, emit_total / jobs.size(), est_error / jobs.size(),
                      est_bias / jobs.size()));
  CHECK(failed == 0);
  CHECK(spilled == 0);
}
