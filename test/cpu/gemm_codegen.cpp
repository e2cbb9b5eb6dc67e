// The GEMM code generator without a GPU: the parameters' text form, the legality function and its
// reasons, and the issue's CI proof -- ptxas assembles the PTX of 500+ legal parameter sets drawn
// across the whole space (every dtype and layout, sm_80 and sm_90) with no spills, and the register
// estimate is compared with ptxas's count.
#include <doctest/doctest.h>
#include <isaac/error.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/lower/target.hpp>

#include <fmt/format.h>

#include "support/legality_checks.hpp"
#include "support/occurrences.hpp"
#include "support/parallel_compile.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <regex>
#include <array>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <sys/resource.h>
#include <time.h>

using namespace isaac;
using lower::GemmParams;
using lower::Legality;

namespace {

using ir::DType;

// Deterministic everywhere: mt19937_64 is specified exactly; the distributions are not, so none is used.
struct Rng {
  std::mt19937_64 engine;
  explicit Rng(std::uint64_t seed) : engine(seed) {}
  std::uint64_t below(std::uint64_t n) { return engine() % n; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }
};

std::string layout_name(bool a_trans, bool b_trans) { return std::string(a_trans ? "T" : "N") + (b_trans ? "T" : "N"); }

// A legal f32 NN set of 256 threads the rejection tests start from (the issue's example).
GemmParams base_params() { return lower::parse_gemm_params("ML=64,NL=64,MS=4,NS=4,U=8,VA=2,VB=1,LA=32,LB=8"); }

GemmParams with(GemmParams p, const char* text) {
  // Overrides the fields named in `text` (KEY=VALUE,...), keeping the rest of `p`.
  std::stringstream items{std::string(text)};
  std::string item;
  while (std::getline(items, item, ',')) {
    GemmParams one = lower::parse_gemm_params(item);
    std::string key = item.substr(0, item.find('='));
    static const std::map<std::string, int GemmParams::*> fields = {
        {"ML", &GemmParams::ml}, {"NL", &GemmParams::nl}, {"MS", &GemmParams::ms}, {"NS", &GemmParams::ns},
        {"U", &GemmParams::u},   {"KS", &GemmParams::ks}, {"KL", &GemmParams::kl}, {"KG", &GemmParams::kg},
        {"VA", &GemmParams::va}, {"VB", &GemmParams::vb}, {"LA", &GemmParams::la}, {"LB", &GemmParams::lb},
        {"DB", &GemmParams::db}, {"SW", &GemmParams::sw}, {"ACC", &GemmParams::acc32}, {"TC", &GemmParams::tc},
        {"TMA", &GemmParams::tma}, {"ST", &GemmParams::st}};
    auto field = fields.at(key);
    p.*field = one.*field;
  }
  return p;
}

Legality params_f32(const GemmParams& p, const lower::DeviceLimits& d = {}) {
  return lower::check_gemm_params(DType::f32, false, false, p, d);
}

// Where ptxas is on PATH: the kernel assembles for sm_90a and stores nothing to local memory.
void assembles_for_sm90a_without_spill_stores(const lower::GemmKernel& kernel) {
  if (!lower::ptxas_available()) return;
  auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
  REQUIRE_MESSAGE(report.ok, report.log);
  CHECK(report.spill_stores == 0);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// 1. The text form

TEST_CASE("GEMM parameters print in one order and parse back") {
  GemmParams p;
  p.ml = 128, p.nl = 32, p.ms = 8, p.ns = 2, p.u = 16, p.ks = 2, p.kl = 4, p.kg = 8, p.va = 4, p.vb = 2;
  p.la = 16, p.lb = 8, p.db = 0, p.sw = 8, p.acc32 = 0;
  CHECK(p.str() == "ML=128,NL=32,MS=8,NS=2,U=16,KS=2,KL=4,KG=8,VA=4,VB=2,LA=16,LB=8,DB=0,SW=8,ACC=16,TC=0");
  CHECK(lower::parse_gemm_params(p.str()) == p);
  p.acc32 = 1, p.tc = 1;
  CHECK(p.str().ends_with(",ACC=32,TC=1"));
  CHECK(lower::parse_gemm_params(p.str()) == p);

  SUBCASE("keys in any order, missing keys keep their defaults") {
    GemmParams q = lower::parse_gemm_params("NL=32,ACC=16,ML=128");
    GemmParams expected;
    expected.ml = 128, expected.nl = 32, expected.acc32 = 0;
    CHECK(q == expected);
    CHECK(lower::parse_gemm_params("") == GemmParams{});
  }

  SUBCASE("random sets round trip") {
    Rng rng(20170901);
    const std::vector<int> values = {0, 1, 2, 3, 4, 7, 8, 16, 32, 48, 64, 100, 128, 256, 1024, 65535, 1 << 30};
    for (int trial = 0; trial < 2000; ++trial) {
      GemmParams r;
      for (int GemmParams::*field : {&GemmParams::ml, &GemmParams::nl, &GemmParams::ms, &GemmParams::ns, &GemmParams::u,
                                     &GemmParams::ks, &GemmParams::kl, &GemmParams::kg, &GemmParams::va, &GemmParams::vb,
                                     &GemmParams::la, &GemmParams::lb, &GemmParams::db, &GemmParams::sw})
        r.*field = rng.pick(values);
      r.acc32 = static_cast<int>(rng.below(2));
      r.tc = static_cast<int>(rng.below(2));
      std::string text = r.str();
      CAPTURE(text);
      GemmParams back = lower::parse_gemm_params(text);
      CHECK(back == r);
      CHECK(back.str() == text);
    }
  }
}

TEST_CASE("malformed GEMM parameter text is rejected with a message that names the problem") {
  using lower::parse_gemm_params;
  CHECK_THROWS_WITH_AS(parse_gemm_params("ML=64,FOO=3"),
                       doctest::Contains("unknown GEMM parameter 'FOO': the keys are ML, NL, MS, NS, U, KS, KL, KG, "
                                         "VA, VB, LA, LB, DB, SW, ACC"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ml=64"), doctest::Contains("unknown GEMM parameter 'ml'"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("=4"), doctest::Contains("unknown GEMM parameter ''"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ML=64,NL"),
                       doctest::Contains("malformed GEMM parameter 'NL' in 'ML=64,NL': expected KEY=VALUE"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ML=64,,NL=4"), doctest::Contains("malformed GEMM parameter ''"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ML=abc"), doctest::Contains("GEMM parameter ML has a non-integer value 'abc'"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ML=6x4"), doctest::Contains("GEMM parameter ML has a non-integer value '6x4'"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("NS="), doctest::Contains("GEMM parameter NS has a non-integer value ''"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("U=1.5"), doctest::Contains("non-integer value '1.5'"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("KG=99999999999"),
                       doctest::Contains("KG=99999999999 is out of range: values are 32-bit integers"), InvalidArgument);
  // Which of two values was meant is not for the parser to guess; a trailing comma is a missing item.
  CHECK_THROWS_WITH_AS(parse_gemm_params("ML=64,NL=32,ML=128"), doctest::Contains("GEMM parameter ML is given twice"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ML=64,"), doctest::Contains("malformed GEMM parameter '' in 'ML=64,'"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ACC=20"),
                       doctest::Contains("ACC=20 is not allowed: ACC is 32 or 16 (f16 accumulation)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_gemm_params("ACC=1"), doctest::Contains("ACC=1 is not allowed"), InvalidArgument);
  CHECK(parse_gemm_params("ACC=16").acc32 == 0);
  CHECK(parse_gemm_params("ACC=32").acc32 == 1);
}

// ---------------------------------------------------------------------------------------------
// 2. Legality: every reason, with its message

TEST_CASE("the base parameter set of the rejection tests is legal") {
  GemmParams p = base_params();
  CHECK_LEGAL(params_f32(p));
  CHECK_LEGAL(lower::check_gemm(ir::dense_gemm(DType::f32, 256, 256, 256, false, false), p));
  CHECK(p.threads() == 256);
  // The helper used below overrides fields only.
  GemmParams q = with(p, "ML=128,ACC=16");
  CHECK(q.ml == 128);
  CHECK(q.acc32 == 0);
  CHECK(q.nl == 64);
  CHECK(q.va == 2);
}

TEST_CASE("legality: parameters that are not powers of two, or out of range") {
  GemmParams b = base_params();
  CHECK_REJECTED(params_f32(with(b, "ML=48")), "ML=48 must be a power of two");
  CHECK_REJECTED(params_f32(with(b, "NS=3")), "NS=3 must be a power of two");
  CHECK_REJECTED(params_f32(with(b, "U=12")), "U=12 must be a power of two");
  CHECK_REJECTED(params_f32(with(b, "KG=0")), "KG=0 must be at least 1");
  CHECK_REJECTED(params_f32(with(b, "KL=-2")), "KL=-2 must be a power of two");
  CHECK_REJECTED(params_f32(with(b, "VA=3")), "VA=3 must be a power of two");
  CHECK_REJECTED(params_f32(with(b, "DB=2")), "DB=2 must be 0 or 1");
  CHECK_REJECTED(params_f32(with(b, "SW=0")), "SW=0 must be at least 1");
  // Far past any kernel, before the products of later checks overflow (ML x NL once wrapped to 0
  // threads and divided by it; SW = 2^30 made the swizzle's group width 0 in the kernel).
  CHECK_REJECTED(params_f32(with(b, "ML=65536,NL=65536,MS=1,NS=1,LA=1,LB=1")),
                 "ML=65536 is larger than any kernel takes: ML must be at most 1024");
  CHECK_REJECTED(params_f32(with(b, "SW=1073741824")), "SW must be at most 1024");
  CHECK_REJECTED(params_f32(with(b, "VA=1073741824")), "VA must be at most 16");
  CHECK_REJECTED(params_f32(with(b, "LB=1073741824")), "LB must be at most 1024");
}

TEST_CASE("legality: the thread tile must divide the block tile, KL x KS must divide U") {
  GemmParams b = base_params();
  CHECK_REJECTED(params_f32(with(b, "ML=16,MS=32")), "MS=32 must divide ML=16");
  CHECK_REJECTED(params_f32(with(b, "NL=16,NS=32")), "NS=32 must divide NL=16");
  CHECK_REJECTED(params_f32(with(b, "U=4,KL=8")), "KL=8 x KS=1 must divide U=4");
  CHECK_REJECTED(params_f32(with(b, "U=8,KL=4,KS=4")), "KL=4 x KS=4 must divide U=8");
}

TEST_CASE("legality: whole warps, and no more threads than the device allows") {
  GemmParams b = base_params();
  // (16/4) x (16/4) = 16 threads.
  CHECK_REJECTED(params_f32(with(b, "ML=16,NL=16,LA=16,LB=2")),
                 "(ML/MS)x(NL/NS)xKL = 16 threads is not a whole number of warps");
  // (64/4) x (64/4) x KL=3 is caught earlier (KL is a power of two); 48 threads:
  CHECK_REJECTED(params_f32(with(b, "ML=32,NL=48,MS=4,NS=8")), "NL=48 must be a power of two");
  // (128/2) x (128/4) = 2048 threads.
  CHECK_REJECTED(params_f32(with(b, "ML=128,NL=128,MS=2,NS=4")), "2048 threads per block exceed the device's 1024");
  // KL multiplies the threads: 256 x 8.
  CHECK_REJECTED(params_f32(with(b, "U=8,KL=8")), "2048 threads per block exceed the device's 1024");
  lower::DeviceLimits small;
  small.max_threads_per_block = 128;
  CHECK_REJECTED(params_f32(b, small), "256 threads per block exceed the device's 128");
}

TEST_CASE("legality: vector loads wider than 16 bytes") {
  GemmParams b = base_params();
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, with(b, "VA=4,LA=16"), {}),
                 "VA=4 exceeds 16-byte loads for 8-byte elements");
  CHECK_REJECTED(params_f32(with(b, "VB=8,LB=1")), "VB=8 exceeds 16-byte loads for 4-byte elements");
  // f16 takes 8 elements per 16-byte load.
  GemmParams h = with(b, "VA=8,LA=8");
  CHECK(lower::check_gemm_params(DType::f16, false, false, h, {}).reason.find("exceeds 16-byte") == std::string::npos);
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(b, "VA=16,LA=4"), {}),
                 "VA=16 exceeds 16-byte loads for 2-byte elements");
}

TEST_CASE("legality: the load layouts must tile the A and B tiles exactly") {
  GemmParams b = base_params();  // 256 threads; NN: A tile is 64 (contiguous) x 8, B tile is 8 (contiguous) x 64
  CHECK_REJECTED(params_f32(with(b, "LA=3")), "LA=3 must divide the 256 threads of a block");
  CHECK_REJECTED(params_f32(with(b, "LA=0")), "LA=0 must divide the 256 threads of a block");
  CHECK_REJECTED(params_f32(with(b, "LB=512")), "LB=512 must divide the 256 threads of a block");
  CHECK_REJECTED(params_f32(with(b, "LA=64,VA=2")),
                 "LA=64 threads x VA=2 elements must divide the 64 contiguous elements of the A tile");
  CHECK_REJECTED(params_f32(with(b, "LB=16,VB=1")),
                 "LB=16 threads x VB=1 elements must divide the 8 contiguous elements of the B tile");
  CHECK_REJECTED(params_f32(with(b, "LA=16,VA=1")),
                 "the 16 threads not along the contiguous axis (256 / LA=16) must divide the other extent 8 of the A "
                 "tile");
  CHECK_REJECTED(params_f32(with(b, "LB=2,VB=1")),
                 "the 128 threads not along the contiguous axis (256 / LB=2) must divide the other extent 64 of the B "
                 "tile");
  // Transposition swaps which extent is contiguous: TN's A tile is U=8 (contiguous) x ML=64, so the
  // NN layout LA=32 x VA=2 no longer fits, and LA=4 x VA=2 does.
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, true, false, b, {}),
                 "LA=32 threads x VA=2 elements must divide the 8 contiguous elements of the A tile");
  CHECK_LEGAL(lower::check_gemm_params(DType::f32, true, false, with(b, "LA=4"), {}));
  // NT's B tile is NL=64 (contiguous) x U=8.
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, true, b, {}),
                 "the 32 threads not along the contiguous axis (256 / LB=8) must divide the other extent 8 of the B "
                 "tile");
  CHECK_LEGAL(lower::check_gemm_params(DType::f32, false, true, with(b, "LB=32"), {}));
}

TEST_CASE("legality: shared memory above the device's limit") {
  // f64, 256 x 256 x U=32, double-buffered: far over the 227 KB opt-in limit.
  GemmParams big = lower::parse_gemm_params("ML=256,NL=256,MS=16,NS=16,U=32,VA=1,VB=1,LA=256,LB=32,DB=1");
  int bytes = lower::gemm_shared_bytes(DType::f64, false, false, big);
  CHECK(bytes >= 2 * 2 * 256 * 32 * 8);  // two stages of two 256 x 32 f64 tiles, plus padding
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, big, {}),
                 std::to_string(bytes) + " bytes of shared memory exceed the device's 232448 per block");
  // A 48 KB device rejects what the H100's opt-in limit accepts.
  GemmParams mid = lower::parse_gemm_params("ML=128,NL=128,MS=8,NS=8,U=32,VA=4,VB=4,LA=32,LB=8,DB=1");
  CHECK_LEGAL(params_f32(mid));
  lower::DeviceLimits old;
  old.max_shared_per_block = 48 * 1024;
  int mid_bytes = lower::gemm_shared_bytes(DType::f32, false, false, mid);
  CHECK(mid_bytes > 48 * 1024);
  CHECK_REJECTED(params_f32(mid, old), std::to_string(mid_bytes) + " bytes of shared memory exceed the device's 49152");
  // DB=0 halves the tiles.
  CHECK(lower::gemm_shared_bytes(DType::f32, false, false, with(mid, "DB=0")) * 2 == mid_bytes);
  // KL > 1 needs room for the cross-warp reduction: (KL-1) x ML x NL accumulators.
  GemmParams split = with(base_params(), "KL=4,U=8");
  CHECK(lower::gemm_shared_bytes(DType::f32, false, false, split) >= 3 * 64 * 64 * 4);
}

TEST_CASE("legality: the register estimate against the per-thread and per-block limits") {
  // f32 128 x 128 with a 16 x 16 thread tile: 256 accumulators alone.
  GemmParams fat = lower::parse_gemm_params("ML=128,NL=128,MS=16,NS=16,U=8,VA=1,VB=1,LA=64,LB=8");
  int regs = lower::estimate_gemm_registers(DType::f32, false, false, fat);
  CHECK(regs > 255);
  CHECK_REJECTED(params_f32(fat), "an estimated " + std::to_string(regs) +
                                     " registers per thread (+46 of margin) exceed the budget of 255 for 64 threads");
  // f64 doubles the accumulators: 8 x 8 f64 is 128 registers, and more than 255 with everything else at 16 x 8.
  GemmParams f64 = lower::parse_gemm_params("ML=128,NL=64,MS=16,NS=8,U=8,VA=1,VB=1,LA=64,LB=8");
  int regs64 = lower::estimate_gemm_registers(DType::f64, false, false, f64);
  CHECK(regs64 > 255);
  CHECK(regs64 > lower::estimate_gemm_registers(DType::f32, false, false, f64));
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, f64, {}), "exceed the budget of 255");
  // The budget is the block's register file shared by its threads: 64 per thread at 1024 threads.
  GemmParams wide = lower::parse_gemm_params("ML=128,NL=128,MS=4,NS=4,U=8,VA=1,VB=1,LA=128,LB=8");
  int wide_regs = lower::estimate_gemm_registers(DType::f32, false, false, wide);
  CHECK_REJECTED(params_f32(wide), "an estimated " + std::to_string(wide_regs) +
                                       " registers per thread (+46 of margin) exceed the budget of 64 for 1024 threads");
  GemmParams narrow = lower::parse_gemm_params("ML=64,NL=64,MS=4,NS=4,U=8,VA=1,VB=1,LA=64,LB=8");
  CHECK_LEGAL(params_f32(narrow));
  lower::DeviceLimits half;
  half.registers_per_block = 16384;  // 64 per thread at 256 threads, under 76 + 46
  CHECK_REJECTED(params_f32(narrow, half), "exceed the budget of 64 for 256 threads");
  lower::DeviceLimits tight;
  tight.max_registers_per_thread = 32;
  CHECK_REJECTED(params_f32(base_params(), tight), "exceed the budget of 32");
  // Live data over 70% of the budget is refused even when the estimate fits: such sets spilled.
  // 128 accumulators + 2 x 24 fragments + 8 address registers = 184 > 70% of 255 (128 threads).
  GemmParams live = lower::parse_gemm_params("ML=128,NL=128,MS=16,NS=8,U=8,KS=2,VA=4,VB=4,LA=32,LB=32,DB=0");
  CHECK(lower::estimate_gemm_registers(DType::f32, false, true, live) + 46 <= 255);
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, true, live, {}), "184 registers of accumulators");
  // 128 accumulator registers with a warp-group split spilled in the ptxas sweeps.
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, true, with(live, "KS=1,KL=2,U=16"), {}),
                 "KL=2 with MS x NS = 128 accumulators (128 registers) per thread");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, true, with(live, "ACC=16,VA=8,VB=8,LA=16,LB=16"), {}),
                 "f16 accumulation with MS x NS = 128 accumulators (64 registers) per thread");
  // The fastest f32 set at 4096^3 on the H100 stays legal: an estimate of 208 against 255.
  GemmParams big = lower::parse_gemm_params("ML=128,NL=128,MS=16,NS=8,U=8,VA=4,VB=4,LA=32,LB=32");
  CHECK(lower::estimate_gemm_registers(DType::f32, false, true, big) == 208);
  CHECK_LEGAL(lower::check_gemm_params(DType::f32, false, true, big, {}));
  // The estimate grows with what a thread holds.
  GemmParams b = base_params();
  CHECK(lower::estimate_gemm_registers(DType::f32, false, false, with(b, "MS=8,NS=8")) >
        lower::estimate_gemm_registers(DType::f32, false, false, b));
  CHECK(lower::estimate_gemm_registers(DType::f32, false, false, with(b, "DB=0")) <
        lower::estimate_gemm_registers(DType::f32, false, false, b));
}

TEST_CASE("legality: f16 accumulation needs an even MS; bf16 accumulates in f32, from sm_80 on") {
  GemmParams h = lower::parse_gemm_params("ML=32,NL=32,MS=1,NS=4,U=8,VA=1,VB=1,LA=32,LB=8,ACC=32");
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, h, {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(h, "ACC=16"), {}),
                 "f16 accumulation works on f16x2 pairs along M: MS=1 must be even");
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, with(h, "ACC=16,ML=64,MS=2"), {}));
  // ACC=16 only means something for f16: elsewhere it is refused rather than ignored.
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, with(h, "ACC=16"), {}),
                 "ACC=16 (f16 accumulation) is for f16 only");
  for (bool at : {false, true})
    for (bool bt : {false, true}) {
      GemmParams p = base_params();
      if (at) p.la = 4;
      if (bt) p.lb = 32, p.vb = 2;
      CHECK_LEGAL(lower::check_gemm(ir::dense_gemm(DType::bf16, 256, 256, 256, at, bt), p));
    }
  CHECK_REJECTED(lower::check_gemm_params(DType::bf16, false, false, with(h, "ACC=16,ML=64,MS=2"), {}),
                 "ACC=16 (f16 accumulation) is for f16 only; bf16 accumulates in f32");
  lower::DeviceLimits volta, ampere;
  volta.sm = 70, ampere.sm = 80;
  CHECK_REJECTED(lower::check_gemm_params(DType::bf16, false, false, h, volta), "bf16 needs sm_80 or newer, not sm_70");
  CHECK_LEGAL(lower::check_gemm_params(DType::bf16, false, false, h, ampere));
  CHECK_REJECTED(lower::check_gemm_params(DType::bf16, false, false, with(h, "KG=2"), ampere),
                 "KG=2 with bf16 adds partial sums into C with bf16 reductions, which need sm_90");
  CHECK_LEGAL(lower::check_gemm_params(DType::bf16, false, false, with(h, "KG=2"), {}));
}

TEST_CASE("legality: TC=1 (tensor cores) needs f16, bf16, f32 or f64, sm_80, f32 accumulation and mma-shaped warp tiles") {
  // 8 x 4 warps' threads of 8 MS x 4 NS each: a 128 x 128 tile of 256 threads, U = 32.
  GemmParams t = lower::parse_gemm_params("ML=128,NL=128,MS=8,NS=8,U=32,VA=8,VB=8,LA=16,LB=4,TC=1");
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, t, {}));
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, with(t, "KL=2,NL=64"), {}));
  // f32 (three mma.m16n8k8.tf32 per tile): MS and NS even and U/KL a multiple of 8.
  GemmParams f = with(t, "VA=4,VB=4,LA=32,LB=8");
  CHECK_LEGAL(lower::check_gemm_params(DType::f32, false, false, f, {}));
  CHECK_LEGAL(lower::check_gemm_params(DType::f32, true, true, with(f, "NS=2,NL=32,U=8,LA=2,LB=32,VB=1"), {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, with(f, "NS=1,NL=16,LB=4"), {}),
                 "MS=8 and NS=1 must be even");
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, with(f, "U=8,KL=2,LB=2"), {}),
                 "TC=1 consumes K 8 at a time: U/KL=8/2 must be a multiple of 8");
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, f, {.sm = 75}),
                 "TC=1 needs mma.sync (m16n8k8.tf32), sm_80 or newer, not sm_75");
  // The tuner takes f32 TC=1 only when asked (TuningOptions::f32_tensor_cores).
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, f, {.f32_tensor_cores = false}),
                 "TC=1 for f32 (three TF32 products per term, a larger rounding error than FMA) is off");
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, t, {.f32_tensor_cores = false}));
  // bf16: f16's tiles, with the bf16 mma.
  CHECK_LEGAL(lower::check_gemm_params(DType::bf16, false, false, t, {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::bf16, false, false, with(t, "NS=2,NL=64"), {}), "NS=2 a multiple of 4");
  // f64 (mma.m8n8k4): NS even and U/KL a multiple of 4.
  GemmParams d = lower::parse_gemm_params("ML=64,NL=64,MS=4,NS=8,U=16,VA=2,VB=2,LA=32,LB=8,TC=1");
  CHECK_LEGAL(lower::check_gemm_params(DType::f64, false, false, d, {}));
  CHECK_LEGAL(lower::check_gemm_params(DType::f64, false, false, with(d, "U=8,LB=4"), {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, with(d, "NS=1,NL=8"), {}), "NS=1 must be even");
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, with(d, "U=4,KL=2,LB=4"), {}),
                 "TC=1 consumes K 4 at a time: U/KL=4/2 must be a multiple of 4");
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, d, {.sm = 75}),
                 "TC=1 needs mma.sync (m8n8k4.f64), sm_80 or newer, not sm_75");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, t, {.sm = 75}),
                 "TC=1 needs mma.sync (m16n8k16), sm_80 or newer, not sm_75");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "ACC=16"), {}),
                 "TC=1 accumulates its products in f32 (f64 in f64): ACC must be 32");
  // ACC=16 means f16 accumulation: on another dtype it would be ignored, so it is refused.
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, with(d, "ACC=16"), {}),
                 "ACC=16 (f16 accumulation) is for f16 only; f64 accumulates in f64: ACC must be 32");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "KS=2"), {}), "KS=2 must be 1");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "NS=2,NL=64"), {}),
                 "NS=2 a multiple of 4");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "ML=64,MS=16"), {}),
                 "ML/MS=4 must be a multiple of 8");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "MS=4,NL=16"), {}),
                 "NL/NS=2 a multiple of 4");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "U=16,KL=2"), {}),
                 "U/KL=16/2 must be a multiple of 16");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "TC=3"), {}), "TC=3 must be 0, 1 or 2");
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, with(t, "VA=1,LA=128"), {}));
  // The space lists TC=1 sets for f16, f32 and f64 on sm_80+, and only there.
  auto count_tc = [](DType dtype, int sm, bool f32_tensor_cores = true) {
    auto space = lower::gemm_space(ir::dense_gemm(dtype, 1024, 1024, 1024, false, false),
                                   {.sm = sm, .f32_tensor_cores = f32_tensor_cores});
    return std::count_if(space.begin(), space.end(), [](const GemmParams& p) { return p.tc == 1; });
  };
  CHECK(count_tc(DType::f16, 90) > 100);
  CHECK(count_tc(DType::f16, 75) == 0);
  CHECK(count_tc(DType::bf16, 80) > 100);
  CHECK(count_tc(DType::f32, 90) > 100);
  CHECK(count_tc(DType::f32, 75) == 0);
  CHECK(count_tc(DType::f32, 90, false) == 0);
  CHECK(count_tc(DType::f64, 90) > 100);
  CHECK(count_tc(DType::f64, 75) == 0);
}

TEST_CASE("legality: TC=2 (wgmma) needs f16 or bf16 GEMM on sm_90, f32 accumulation, 16-byte copies and warp-group tiles") {
  // Two warp groups of 64 x 128 each: a 128 x 128 tile of 256 threads, U = 64, 8 threads per core matrix.
  GemmParams w = lower::parse_gemm_params("ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,LA=16,LB=8,TC=2");
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, w, {}));
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, with(w, "MS=16,NS=4,ML=128,NL=64"), {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, w, {.sm = 80}),
                 "TC=2 needs wgmma.mma_async, which only sm_90 (compiled as sm_90a) has, not sm_80");
  CHECK_REJECTED(lower::check_gemm_params(DType::f64, false, false, with(w, "VA=2,VB=2"), {}),
                 "TC=2 (wgmma) is implemented for f16, bf16 and, in GEMM, f32; not f64 here");
  CHECK_LEGAL(lower::check_gemm_params(DType::bf16, false, false, w, {}));
  CHECK_LEGAL(lower::check_gemm_params(DType::bf16, true, true, with(w, "TMA=1"), {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(w, "ACC=16"), {}), "ACC must be 32");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(w, "KL=2,ML=64"), {}), "KL=2 must be 1");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(w, "MS=4,ML=64"), {}),
                 "MS=4 must be 8 or 16");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(w, "NL=64"), {}),
                 "NL/NS=8 a multiple of 16");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(w, "U=8"), {}),
                 "U=8 must be a multiple of 16");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(w, "VA=4"), {}), "VA=4 and VB=8 must be 8");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(w, "LB=64"), {}),
                 "8 x LB=64 must divide the 256 threads");
  // The space lists TC=2 sets for f16 on sm_90 alone, and U = 64 for tensor-core sets only.
  auto space_of = [](DType dtype, int sm) {
    return lower::gemm_space(ir::dense_gemm(dtype, 1024, 1024, 1024, false, false), {.sm = sm});
  };
  auto wgmma = [](const std::vector<GemmParams>& space) {
    return std::count_if(space.begin(), space.end(), [](const GemmParams& p) { return p.tc == 2; });
  };
  const auto f16 = space_of(DType::f16, 90);
  CHECK(wgmma(f16) > 20);
  CHECK(std::all_of(f16.begin(), f16.end(), [](const GemmParams& p) { return p.u < 64 || p.tc > 0; }));
  CHECK(wgmma(space_of(DType::f16, 80)) == 0);
  CHECK(wgmma(space_of(DType::f64, 90)) == 0);
}

TEST_CASE("legality: f32 TC=2 needs f32 tensor cores, cp.async copies of 4 elements and U of 8 to 32") {
  GemmParams w = lower::parse_gemm_params("ML=128,NL=128,MS=8,NS=8,U=32,VA=4,VB=4,LA=8,LB=8,TC=2");
  CHECK_LEGAL(lower::check_gemm_params(DType::f32, false, false, w, {}));
  CHECK_LEGAL(lower::check_gemm_params(DType::f32, true, true, with(w, "U=8,LA=2,LB=32"), {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, w, {.f32_tensor_cores = false}),
                 "TC=2 for f32 (three TF32 products per term, a larger rounding error than FMA) is off");
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, with(w, "TMA=1"), {}), "TMA must be 0");
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, with(w, "U=64"), {}), "U=64 must be at most 32");
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, with(w, "U=4"), {}), "U=4 must be a multiple of 8");
  CHECK_REJECTED(lower::check_gemm_params(DType::f32, false, false, with(w, "VA=8,VB=8"), {}),
                 "VA=8 and VB=8 must be 4");
  // The space lists them on sm_90 where f32 may take the tensor cores, copied with cp.async.
  auto wgmma = [](const ir::Gemm& g, lower::DeviceLimits device) {
    std::vector<GemmParams> out;
    for (const GemmParams& p : lower::gemm_space(g, device))
      if (p.tc == 2) out.push_back(p);
    return out;
  };
  const auto g = ir::dense_gemm(DType::f32, 1024, 1024, 1024, false, true);
  const auto sets = wgmma(g, {});
  CHECK(sets.size() > 20);
  CHECK(std::all_of(sets.begin(), sets.end(), [](const GemmParams& p) { return !p.tma && p.u <= 32; }));
  CHECK(wgmma(g, {.sm = 80}).empty());
  CHECK(wgmma(g, {.f32_tensor_cores = false}).empty());
}

// f32 TC=2: per stage, the split (hi by integer arithmetic, lo by cvt.rna) between two barriers, then
// three m64nNk8 tf32 wgmma per 8-deep step and 64-row tile; in every layout, without spills.
// The stage's products are one inline-asm statement, whose accumulators LLVM ties in and out once.
TEST_CASE("f32 TC=2 kernels split each stage and issue 3 x U/8 x MS/8 tf32 wgmma per stage for every layout") {
  for (int layout = 0; layout < 4; ++layout) {
    const bool at = layout & 1, bt = layout & 2;
    auto g = ir::dense_gemm(DType::f32, 512, 512, 512, at, bt);
    for (const char* text : {"ML=128,NL=128,MS=8,NS=8,U=32,VA=4,VB=4,DB=1,TC=2",
                             "ML=128,NL=64,MS=16,NS=4,U=16,VA=4,VB=4,DB=0,TC=2"}) {
      GemmParams p = lower::parse_gemm_params(text);
      lower::fit_gemm_load_layouts(at, bt, p);
      INFO(layout_name(at, bt) << " " << p.str());
      auto legal = lower::check_gemm(g, p);
      REQUIRE_MESSAGE(legal.legal, legal.reason);
      auto kernel = lower::emit_gemm(g, p, lower::Target{90, false});
      CHECK(kernel.ptx.find(".target sm_90a") != std::string::npos);
      const std::string shape = fmt::format("wgmma.mma_async.sync.aligned.m64n{}k8.f32.tf32.tf32", 16 * p.ns);
      CHECK(count(kernel.ptx, shape) == 3 * (p.u / 8) * (p.ms / 8));
      CHECK(inline_asm_blocks_with(kernel.ptx, shape) == 1);
      CHECK(count(kernel.ptx, "isaac_scale, 1, 1;") == count(kernel.ptx, shape));
      // One rounding of lo per element of the stage.
      CHECK(count(kernel.ptx, "cvt.rna.tf32.f32") == (p.ml + p.nl) * p.u / p.threads());
      CHECK(count(kernel.ptx, "fence.proxy.async.shared::cta;") == 1);
      CHECK(count(kernel.ptx, "wgmma.wait_group.sync.aligned 1;") == 1);
      assembles_for_sm90a_without_spill_stores(kernel);
    }
  }
}

// The ptxas sweep draws few f32 TC=2 sets (a thousandth of the f32 space): eight of each layout here.
TEST_CASE("ptxas: random f32 TC=2 sets of every layout assemble for sm_90a without spills") {
  if (!lower::ptxas_available()) {
    MESSAGE("ptxas is not available (put the CUDA toolkit's bin on PATH or set ISAAC_PTXAS): skipped");
    return;
  }
  std::mt19937_64 rng(0x7f32);
  double error = 0;
  int assembled = 0;
  for (int layout = 0; layout < 4; ++layout) {
    const bool at = layout & 1, bt = layout & 2;
    const auto g = ir::dense_gemm(DType::f32, 2048, 2048, 2048, at, bt);
    std::vector<GemmParams> space;
    for (const GemmParams& p : lower::gemm_space(g))
      if (p.tc == 2) space.push_back(p);
    REQUIRE(!space.empty());
    for (int i = 0; i < 8; ++i) {
      const GemmParams p = space[std::uniform_int_distribution<std::size_t>(0, space.size() - 1)(rng)];
      INFO(layout_name(at, bt) << " " << p.str());
      auto kernel = lower::emit_gemm(g, p, lower::Target{90, false});
      auto report = lower::run_ptxas(kernel.ptx, lower::Target{90, false}, kernel.main_name, nullptr);
      REQUIRE_MESSAGE(report.ok, report.log);
      CHECK(report.spill_stores + report.spill_loads == 0);
      error += std::abs(report.registers - lower::estimate_gemm_registers(DType::f32, at, bt, p));
      ++assembled;
    }
  }
  MESSAGE("f32 TC=2: " << assembled << " sets assembled; register estimate off by " << error / assembled
                       << " on average");
}

// A TC=2 kernel is sm_90a PTX: per stage and warp group, MS/8 wgmma per 16-deep step in one inline-asm
// statement, one commit and one wait that leaves the stage's products in flight; the copies are
// fenced for the async proxy.
TEST_CASE("f16 TC=2 kernels are sm_90a PTX with U/16 x MS/8 wgmma per stage for every layout") {
  for (int layout = 0; layout < 4; ++layout) {
    const bool at = layout & 1, bt = layout & 2;
    auto g = ir::dense_gemm(DType::f16, 512, 512, 512, at, bt);
    for (const char* text : {"ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,TC=2", "ML=128,NL=64,MS=16,NS=4,U=32,VA=8,VB=8,TC=2"}) {
      GemmParams p = lower::parse_gemm_params(text);
      p.la = (at ? p.u : p.ml) / 8;
      p.lb = (bt ? p.nl : p.u) / 8;
      INFO(layout_name(at, bt) << " " << p.str());
      auto legal = lower::check_gemm(g, p);
      REQUIRE_MESSAGE(legal.legal, legal.reason);
      auto kernel = lower::emit_gemm(g, p, lower::Target{90, false});
      CHECK(kernel.ptx.find(".target sm_90a") != std::string::npos);
      const int n = 16 * p.ns;
      const std::string shape = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.f16.f16";
      CHECK(count(kernel.ptx, shape) == p.u / 16 * p.ms / 8);
      CHECK(inline_asm_blocks_with(kernel.ptx, shape) == 1);
      // imm-trans-a / -b: 0 where the operand is K-contiguous in memory, 1 where it is M/N-contiguous.
      const std::string flags = fmt::format("isaac_scale, 1, 1, {}, {};", at ? 0 : 1, bt ? 1 : 0);
      CHECK(count(kernel.ptx, flags) == count(kernel.ptx, shape));
      CHECK(count(kernel.ptx, "wgmma.wait_group.sync.aligned 1;") == 1);
      CHECK(count(kernel.ptx, "wgmma.wait_group.sync.aligned 0;") == 1);
      CHECK(count(kernel.ptx, "fence.proxy.async.shared::cta;") == 1);
      assembles_for_sm90a_without_spill_stores(kernel);
    }
  }
}

TEST_CASE("bf16 kernels are f16's with bf16 mma, wgmma, conversions and reductions, and no f16 arithmetic") {
  auto g = ir::dense_gemm(DType::bf16, 1000, 704, 512, false, true);
  struct Case {
    const char* params;
    int sm;
    const char* instruction;  // what multiplies
    int per_stage;            // of them per stage
  };
  const Case cases[] = {
      {"ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,LA=16,LB=16,TC=2,TMA=1", 90,
       "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", 4},
      {"ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,LA=16,LB=16,TC=2", 90,
       "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", 4},
      {"ML=128,NL=128,MS=8,NS=8,U=32,VA=8,VB=8,LA=16,LB=16,TC=1", 80,
       "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 2 * 4 * 4},
      {"ML=128,NL=128,MS=8,NS=8,U=32,VA=8,VB=8,LA=16,LB=16,TC=1,KG=4", 90,
       "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 2 * 4 * 4},
      {"ML=64,NL=64,MS=4,NS=4,U=8,VA=2,VB=2,LA=32,LB=32", 80, "fma.rn.f32", 8 * 16},
      {"ML=64,NL=64,MS=4,NS=4,U=8,VA=2,VB=2,LA=32,LB=32,KG=4", 90, "fma.rn.f32", 8 * 16},
  };
  for (const Case& c : cases) {
    const GemmParams p = lower::parse_gemm_params(c.params);
    INFO(c.params, " on sm_", c.sm);
    const auto legal = lower::check_gemm(g, p, {.sm = c.sm});
    REQUIRE_MESSAGE(legal.legal, legal.reason);
    const auto kernel = lower::emit_gemm(g, p, lower::Target{c.sm, false});
    CHECK(count(kernel.ptx, c.instruction) >= c.per_stage);
    CHECK(count(kernel.ptx, "cvt.rn.bf16.f32") > 0);  // alpha AB (+ beta C) rounded to bf16
    CHECK(count(kernel.ptx, ".f16") == 0);           // no f16 instruction or conversion anywhere
    if (p.kg > 1) CHECK(count(kernel.ptx, "red.global.add.noftz.bf16") > 0);
    if (lower::ptxas_available()) {
      std::vector<char> cubin;
      const std::string failure = lower::assemble(kernel.ptx, lower::Target{c.sm, p.tc == 2}, cubin);
      CHECK_MESSAGE(failure.empty(), failure);
    }
  }
}

TEST_CASE("TMA=1 is written only where set, and needs TC=2, tiles of at most 256 rows and distinct batches") {
  GemmParams w = lower::parse_gemm_params("ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,LA=16,LB=8,TC=2");
  CHECK(w.str().find("TMA") == std::string::npos);
  GemmParams t = with(w, "TMA=1");
  CHECK(t.tma == 1);
  CHECK(t.str() == w.str() + ",TMA=1");
  CHECK(lower::parse_gemm_params(t.str()) == t);
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, t, {}));
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "TMA=2"), {}), "TMA=2 must be 0 or 1");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "TC=1,U=32,MS=4,NS=4,ML=64,NL=64"), {}),
                 "TMA=1 copies the stages of a wgmma kernel: it needs TC=2, not TC=1");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(t, "ML=512,MS=16,NL=64,NS=4,U=16,LA=64"), {}),
                 "ML=512 and NL=64 must not exceed 256");
  auto batched = ir::dense_gemm(DType::f16, 256, 256, 256, false, false, 3);
  CHECK_LEGAL(lower::check_gemm(batched, t));
  batched.stride_b = 0;
  CHECK_LEGAL(lower::check_gemm(batched, w));
  CHECK_REJECTED(lower::check_gemm(batched, t), "batch strides of 0 need TMA=0");
}

TEST_CASE("ST (the depth of a TMA pipeline) is written only where set, and needs TMA=1, DB=1 and 5 to 16 stages") {
  GemmParams t = lower::parse_gemm_params("ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,LA=8,LB=8,TC=2,TMA=1");
  CHECK(t.str().find("ST") == std::string::npos);
  GemmParams deep = with(t, "ST=12");
  CHECK(deep.str() == t.str() + ",ST=12");
  CHECK(lower::parse_gemm_params(deep.str()) == deep);
  CHECK_LEGAL(lower::check_gemm_params(DType::f16, false, false, deep, {}));
  CHECK(lower::gemm_shared_bytes(DType::f16, false, false, deep) == 12 * 16384 + 16 * 12 + 8);  // and C's mbarrier
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(deep, "TMA=0"), {}),
                 "ST=12 sets the depth of a TMA pipeline: it needs TMA=1 and DB=1");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(deep, "DB=0"), {}), "it needs TMA=1 and DB=1");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(deep, "ST=4"), {}),
                 "ST=4 must be 0 (four stages), 1 to 2 (one buffer per K tile) or 5 to 16");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(deep, "ST=3"), {}), "1 to 2");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(deep, "ST=-1"), {}), "1 to 2");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(deep, "ST=17"), {}), "5 to 16");
  CHECK_REJECTED(lower::check_gemm_params(DType::f16, false, false, with(deep, "ST=16"), {}),
                 "bytes of shared memory exceed the device's 232448 per block");
}

// The depths of the experiment (docs/tensor-cores.md): where the grid fits on the SMs one block each,
// as many stages as fit in 200 KB, no more than the K tiles of a block; four stages elsewhere.
TEST_CASE("fit_gemm_pipeline_depth deepens TMA pipelines whose grid fits on the SMs one block each") {
  auto depth = [](const ir::Gemm& g, const char* text, lower::DeviceLimits device = {}) {
    GemmParams p = lower::parse_gemm_params(text);
    lower::fit_gemm_pipeline_depth(g, p, device);
    return p.st;
  };
  const char* wide = "ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1";  // 16 KB a stage
  const auto deepbench = ir::dense_gemm(DType::f16, 2560, 128, 2560, false, false);  // 40 x 2 tiles
  CHECK(depth(deepbench, wide) == 12);
  CHECK(depth(ir::dense_gemm(DType::f16, 2560, 64, 2560, false, false), "ML=64,NL=32,MS=8,NS=2,U=64,VA=8,VB=8,TC=2,TMA=1") ==
        16);  // 12 KB a stage
  CHECK(depth(ir::dense_gemm(DType::f16, 1024, 1024, 1024, false, true), "ML=128,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1") ==
        8);  // 128 blocks of 24 KB a stage
  lower::DeviceLimits eighty;
  eighty.sm_count = 80;
  CHECK(depth(deepbench, wide, eighty) == 12);
  eighty.sm_count = 79;
  CHECK(depth(deepbench, wide, eighty) == 0);
  CHECK(depth(deepbench, "ML=64,NL=64,MS=8,NS=4,U=64,KG=2,VA=8,VB=8,TC=2,TMA=1") == 0);  // 160 blocks
  CHECK(depth(ir::dense_gemm(DType::f16, 2560, 128, 2560, false, false, 2), wide) == 0);  // 160 blocks
  CHECK(depth(ir::dense_gemm(DType::f16, 2560, 128, 256, false, false), wide) == 0);      // 4 K tiles
  CHECK(depth(ir::dense_gemm(DType::f16, 2560, 128, 257, false, false), wide) == 5);
  CHECK(depth(ir::dense_gemm(DType::f16, 2560, 128, 257 * 4, false, false), "ML=64,NL=64,MS=8,NS=4,U=64,KG=2,VA=8,VB=8,TC=2,TMA=1",
              eighty) == 0);
  CHECK(depth(ir::dense_gemm(DType::f16, 256, 128, 1280, false, false), "ML=64,NL=64,MS=8,NS=4,U=64,KG=4,VA=8,VB=8,TC=2,TMA=1") ==
        5);  // 32 blocks, 5 K tiles each
  CHECK(depth(deepbench, "ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,DB=0,TC=2,TMA=1") == 0);
  CHECK(depth(deepbench, "ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2") == 0);
  CHECK(depth(deepbench, "ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1,ST=12") == 12);
  CHECK(depth(ir::dense_gemm(DType::f16, 4096, 4096, 4096, false, false), "ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1,ST=12") ==
        0);  // a set that arrives deep where the rule says four stages is made shallow
  // Every set of the space follows the rule.
  for (const GemmParams& p : lower::gemm_space(ir::dense_gemm(DType::f16, 640, 128, 2560, false, false))) {
    GemmParams fitted = p;
    lower::fit_gemm_pipeline_depth(ir::dense_gemm(DType::f16, 640, 128, 2560, false, false), fitted);
    REQUIRE(fitted.st == p.st);
  }
}

// f16 with f32 accumulators and plain stores stages C's tile through shared memory; on sm_90, where
// beta = 0, as f16 written by stmatrix.trans, four 8 x 8 matrices per instruction (MS x NS / 2 matrices
// per thread, cells in pairs). Not on sm_80 (no stmatrix), nor without tensor cores, nor with a split.
TEST_CASE("f16 staged stores on sm_90 write the tile with stmatrix where beta = 0") {
  auto ptx_of = [](const char* params, int sm, DType dtype = DType::f16) {
    const auto g = ir::dense_gemm(dtype, 512, 512, 64, true, false);
    GemmParams p = lower::parse_gemm_params(params);
    lower::fit_gemm_load_layouts(g.a_trans, g.b_trans, p);
    return lower::emit_gemm(g, p, lower::Target{sm, sm == 90}).ptx;
  };
  const char* wgmma = "ML=64,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,DB=1,TC=2,TMA=0";  // 32 matrices per thread
  const std::string ptx = ptx_of(wgmma, 90);
  CHECK(count(ptx, "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 8);
  CHECK(count(ptx, "stmatrix") == 8);
  // TMA=1 stages C so for any beta: where beta != 0 each warp reads C's old values with ldmatrix first.
  const std::string tma = ptx_of("ML=64,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,DB=1,TC=2,TMA=1,ST=1", 90);
  CHECK(count(tma, "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 16);
  CHECK(count(tma, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 8);
  CHECK(count(tma, "ldmatrix") == 8);
  // The fewest: MS = 8, NS = 1 on wgmma, (MS / 4) x (4 NS / 2) = 4 matrices.
  CHECK(count(ptx_of("ML=64,NL=16,MS=8,NS=1,U=64,VA=8,VB=8,DB=1,TC=2,TMA=0", 90),
              "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 1);
  const char* mma = "ML=64,NL=32,MS=2,NS=8,U=32,VA=8,VB=8,DB=1,TC=1";  // 2 x 4 matrices
  CHECK(count(ptx_of(mma, 90), "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 2);
  CHECK(count(ptx_of(mma, 80), "stmatrix") == 0);
  CHECK(count(ptx_of("ML=64,NL=32,MS=4,NS=4,U=32,VA=8,VB=8,DB=1,TC=0,ACC=16", 90), "stmatrix") == 0);
  CHECK(count(ptx_of("ML=64,NL=128,MS=8,NS=8,U=32,KG=2,VA=8,VB=8,DB=1,TC=2,TMA=1,ST=1", 90), "stmatrix") == 0);
  CHECK(count(ptx_of("ML=64,NL=32,MS=2,NS=8,U=32,VA=4,VB=4,DB=1,TC=1", 90, DType::f32), "stmatrix") == 0);
}

// A block that reads one or two K tiles gets one buffer per tile (ST=1 or 2), unless it runs as a tile
// loop; a run with a longer K is refused, since the buffers would not hold its tiles. A tile loop's
// producer copies the next tile's K tiles while this tile's are read: two buffers for one K tile, the
// four of ST=0 for two, and for a ping-pong loop the four of ST=0 always.
TEST_CASE("fit_gemm_pipeline_depth gives a block of one or two K tiles a buffer per tile, more in a tile loop") {
  auto depth = [](const ir::Gemm& g, const char* text) {
    GemmParams p = lower::parse_gemm_params(text);
    lower::fit_gemm_pipeline_depth(g, p);
    return p.st;
  };
  const char* tile = "ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,TC=2,TMA=1";
  // 2 batches of 16 tiles: on the SMs at once, no tile loop.
  auto attention = [](std::int64_t k, std::int64_t batch = 2) {
    return ir::dense_gemm(DType::f16, 512, 512, k, true, false, batch);
  };
  CHECK(depth(attention(64), tile) == 1);
  CHECK(depth(attention(1), tile) == 1);
  CHECK(depth(attention(0), tile) == 1);
  CHECK(depth(attention(65), tile) == 2);
  CHECK(depth(attention(128), tile) == 2);
  // 128 batches, 2,048 tiles: tile loops.
  CHECK(depth(attention(64, 128), tile) == 2);
  CHECK(depth(attention(0, 128), tile) == 2);
  CHECK(depth(attention(65, 128), tile) == 0);
  CHECK(depth(attention(128, 128), tile) == 0);
  // 128 accumulators a thread: a ping-pong loop, two buffers a group; on the SMs at once, a grid.
  CHECK(depth(attention(64, 128), "ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,TC=2,TMA=1") == 0);
  CHECK(depth(attention(64), "ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,TC=2,TMA=1") == 1);
  CHECK(depth(attention(129), tile) == 0);  // three tiles: the ring of four stages
  CHECK(depth(attention(512, 128), "ML=128,NL=128,MS=8,NS=8,U=64,KG=4,VA=8,VB=8,TC=2,TMA=1") == 2);  // a split
  CHECK(depth(attention(64), "ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,DB=0,TC=2,TMA=1") == 0);
  CHECK(depth(attention(64), "ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,TC=2") == 0);

  const GemmParams one = lower::parse_gemm_params(std::string(tile) + ",ST=1");
  CHECK(lower::check_gemm(attention(64), one));
  CHECK_REJECTED(lower::check_gemm(attention(72), one),
                 "ST=1 holds at most 1 K tiles, all copied at once, and a block here reads 2 (K=72, U=64, KG=1)");
  CHECK(lower::check_gemm(attention(128), with(one, "ST=2")));
  CHECK_REJECTED(lower::check_gemm(attention(136), with(one, "ST=2")), "a block here reads 3");
  // The ring's spare stages are gone: one 32 KB stage of A and B, under the f32 staging of C's tile
  // (128 columns of 132 floats), where DB=0 keeps three stages and DB=1 four; then two mbarriers per
  // stage and C's.
  auto shared = [](const GemmParams& p) { return lower::gemm_shared_bytes(DType::f16, true, false, p); };
  CHECK(shared(one) == 128 * 132 * 4 + 16 + 8);
  CHECK(shared(with(one, "ST=0,DB=0")) == 3 * 32768 + 3 * 16 + 8);
  CHECK(shared(with(one, "ST=0")) == 4 * 32768 + 4 * 16 + 8);
  CHECK(shared(with(one, "ST=0,KG=2")) == 4 * 32768 + 4 * 16);  // a split stages nothing
}

// The tensor maps the launch builds describe what the kernel copies: each operand as (contiguous
// axis, other axis, batch); a K-contiguous stage is one box of U x tile rows, an M/N-contiguous one
// tile / R boxes of R x U, R = 128 bytes of elements (32 NS bytes for B where that is less).
// The producer warp is launched where a block runs 8 stages or more (K / U per split, rounded up) and
// 32 more threads leave the consumers the registers legality gives them.
TEST_CASE("TMA=1: a block launches a producer warp from 8 stages on, where the registers allow it") {
  GemmParams p = lower::parse_gemm_params("ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1");
  auto threads_at = [](const GemmParams& q, std::int64_t k) {
    return lower::gemm_launch_threads(ir::dense_gemm(DType::f16, 512, 512, k, false, true), q);
  };
  CHECK(threads_at(p, 7 * 64) == 128);
  CHECK(threads_at(p, 7 * 64 + 1) == 160);  // the eighth stage is one element deep
  CHECK(threads_at(p, 64) == 128);
  CHECK(threads_at(with(p, "KG=4"), 28 * 64) == 128);  // 8 stages per split need K > 28 U
  CHECK(threads_at(with(p, "KG=4"), 28 * 64 + 1) == 160);
  CHECK(threads_at(with(p, "TMA=0"), 4096) == 128);
  // 128 accumulators in each of 256 threads: 288 threads would leave 168 registers each, fewer than the
  // estimate and its margin.
  GemmParams big = lower::parse_gemm_params("ML=128,NL=256,MS=8,NS=16,U=64,VA=8,VB=8,SW=8,TC=2,TMA=1");
  CHECK(threads_at(big, 4096) == 256);
  CHECK(threads_at(with(big, "NL=128,NS=8"), 4096) == 288);
}

TEST_CASE("TMA=1: the tensor boxes follow the layout and the swizzled rows wgmma reads") {
  GemmParams p = lower::parse_gemm_params("ML=128,NL=64,MS=8,NS=4,U=32,VA=8,VB=8,TC=2,TMA=1");
  auto g = ir::dense_gemm(DType::f16, 300, 200, 100, false, true, 2);  // A M-contiguous, B N-contiguous
  g.lda = 304, g.ldb = 208, g.stride_a = 304 * 100, g.stride_b = 208 * 100;
  auto [a, b] = lower::gemm_tensor_boxes(g, p);
  CHECK(a.dims == std::array<std::uint64_t, 3>{300, 100, 2});
  CHECK(a.strides == std::array<std::uint64_t, 2>{304 * 2, 304 * 100 * 2});
  CHECK(a.box == std::array<std::uint32_t, 2>{64, 32});
  CHECK(a.swizzle_bytes == 128);
  CHECK(b.dims == std::array<std::uint64_t, 3>{200, 100, 2});
  CHECK(b.box == std::array<std::uint32_t, 2>{64, 32});  // 16 NS = 64 elements: 128 bytes
  auto nn = ir::dense_gemm(DType::f16, 300, 200, 100, true, false);  // both K-contiguous
  auto [ka, kb] = lower::gemm_tensor_boxes(nn, p);
  CHECK(ka.dims == std::array<std::uint64_t, 3>{100, 300, 1});
  CHECK(ka.box == std::array<std::uint32_t, 2>{32, 128});
  CHECK(ka.swizzle_bytes == 64);
  CHECK(kb.box == std::array<std::uint32_t, 2>{32, 64});
  CHECK(ka.strides[1] == ka.strides[0] * 300);  // one batch: unused, but a valid stride
  auto empty = ir::dense_gemm(DType::f16, 64, 64, 0, true, false);
  CHECK(lower::gemm_tensor_boxes(empty, p)[0].dims[0] == 1);  // K = 0 copies nothing, yet a map has no empty axis
}

// C's tensor map: (M, N, batch) at ldc and the batch stride, boxes of 64 rows (128 bytes, swizzled)
// by NL columns. TMA=1 without a split moves C through it where C is 16-byte aligned and M, ldc and
// the batch stride are multiples of 16 bytes; elsewhere (and with a split) the threads store C, and
// the kernel takes no map of C.
TEST_CASE("TMA=1 without a split moves C by TMA where C allows it: its tensor box, and which problems") {
  GemmParams p = lower::parse_gemm_params("ML=128,NL=64,MS=8,NS=4,U=32,VA=8,VB=8,TC=2,TMA=1");
  auto g = ir::dense_gemm(DType::f16, 296, 200, 96, false, true, 2);
  g.ldc = 304, g.stride_c = 304 * 200;
  const auto box = lower::gemm_c_tensor_box(g, p);
  CHECK(box.dims == std::array<std::uint64_t, 3>{296, 200, 2});
  CHECK(box.strides == std::array<std::uint64_t, 2>{304 * 2, 304 * 200 * 2});
  CHECK(box.box == std::array<std::uint32_t, 2>{64, 64});
  CHECK(box.swizzle_bytes == 128);
  auto single = ir::dense_gemm(DType::f16, 296, 200, 96, false, true);
  single.ldc = 304;
  CHECK(lower::gemm_c_tensor_box(single, p).strides[1] == 304 * 2 * 200);  // unused, but valid

  CHECK(lower::gemm_stores_c_by_tma(g, p));
  CHECK_FALSE(lower::gemm_stores_c_by_tma(g, with(p, "KG=2")));  // a split adds its parts: no staging
  CHECK_FALSE(lower::gemm_stores_c_by_tma(g, with(p, "TMA=0")));
  ir::Gemm odd = g;
  odd.align_c = 8;
  CHECK_FALSE(lower::gemm_stores_c_by_tma(odd, p));
  odd = g;
  odd.ldc = 301, odd.stride_c = 301 * 200;
  CHECK_FALSE(lower::gemm_stores_c_by_tma(odd, p));
  odd = g;
  odd.stride_c = 304 * 200 + 4;
  CHECK_FALSE(lower::gemm_stores_c_by_tma(odd, p));
  odd.batch = 1;  // the batch stride does not matter without batches
  CHECK(lower::gemm_stores_c_by_tma(odd, p));
  // A TMA store writes whole 16-byte runs down a column: an M that ends inside one is the threads'.
  odd = ir::dense_gemm(DType::f16, 37, 200, 96, true, true);
  odd.ldc = 40;
  CHECK_FALSE(lower::gemm_stores_c_by_tma(odd, p));
  CHECK_LEGAL(lower::check_gemm(odd, p));

  auto emitted = [&](const ir::Gemm& problem) {
    GemmParams q = p;
    lower::fit_gemm_load_layouts(problem.a_trans, problem.b_trans, q);
    return lower::emit_gemm(problem, q, lower::Target{90, true});
  };
  for (const ir::Gemm& problem : {g, odd}) {
    const bool by_tma = lower::gemm_stores_c_by_tma(problem, p);
    INFO(ir::to_string(problem));
    const auto kernel = emitted(problem);
    CHECK(kernel.c_by_tma == by_tma);
    CHECK(count(kernel.ptx, "_param_17[128]") == (by_tma ? 1 : 0));
    CHECK(count(kernel.ptx, "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group") == (by_tma ? 2 : 0));
    // The threads' stores: 16-byte vectors where M, ldc and C allow them, elements elsewhere.
    CHECK((count(kernel.ptx, "st.global") > 0) == !by_tma);
  }
}

// Attention's QK^T (f16, K = 64, 128 batches of 512 x 512): more tiles than SMs, one K tile each, C moved
// by TMA. The kernel loops over the tiles of all batches (their count is its last parameter) from its
// block index in steps of the grid's x, with a producer warp whose copies run on through one ring of
// stages from tile to tile, and C staged in memory of its own after the mbarriers; C's mbarrier is
// initialised once, with the stages'. The leader waits for a tile's stores to have read the staging
// before the next tile's staging, and once more before the block ends.
TEST_CASE("TMA=1: a tile loop where TMA moves C, a block reads at most 32 K tiles and the grid has more tiles than SMs") {
  GemmParams p = lower::parse_gemm_params("ML=64,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,TC=2,TMA=1");
  const auto g = ir::dense_gemm(DType::f16, 512, 512, 64, true, false, 128);
  lower::fit_gemm_load_layouts(true, false, p);
  lower::fit_gemm_pipeline_depth(g, p);
  CHECK(p.st == 2);  // one K tile, and a second buffer for the next tile's
  CHECK(lower::gemm_tile_loop(g, p));
  CHECK_FALSE(lower::gemm_tile_loop(g, with(p, "ST=1")));
  CHECK(lower::gemm_launch_threads(g, p) == 160);  // a producer warp
  // Not where K needs more tiles, nor with a split, nor where the threads store C, nor where the tiles
  // fit on the SMs at once, nor where one more warp would not leave the consumers their registers.
  auto qk = [&](std::int64_t k, std::int64_t batch) { return ir::dense_gemm(DType::f16, 512, 512, k, true, false, batch); };
  CHECK(lower::gemm_tile_loop(qk(32 * 64, 128), with(p, "ST=0")));
  CHECK_FALSE(lower::gemm_tile_loop(qk(32 * 64 + 1, 128), with(p, "ST=0")));
  CHECK_FALSE(lower::gemm_tile_loop(qk(64, 128), with(p, "KG=2")));
  // The blocks an H100 holds at once would run one tile or two each.
  CHECK_FALSE(lower::gemm_tile_loop(qk(64, 8), p));
  CHECK_FALSE(lower::gemm_tile_loop(ir::dense_gemm(DType::f16, 64, 64, 64, true, false, 1024), with(p, "NL=64,NS=4")));
  CHECK(lower::gemm_tile_loop(ir::dense_gemm(DType::f16, 4096, 4096, 64, true, false), p));  // 2,048 tiles, one batch
  // Not where the tiles of all batches pass 2^31 - 1: the loop numbers them in 32 bits.
  const auto huge = ir::dense_gemm(DType::f16, std::int64_t{1} << 21, std::int64_t{1} << 21, 64, true, false, 8);
  CHECK_LEGAL(lower::check_gemm(huge, p));
  CHECK_FALSE(lower::gemm_tile_loop(huge, p));
  CHECK(lower::gemm_tile_loop(ir::dense_gemm(DType::f16, std::int64_t{1} << 21, std::int64_t{1} << 21, 64, true, false, 1), p));
  CHECK_FALSE(lower::gemm_tile_loop(ir::dense_gemm(DType::f16, 4096, 4096, 64, true, false), with(p, "ML=256,NL=64,MS=16,NS=4")));
  auto odd = qk(64, 128);
  odd.ldc = 520, odd.stride_c = 520 * 512 + 8;  // still 16-byte runs: by TMA
  CHECK(lower::gemm_tile_loop(odd, p));
  odd.stride_c += 4;
  CHECK_FALSE(lower::gemm_tile_loop(odd, p));
  GemmParams big = lower::parse_gemm_params("ML=128,NL=256,MS=8,NS=16,U=64,VA=8,VB=8,TC=2,TMA=1,ST=1");
  lower::fit_gemm_load_layouts(true, false, big);
  CHECK_LEGAL(lower::check_gemm(qk(64, 128), big));
  CHECK_FALSE(lower::gemm_tile_loop(qk(64, 128), big));
  // 128 accumulators a thread: the loop's registers would cost a block per SM; with two buffers they
  // make no ping-pong loop either (next test).
  GemmParams wide = with(p, "ML=128,MS=16");
  CHECK_LEGAL(lower::check_gemm(qk(64, 128), wide));
  CHECK(lower::gemm_launch_threads(qk(8 * 64, 1), with(wide, "ST=0")) == 160);  // a producer warp fits
  CHECK_FALSE(lower::gemm_tile_loop(qk(64, 128), wide));
  CHECK_FALSE(lower::gemm_ping_pong(qk(64, 128), wide));
  // Two K tiles: the four buffers of ST=0.
  GemmParams two = p;
  lower::fit_gemm_pipeline_depth(qk(128, 128), two);
  CHECK(two.st == 0);
  CHECK(lower::gemm_tile_loop(qk(128, 128), two));

  for (int layout = 0; layout < 4; ++layout) {
    const bool at = layout & 1, bt = layout & 2;
    const auto problem = ir::dense_gemm(DType::f16, 512, 512, 64, at, bt, 128);
    GemmParams q = p;
    lower::fit_gemm_load_layouts(at, bt, q);
    INFO(layout_name(at, bt));
    REQUIRE(lower::gemm_tile_loop(problem, q));
    const auto kernel = lower::emit_gemm(problem, q, lower::Target{90, true});
    CHECK(kernel.tile_loop);
    CHECK(kernel.c_by_tma);
    CHECK(kernel.threads == 160);
    const int footprint = lower::gemm_shared_bytes(DType::f16, at, bt, q);
    CHECK(kernel.shared_bytes == (footprint + 1023) / 1024 * 1024 + 64 * 128 * 2);
    CHECK(count(kernel.ptx, "%nctaid.x") == 1);
    CHECK(count(kernel.ptx, "mbarrier.init.shared::cta.b64") == 2 * 2 + 1);  // filled, emptied; C's
    CHECK(count(kernel.ptx, "mbarrier.arrive.shared::cta.b64") == 2);  // within the tile, after its last stage
    CHECK(count(kernel.ptx, "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group") == 1);
    CHECK(count(kernel.ptx, "cp.async.bulk.wait_group.read 0;") == 2);
    CHECK(count(kernel.ptx, ".param .u32 " + kernel.main_name + "_param_18") == 1);  // the batches
    // The consumers' barriers: before staging and before the TMA store, whatever beta.
    CHECK(count(kernel.ptx, "barrier.sync \t1, 128;") == 2);
    assembles_for_sm90a_without_spill_stores(kernel);
  }
}

// The same QK^T with 128 x 128 tiles of one warp group (128 accumulators a thread): two consumer groups
// take a block's tiles in turn, and the turns of their main loops (named barriers of 256 threads: one
// bar.sync, one bar.arrive), through one ring of four buffers, each with a staging of C, a C mbarrier
// and a named barrier of its own; the producer warp makes 288 threads, which leave 168 registers,
// enough without spills.
TEST_CASE("TMA=1: a ping-pong tile loop where a tile of 128 threads holds 128 accumulators a thread") {
  GemmParams p = lower::parse_gemm_params("ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,TC=2,TMA=1");
  auto qk = [&](std::int64_t k, std::int64_t batch) { return ir::dense_gemm(DType::f16, 512, 512, k, true, false, batch); };
  lower::fit_gemm_load_layouts(true, false, p);
  lower::fit_gemm_pipeline_depth(qk(64, 128), p);
  CHECK(p.st == 0);  // four buffers, for one K tile
  CHECK(lower::gemm_ping_pong(qk(64, 128), p));
  CHECK(lower::gemm_tile_loop(qk(64, 128), p));
  CHECK(lower::gemm_launch_threads(qk(64, 128), p) == 288);
  CHECK(lower::gemm_ping_pong(qk(32 * 64, 128), p));
  // Not with two buffers, a 33rd K tile, 64 accumulators (the single-group loop), 256 threads, or
  // fewer than two tiles a block (16 tiles a batch, 132 SMs of one block: 17 batches at least).
  CHECK_FALSE(lower::gemm_ping_pong(qk(64, 128), with(p, "ST=2")));
  CHECK_FALSE(lower::gemm_ping_pong(qk(32 * 64 + 1, 128), p));
  CHECK_FALSE(lower::gemm_ping_pong(qk(64, 128), with(p, "NL=64,NS=4")));
  CHECK(lower::gemm_tile_loop(qk(64, 128), with(p, "NL=64,NS=4")));
  CHECK_FALSE(lower::gemm_ping_pong(qk(64, 128), with(p, "MS=8")));
  CHECK_FALSE(lower::gemm_ping_pong(qk(64, 16), p));
  CHECK(lower::gemm_ping_pong(qk(64, 17), p));
  CHECK_FALSE(lower::gemm_ping_pong(ir::dense_gemm(DType::f16, std::int64_t{1} << 20, std::int64_t{1} << 21, 64, true, false, 32), p));

  for (int layout = 0; layout < 4; ++layout) {
    const bool at = layout & 1, bt = layout & 2;
    const auto problem = ir::dense_gemm(DType::f16, 512, 512, 64, at, bt, 128);
    GemmParams q = p;
    lower::fit_gemm_load_layouts(at, bt, q);
    INFO(layout_name(at, bt));
    REQUIRE(lower::gemm_ping_pong(problem, q));
    const auto kernel = lower::emit_gemm(problem, q, lower::Target{90, true});
    CHECK(kernel.tile_loop);
    CHECK(kernel.threads == 288);
    const int footprint = lower::gemm_shared_bytes(DType::f16, at, bt, q);
    CHECK(kernel.shared_bytes == (footprint + 8 + 1023) / 1024 * 1024 + 2 * 128 * 128 * 2);
    CHECK(count(kernel.ptx, "mbarrier.init.shared::cta.b64") == 2 * 4 + 2);  // filled, emptied; C's, a group each
    CHECK(count(kernel.ptx, "cp.async.bulk.wait_group.read 0;") == 2);
    // Each group's barriers (1 and 2, from its index): before staging and before the TMA store.
    CHECK(count(kernel.ptx, ", 128;") == 2);
    CHECK(count(kernel.ptx, "bar.sync %r") == 1);  // a group waits for its turn
    CHECK(count(kernel.ptx, "bar.arrive %r") == 1);  // and gives the other group its turn
    CHECK(count(kernel.ptx, "barrier.sync \t1, 128;") == 0);
    assembles_for_sm90a_without_spill_stores(kernel);
  }
}

// A TMA kernel copies with cp.async.bulk.tensor from its tensor-map parameters, which stay in the
// parameter space (no local copy, which TMA could not read), and waits on a "filled" mbarrier per
// stage. Where a block runs 8 stages or more and one more warp leaves the consumers their registers, a
// producer warp of its own issues the copies once each, waiting on an "emptied" mbarrier per stage on
// which every consumer warp arrives, and the consumers meet at no block barrier in the main loop. Else
// thread 0 issues them, S - 2 stages ahead (the prologue unrolled).
TEST_CASE("f16 TC=2 TMA=1 kernels copy with cp.async.bulk.tensor from grid-constant tensor maps, from a producer warp "
          "where a block runs 8 stages or more, every layout") {
  struct Case {
    const char* params;
    bool producer;
  };
  // On 512^3: 8 stages; 4 stages per split; 32 stages; 8 stages, but 128 accumulators in each of 256
  // threads need more than the 168 registers that 288 threads leave.
  const Case cases[] = {{"ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,TC=2,TMA=1", true},
                        {"ML=128,NL=64,MS=16,NS=4,U=32,VA=8,VB=8,KG=4,TC=2,TMA=1", false},
                        {"ML=64,NL=32,MS=8,NS=2,U=16,VA=8,VB=8,DB=0,TC=2,TMA=1", true},
                        {"ML=128,NL=256,MS=8,NS=16,U=64,VA=8,VB=8,SW=8,TC=2,TMA=1", false},
                        // Deeper pipelines (ST): 8 stages of 12, and 4 per split of 16 buffers.
                        {"ML=64,NL=64,MS=8,NS=4,U=64,VA=8,VB=8,TC=2,TMA=1,ST=12", true},
                        {"ML=64,NL=32,MS=8,NS=2,U=32,KG=4,VA=8,VB=8,TC=2,TMA=1,ST=16", false}};
  for (int layout = 0; layout < 4; ++layout) {
    const bool at = layout & 1, bt = layout & 2;
    auto g = ir::dense_gemm(DType::f16, 512, 512, 512, at, bt);
    for (const Case& c : cases) {
      GemmParams p = lower::parse_gemm_params(c.params);
      lower::fit_gemm_load_layouts(at, bt, p);
      INFO(layout_name(at, bt) << " " << p.str());
      auto legal = lower::check_gemm(g, p);
      REQUIRE_MESSAGE(legal.legal, legal.reason);
      auto kernel = lower::emit_gemm(g, p, lower::Target{90, false});
      const std::string& ptx = kernel.ptx;  // with KG > 1 also the prepare kernel, which copies nothing
      CHECK(count(ptx, "cp.async.cg") == 0);
      CHECK(count(ptx, ".param .align 64 .b8 " + kernel.main_name + "_param_15[128]") == 1);
      CHECK(count(ptx, ".param .align 64 .b8 " + kernel.main_name + "_param_16[128]") == 1);
      // Without a split, C's map too, and its boxes of 64 rows stored by TMA where beta = 0.
      const bool stores_by_tma = p.kg == 1;
      CHECK(lower::gemm_stores_c_by_tma(g, p) == stores_by_tma);
      CHECK(kernel.c_by_tma == stores_by_tma);
      CHECK(count(ptx, ".param .align 64 .b8 " + kernel.main_name + "_param_17[128]") == (stores_by_tma ? 1 : 0));
      CHECK(count(ptx, "cvta.param.u64") == (stores_by_tma ? 3 : 2));
      CHECK(count(ptx, "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group") == (stores_by_tma ? p.ml / 64 : 0));
      CHECK(count(ptx, "cp.async.bulk.wait_group.read 0;") == (stores_by_tma ? 1 : 0));
      CHECK(count(ptx, "__local_depot") == 0);
      const int launched = p.threads() + (c.producer ? 32 : 0);
      CHECK(kernel.threads == launched);
      const std::string main_ptx = ptx.substr(ptx.find(".entry " + kernel.main_name));
      CHECK(main_ptx.find(fmt::format(".maxntid {}, 1, 1", launched)) < main_ptx.find("{"));
      const int stages = p.st ? p.st : p.db ? 4 : 3;
      CHECK(count(ptx, "mbarrier.init.shared::cta.b64") == (c.producer ? 2 : 1) * stages + (stores_by_tma ? 1 : 0));
      // Copies per stage: one box for a K-contiguous operand, tile / R for the other.
      auto boxes = lower::gemm_tensor_boxes(g, p);
      auto copies = [](const lower::GemmTensorBox& box, int tile) {
        return box.box[1] == static_cast<std::uint32_t>(tile) ? 1 : tile / static_cast<int>(box.box[0]);
      };
      const int per_stage = copies(boxes[0], p.ml) + copies(boxes[1], p.nl);
      // beta != 0 copies C's boxes in first, on an mbarrier of their own after the stages'.
      CHECK(count(ptx, "cp.async.bulk.tensor.3d.shared::cluster") ==
            per_stage * (c.producer ? 1 : stages - 1) + (stores_by_tma ? p.ml / 64 : 0));
      if (c.producer) {
        CHECK(count(ptx, "mbarrier.arrive.expect_tx") == 1 + (stores_by_tma ? 1 : 0));
        CHECK(count(ptx, "mbarrier.arrive.shared::cta.b64") == 1);  // a consumer warp empties a buffer
        CHECK(count(ptx, "mbarrier.try_wait.parity") >= 2);         // filled (consumers), emptied (producer)
        // The staged stores (KG = 1) meet at barriers of the consumers alone: before staging, once C's
        // mbarrier is initialised (beta != 0), before the TMA store.
        CHECK(count(ptx, fmt::format("barrier.sync \t1, {};", p.threads())) == (p.kg == 1 ? 3 : 0));
      } else {
        // Issued in the prologue (S - 2 stages, unrolled) and once in the loop.
        CHECK(count(ptx, "mbarrier.arrive.expect_tx") == stages - 1 + (stores_by_tma ? 1 : 0));
        CHECK(count(ptx, "mbarrier.arrive.shared::cta.b64") == 0);
        CHECK(count(ptx, "mbarrier.try_wait.parity") == 1 + (stores_by_tma ? 1 : 0));
        CHECK(count(ptx, "barrier.sync \t1") == 0);
      }
      CHECK(kernel.shared_bytes == lower::gemm_shared_bytes(DType::f16, at, bt, p));
      assembles_for_sm90a_without_spill_stores(kernel);
    }
  }
}

TEST_CASE("legality against a problem: vector widths, leading dimensions, batch strides, alignment") {
  GemmParams b = base_params();  // VA=2, VB=1
  auto nn = [](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
    return ir::dense_gemm(DType::f32, m, n, k, false, false, batch);
  };
  CHECK_LEGAL(lower::check_gemm(nn(64, 64, 64), b));
  // NN: A's contiguous extent is M.
  CHECK_REJECTED(lower::check_gemm(nn(63, 64, 64), b), "VA=2 must divide the contiguous extent 63 of A");
  CHECK_LEGAL(lower::check_gemm(nn(63, 64, 64), with(b, "VA=1")));
  ir::Gemm g = nn(64, 64, 64);
  g.lda = 65;
  CHECK_REJECTED(lower::check_gemm(g, b), "VA=2 must divide lda=65");
  g = nn(64, 64, 64, 2);
  g.stride_a = 64 * 64 + 1;
  CHECK_REJECTED(lower::check_gemm(g, b), "VA=2 must divide the batch stride 4097 of A");
  g.batch = 1;  // the batch stride does not matter without batches
  CHECK_LEGAL(lower::check_gemm(g, b));
  g = nn(64, 64, 64);
  g.align_a = 4;
  CHECK_REJECTED(lower::check_gemm(g, b), "VA=2 needs 8-byte aligned A, which is only 4-byte aligned");
  g.align_a = 8;
  CHECK_LEGAL(lower::check_gemm(g, b));
  // VA=1 never needs more than element alignment.
  g.align_a = 4, g.lda = 65;
  CHECK_LEGAL(lower::check_gemm(g, with(b, "VA=1")));

  // B with 4-wide loads: U=16 so that a 4 x 4 load layout covers the 16-deep contiguous extent.
  GemmParams vb = with(b, "U=16,VB=4,LB=4");
  CHECK_LEGAL(lower::check_gemm(nn(64, 64, 64), vb));
  CHECK_REJECTED(lower::check_gemm(nn(64, 64, 66), vb), "VB=4 must divide the contiguous extent 66 of B");
  g = nn(64, 64, 64);
  g.ldb = 66;
  CHECK_REJECTED(lower::check_gemm(g, vb), "VB=4 must divide ldb=66");
  g = nn(64, 64, 64, 3);
  g.stride_b = 64 * 64 + 2;
  CHECK_REJECTED(lower::check_gemm(g, vb), "VB=4 must divide the batch stride 4098 of B");
  g = nn(64, 64, 64);
  g.align_b = 8;
  CHECK_REJECTED(lower::check_gemm(g, vb), "VB=4 needs 16-byte aligned B, which is only 8-byte aligned");

  // Transposed operands: A^T's contiguous extent is K, B^T's is N.
  GemmParams tn = with(b, "LA=4");
  CHECK_LEGAL(lower::check_gemm(ir::dense_gemm(DType::f32, 63, 64, 64, true, false), tn));
  CHECK_REJECTED(lower::check_gemm(ir::dense_gemm(DType::f32, 64, 64, 65, true, false), tn),
                 "VA=2 must divide the contiguous extent 65 of A");
  GemmParams nt = with(b, "U=16,LB=16,VB=4");
  CHECK_LEGAL(lower::check_gemm(ir::dense_gemm(DType::f32, 64, 64, 63, false, true), nt));
  CHECK_REJECTED(lower::check_gemm(ir::dense_gemm(DType::f32, 64, 62, 64, false, true), nt),
                 "VB=4 must divide the contiguous extent 62 of B");
  // f16: 8-wide loads need 16-byte alignment.
  GemmParams h = lower::parse_gemm_params("ML=64,NL=64,MS=4,NS=4,U=32,VA=8,VB=1,LA=8,LB=8");
  ir::Gemm hg = ir::dense_gemm(DType::f16, 64, 64, 64, false, false);
  CHECK_LEGAL(lower::check_gemm(hg, h));
  hg.align_a = 8;
  CHECK_REJECTED(lower::check_gemm(hg, h), "VA=8 needs 16-byte aligned A, which is only 8-byte aligned");
}

TEST_CASE("legality against a problem: KG and the K tiles, sizes") {
  GemmParams b = base_params();
  auto g = ir::dense_gemm(DType::f32, 64, 64, 64, false, false);  // 8 K tiles of U=8
  CHECK_LEGAL(lower::check_gemm(g, with(b, "KG=8")));
  CHECK_LEGAL(lower::check_gemm(g, with(b, "KG=3")));  // shares of 2, 3 and 3 tiles
  CHECK_LEGAL(lower::check_gemm(g, with(b, "KG=7")));
  CHECK_REJECTED(lower::check_gemm(g, with(b, "KG=9")), "KG=9 splits K=64 into more pieces than its 8 tiles of U=8");
  CHECK_REJECTED(lower::check_gemm(g, with(b, "KG=16")), "KG=16 splits K=64 into more pieces than its 8 tiles of U=8");
  CHECK_REJECTED(lower::check_gemm(ir::dense_gemm(DType::f32, 64, 64, 9, false, false), with(b, "KG=4")),
                 "KG=4 splits K=9 into more pieces than its 2 tiles of U=8");
  // K = 0 is allowed (C = beta C), with KG = 1.
  CHECK_LEGAL(lower::check_gemm(ir::dense_gemm(DType::f32, 64, 64, 0, false, false), b));
  ir::Gemm empty = ir::dense_gemm(DType::f32, 64, 64, 64, false, false);
  empty.m = 0;
  CHECK_REJECTED(lower::check_gemm(empty, b), "GEMM sizes must be positive (K may be 0)");
  // Parameter rejections come through check_gemm too.
  CHECK_REJECTED(lower::check_gemm(g, with(b, "ML=48")), "ML=48 must be a power of two");
}

TEST_CASE("legality against a problem: leading dimensions that hold a column, and batches of C apart") {
  // Each of these once compiled and ran, and wrote wrong results (ldc = 0 and ldc < M on the H200).
  const GemmParams b = base_params();
  const ir::Gemm dense = ir::dense_gemm(DType::f32, 256, 256, 64, false, false);
  ir::Gemm g = dense;
  g.ldc = 0;
  CHECK_REJECTED(lower::check_gemm(g, b), "ldc=0 is shorter than the 256 rows of C as stored");
  g.ldc = 100;
  CHECK_REJECTED(lower::check_gemm(g, b), "ldc=100 is shorter than the 256 rows of C as stored");
  g = dense;
  g.lda = 100;
  CHECK_REJECTED(lower::check_gemm(g, with(b, "VA=1")), "lda=100 is shorter than the 256 rows of A as stored");
  g = ir::dense_gemm(DType::f32, 64, 256, 256, true, false);  // A stored K x M: lda >= K
  g.lda = 128;
  CHECK_REJECTED(lower::check_gemm(g, with(b, "LA=4")), "lda=128 is shorter than the 256 rows of A as stored");
  g = dense;
  g.ldb = 32;
  CHECK_REJECTED(lower::check_gemm(g, b), "ldb=32 is shorter than the 64 rows of B as stored");
  // One column: its leading dimension is never used.
  g = ir::dense_gemm(DType::f32, 256, 1, 64, false, false);
  g.ldc = 0;
  CHECK_LEGAL(lower::check_gemm(g, b));
  // Batches of C: apart, interleaved with its columns (attention's heads), or overlapping.
  g = ir::dense_gemm(DType::f32, 64, 64, 64, false, false, 4);
  CHECK_LEGAL(lower::check_gemm(g, b));
  g.stride_c = 0;
  CHECK_REJECTED(lower::check_gemm(g, b), "two elements of C share memory");
  g.stride_c = 64 * 64 - 1;
  CHECK_REJECTED(lower::check_gemm(g, b), "two elements of C share memory");
  g.stride_c = 64, g.ldc = 4 * 64;
  CHECK_LEGAL(lower::check_gemm(g, b));
  g = ir::dense_gemm(DType::f32, 64, 64, 64, false, false, 4);
  g.stride_a = -4096;
  CHECK_REJECTED(lower::check_gemm(g, b), "batch strides must not be negative");
  g.stride_a = 0;  // one A for every batch
  CHECK_LEGAL(lower::check_gemm(g, b));
  // Offsets past 63 bits.
  g = ir::dense_gemm(DType::f32, 64, 1 << 20, 64, false, false);
  g.ldc = std::int64_t(1) << 62;
  CHECK_REJECTED(lower::check_gemm(g, b), "C spans more than 2^63 bytes");
  // The swizzle's group of SW rows of tiles is counted in 32 bits.
  g = ir::dense_gemm(DType::f32, 64, 0x7fffffff, 1, false, false);
  CHECK_REJECTED(lower::check_gemm(g, with(b, "SW=1024")), "column tiles exceed 32 bits: use SW=1");
}

TEST_CASE("the space holds KG that are not powers of two only for grids of at most 8 blocks per SM") {
  const lower::DeviceLimits h100;
  CHECK(lower::gemm_split_in_space(40, 3, h100));
  CHECK(lower::gemm_split_in_space(40, 24, h100));  // 960 blocks of 1,056
  CHECK_FALSE(lower::gemm_split_in_space(80, 24, h100));
  CHECK(lower::gemm_split_in_space(1024, 16, h100));  // powers of two, as before
  for (auto [m, n, k] : {std::array<std::int64_t, 3>{2560, 64, 2560}, {1024, 1024, 1024}}) {
    const auto g = ir::dense_gemm(DType::f64, m, n, k, false, false);
    const auto space = lower::gemm_space(g, h100);
    std::set<int> uneven;
    for (const auto& p : space) {
      if (p.kg & (p.kg - 1)) {
        uneven.insert(p.kg);
        REQUIRE(lower::gemm_grid_blocks(g, p) <= 8 * h100.sm_count);
      }
    }
    INFO(m, "x", n, "x", k);
    CHECK(uneven.count(3) == 1);
    CHECK(uneven.count(6) == 1);
    CHECK(lower::gemm_space_levels(g, h100).size() == space.size());
  }
}

TEST_CASE("emit_gemm refuses an illegal parameter set with InvalidArgument") {
  lower::Target sm90 = lower::parse_target("sm_90");
  auto g = ir::dense_gemm(DType::f32, 256, 256, 256, false, false);
  CHECK_THROWS_WITH_AS(lower::emit_gemm(g, with(base_params(), "ML=48"), sm90),
                       doctest::Contains("ML=48 must be a power of two"), InvalidArgument);
  CHECK_THROWS_WITH_AS(lower::emit_gemm(g, with(base_params(), "ML=128,NL=128,MS=2,NS=4"), sm90),
                       doctest::Contains("illegal GEMM parameters ML=128,NL=128,MS=2,NS=4"), InvalidArgument);
  CHECK_THROWS_WITH_AS(lower::emit_gemm(g, with(base_params(), "LA=3"), sm90),
                       doctest::Contains("LA=3 must divide the 256 threads"), InvalidArgument);
  auto h = ir::dense_gemm(DType::f16, 256, 256, 256, false, false);
  CHECK_THROWS_WITH_AS(lower::emit_gemm(h, lower::parse_gemm_params("ML=32,NL=32,MS=1,NS=4,U=8,LA=32,LB=8,ACC=16"), sm90),
                       doctest::Contains("MS=1 must be even"), InvalidArgument);
  CHECK_THROWS_WITH_AS(
      lower::emit_gemm(ir::dense_gemm(DType::bf16, 64, 64, 64, false, false), with(base_params(), "ACC=16"), sm90),
      doctest::Contains("bf16 accumulates in f32"), InvalidArgument);
  // ... and emits the legal one, with its entry point named.
  lower::GemmKernel k = lower::emit_gemm(g, base_params(), sm90);
  CHECK(k.ptx.find(".entry " + k.main_name) != std::string::npos);
  CHECK(k.threads == 256);
  CHECK(k.shared_bytes == lower::gemm_shared_bytes(DType::f32, false, false, base_params()));
  CHECK(k.prepare_name.empty());
  CHECK(k.reduce_name.empty());
}

TEST_CASE("f16 TC=1 kernels with plain stores stage C in shared memory and store it in 16-byte vectors") {
  auto g = ir::dense_gemm(DType::f16, 4096, 4096, 32, false, true);
  auto p = lower::parse_gemm_params("ML=128,NL=128,MS=8,NS=16,U=16,VA=8,VB=8,LA=16,LB=16,DB=0,TC=1");
  REQUIRE(lower::check_gemm_params(DType::f16, false, true, p, {.sm = 90}));
  // 128 columns of 128 f32 accumulators, each padded by 16 bytes: more than the two pipeline stages.
  CHECK(lower::gemm_shared_bytes(DType::f16, false, true, p) == 128 * (128 + 4) * 4);
  auto k = lower::emit_gemm(g, p, lower::Target{90, false});
  CHECK(k.ptx.find("st.global.v4.b32") != std::string::npos);
  CHECK(k.shared_bytes == 128 * (128 + 4) * 4);
  // f64 keeps its direct stores, and so does a split.
  auto d = lower::parse_gemm_params("ML=64,NL=64,MS=8,NS=4,U=16,VA=2,VB=2,LA=32,LB=32,DB=0,TC=1");
  REQUIRE(lower::check_gemm_params(DType::f64, false, true, d, {.sm = 90}));
  CHECK(lower::gemm_shared_bytes(DType::f64, false, true, d) == 2 * 2 * 16 * (64 + 4) * 8);  // K-row tiles, 32-byte pad
  auto split = p;
  split.kg = 2;
  CHECK(lower::gemm_shared_bytes(DType::f16, false, true, split) == 2 * 2 * 16 * (128 + 8) * 2);
}

namespace {

// The PTX text of entry `name`: from its .entry line to the next one.
std::string entry_text(const std::string& ptx, const std::string& name) {
  auto begin = ptx.find(".entry " + name + "(");
  REQUIRE_MESSAGE(begin != std::string::npos, "no entry " << name);
  auto end = ptx.find(".entry ", begin + 1);
  return ptx.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

// cp.async GEMM kernels compute each slot's addresses before the main loop: a stage adds one offset to
// a 32-bit shared address and one to a 64-bit global one. The per-slot arithmetic this replaced put a
// 64-bit multiply (by the leading dimension, or to widen the K offset) beside every copy.
TEST_CASE("cp.async GEMM kernels take 32-bit shared addresses and multiply in 64 bits less often than they copy") {
  struct Case {
    DType dtype;
    bool at, bt;
    const char* params;
  };
  for (const Case& c : {Case{DType::f16, true, false, "ML=32,NL=32,MS=2,NS=4,U=64,KG=8,VA=4,VB=4,LA=16,LB=16,TC=1"},
                        Case{DType::f64, true, false, "ML=32,NL=32,MS=1,NS=8,U=32,KG=8,VA=2,VB=1,LA=16,LB=32,DB=0,TC=1"},
                        Case{DType::f16, false, true, "ML=64,NL=64,MS=8,NS=4,U=16,VA=8,VB=8,LA=8,LB=8,TC=2"}}) {
    auto g = ir::dense_gemm(c.dtype, 2560, 96, 2560, c.at, c.bt);
    GemmParams p = lower::parse_gemm_params(c.params);
    INFO(ir::name(c.dtype) << " " << layout_name(c.at, c.bt) << " " << p.str());
    auto legal = lower::check_gemm(g, p);
    REQUIRE_MESSAGE(legal.legal, legal.reason);
    auto kernel = lower::emit_gemm(g, p, lower::Target{90, false});
    const std::string ptx = entry_text(kernel.ptx, kernel.main_name);
    const std::string copy = ".shared.global [";
    const int copies = count(ptx, copy);
    REQUIRE(copies > 0);
    CHECK(count(ptx, copy + "%rd") == 0);
    // From the first copy to the last: the prologue's stages and the main loop, not the epilogue.
    const std::string copying = ptx.substr(ptx.find(copy), ptx.rfind(copy) - ptx.find(copy));
    int multiplies = 0;
    for (const char* op : {"mul.wide.", "mul.lo.s64", "mul.lo.u64", "mad.wide.", "mad.lo.s64", "mad.lo.u64"})
      multiplies += count(copying, op);
    CHECK(multiplies < copies / 2);
  }
}

TEST_CASE("split modes are named and parsed in one place") {
  for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic})
    CHECK(lower::parse_split_mode(lower::name(mode)) == mode);
  CHECK_THROWS_WITH_AS(lower::parse_split_mode("ticket"),
                       doctest::Contains("unknown split mode 'ticket': use atomic or deterministic"), InvalidArgument);
}

TEST_CASE("split kernels for sm_90 wait for the kernel before them, prepare lets the main kernel start after its stores") {
  auto g = ir::dense_gemm(DType::f32, 2048, 2048, 64, false, true);
  auto p = lower::parse_gemm_params("ML=64,NL=64,MS=4,NS=4,U=16,KG=4,VA=4,VB=4,LA=16,LB=16");
  for (auto mode : {lower::SplitMode::atomic, lower::SplitMode::deterministic}) {
    lower::GemmKernel k = lower::emit_gemm(g, p, lower::Target{90, false}, mode);
    CHECK(k.overlaps_previous);
    // main: one trigger and one wait, after the main loop (block order in the text is not execution
    // order: the GPU suite checks that the wait is in time).
    std::string main = entry_text(k.ptx, k.main_name);
    auto trigger = main.find("griddepcontrol.launch_dependents;");
    auto wait = main.find("griddepcontrol.wait;");
    REQUIRE(wait != std::string::npos);
    CHECK(trigger < wait);
    CHECK(main.find("griddepcontrol.wait;", wait + 1) == std::string::npos);
    if (mode == lower::SplitMode::atomic) {
      std::string prepare = entry_text(k.ptx, k.prepare_name);
      auto trigger_at = prepare.find("griddepcontrol.launch_dependents;");
      REQUIRE(trigger_at != std::string::npos);
      CHECK(prepare.find("st.global") < trigger_at);
    } else {
      std::string reduce = entry_text(k.ptx, k.reduce_name);
      CHECK(reduce.find("griddepcontrol.wait;") < reduce.find("ld.global"));
    }
    // sm_80 has no programmatic dependent launch: the kernels run in stream order.
    lower::GemmKernel older = lower::emit_gemm(g, p, lower::Target{80, false}, mode);
    CHECK_FALSE(older.overlaps_previous);
    CHECK(older.ptx.find("griddepcontrol") == std::string::npos);
  }
}

// A thread of prepare scales 16 bytes down a column: one vector store where the chunk is whole and
// aligned, element stores at the end of a column or where C is not aligned.
TEST_CASE("prepare scales C in chunks of 16 bytes, and its grid has one thread per chunk") {
  struct Expect {
    DType t;
    const char* params;
    const char* vector_store;
    int chunk;
  };
  for (const Expect& e : {Expect{DType::f16, "ML=64,NL=64,MS=8,NS=4,U=32,KG=4,VA=8,VB=8,LA=8,LB=8,TC=1", "st.global.v4.b32", 8},
                          Expect{DType::f32, "ML=64,NL=64,MS=4,NS=4,U=16,KG=4,VA=4,VB=4,LA=16,LB=16", "st.global.v4", 4},
                          Expect{DType::f64, "ML=64,NL=64,MS=4,NS=4,U=16,KG=4,VA=2,VB=2,LA=32,LB=32", "st.global.v2.f64", 2}}) {
    INFO(ir::name(e.t));
    auto g = ir::dense_gemm(e.t, 2561, 3, 64, false, true, 2);
    auto p = lower::parse_gemm_params(e.params);
    lower::GemmKernel k = lower::emit_gemm(g, p, lower::Target{90, false});
    std::string prepare = entry_text(k.ptx, k.prepare_name);
    CHECK(prepare.find(e.vector_store) != std::string::npos);
    CHECK(lower::gemm_prepare_chunk(e.t) == e.chunk);
    // ceil(2561 / chunk) chunks per column, 3 columns, 256 threads per block; one block row per batch.
    auto grid = lower::gemm_grid(g, p, lower::SplitMode::atomic);
    CHECK(grid.prepare[0] == ((2561 + e.chunk - 1) / e.chunk * 3 + 255) / 256);
    CHECK(grid.prepare[2] == 2);
    CHECK(grid.reduce[0] == (2561 * 3 + 255) / 256);
  }
}

// sm_90's 16-row DMMA shape holds the fragments of two stacked 8-row ones: an f64 TC=1 kernel pairs
// its 8-row tiles into m16n8k4 there (MS=1 leaves single m8n8k4), and keeps m8n8k4 on sm_80, which
// has no other f64 shape.
TEST_CASE("f64 TC=1 kernels use mma.m16n8k4 on sm_90 and mma.m8n8k4 on sm_80") {
  const std::string wide = "mma.sync.aligned.m16n8k4.row.col.f64", narrow = "mma.sync.aligned.m8n8k4.row.col.f64";
  auto g = ir::dense_gemm(DType::f64, 512, 512, 512, false, true);
  for (const char* params : {"ML=64,NL=64,MS=8,NS=4,U=16,VA=2,VB=2,LA=32,LB=32,DB=0,TC=1",
                             "ML=16,NL=32,MS=1,NS=4,U=16,VA=2,VB=2,LA=8,LB=16,DB=0,TC=1"}) {
    auto p = lower::parse_gemm_params(params);
    INFO(params);
    auto hopper = lower::emit_gemm(g, p, lower::Target{90, false});
    auto ampere = lower::emit_gemm(g, p, lower::Target{80, false});
    const std::string main90 = entry_text(hopper.ptx, hopper.main_name);
    const std::string main80 = entry_text(ampere.ptx, ampere.main_name);
    // The same steps in both texts: per step and column pair, MS narrow products on sm_80; MS/2 wide
    // ones (and a narrow one for MS=1) on sm_90.
    const int narrow80 = count(main80, narrow);
    REQUIRE(narrow80 > 0);
    CHECK(count(main80, "m16n8k4") == 0);
    CHECK(count(main90, wide) == narrow80 / p.ms * (p.ms / 2));
    CHECK(count(main90, narrow) == narrow80 / p.ms * (p.ms % 2));
  }
}

// ---------------------------------------------------------------------------------------------
// 3. The ptxas sweep: the issue's CI proof

namespace {

struct SweepJob {
  ir::Gemm problem;
  GemmParams params;
  lower::SplitMode mode = lower::SplitMode::atomic;
  lower::Target target;
};

struct SweepResult {
  bool ok = false;
  std::string error;  // exception text or ptxas's log when it failed
  int est = 0, regs = 0, spill_stores = 0, spill_loads = 0, stack = 0;
  int helper_spills = 0;  // spill bytes reported for the prepare/reduce kernels
  bool entries_ok = false;
  double emit_ms = 0, emit_wall_ms = 0, emit_cpu_ms = 0, ptxas_ms = 0;
};

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double children_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Sums "N bytes spill stores/loads" over every function of a ptxas -v log.
int total_spill_bytes(const std::string& log) {
  static const std::regex spill(R"((\d+) bytes spill (stores|loads))");
  int total = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), spill); it != std::sregex_iterator(); ++it)
    total += std::stoi((*it)[1]);
  return total;
}

SweepResult run_job(const SweepJob& job) {
  SweepResult r;
  try {
    r.est = lower::estimate_gemm_registers(job.problem.dtype, job.problem.a_trans, job.problem.b_trans, job.params);
    double cpu0 = thread_cpu_ms();
    auto t0 = std::chrono::steady_clock::now();
    lower::GemmKernel k = lower::emit_gemm(job.problem, job.params, job.target, job.mode);
    auto t1 = std::chrono::steady_clock::now();
    r.emit_cpu_ms = thread_cpu_ms() - cpu0;
    r.emit_ms = k.emit_ms;
    r.emit_wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    auto has_entry = [&](const std::string& name) { return k.ptx.find(".entry " + name + "(") != std::string::npos; };
    r.entries_ok = has_entry(k.main_name) && (k.prepare_name.empty() || has_entry(k.prepare_name)) &&
                   (k.reduce_name.empty() || has_entry(k.reduce_name)) &&
                   (job.params.kg == 1 || (job.mode == lower::SplitMode::atomic ? !k.prepare_name.empty()
                                                                                : !k.reduce_name.empty()));
    lower::PtxasReport rep = lower::run_ptxas(k.ptx, job.target, k.main_name);
    r.ptxas_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    r.ok = rep.ok;
    r.regs = rep.registers;
    r.spill_stores = rep.spill_stores;
    r.spill_loads = rep.spill_loads;
    r.stack = rep.stack_bytes;
    r.helper_spills = total_spill_bytes(rep.log) - rep.spill_stores - rep.spill_loads;
    if (!rep.ok) {  // ptxas's first two lines say enough
      auto second = rep.log.find('\n', rep.log.find('\n') + 1);
      r.error = rep.log.substr(0, std::min<std::size_t>(second, 400));
    }
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  return r;
}

// Where the CSV goes: $ISAAC_SWEEP_CSV, else the build directory (the test binary lives in build/test).
std::filesystem::path sweep_csv_path() {
  if (const char* env = std::getenv("ISAAC_SWEEP_CSV"); env && *env) return env;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto dir = exe.parent_path();
    for (auto d : {dir, dir.parent_path()})
      if (std::filesystem::exists(d / "CMakeCache.txt")) return d / "gemm_ptxas_sweep.csv";
    return dir / "gemm_ptxas_sweep.csv";
  }
  return "gemm_ptxas_sweep.csv";
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(std::ceil(q * v.size())) - 1;
  return v[std::min(i, v.size() - 1)];
}

std::string fixed(double x, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// Draws `count` sets from the legal space of one dtype and layout, spread over the strata that
// change the generated code: KG split (none / atomic / deterministic), KL > 1, DB, KS > 1, vector
// loads, f16 accumulation and the block-tile size class. `problem` only gates legality (the kernel
// depends on the dtype, the layout and the parameters); a large aligned problem admits every tile,
// vector width and KG of the template, so the draw covers the whole space.
struct Cell {
  ir::Gemm problem;
  std::size_t space = 0;  // legal sets, ACC=16 twins included
  std::vector<SweepJob> jobs;
};

Cell draw_cell(const ir::Gemm& problem, int count, std::uint64_t seed, int parity) {
  Rng rng(seed);
  Cell cell;
  cell.problem = problem;
  const std::vector<GemmParams> space = lower::gemm_space(problem);
  const bool f16 = problem.dtype == DType::f16;
  // Entry 2i + 1 is space[i]; entry 2i is its ACC=16 twin (f16 only; legality checked when drawn,
  // since gemm_space enumerates ACC=32 alone).
  auto stratum = [](const GemmParams& p, int acc32) {
    int tile = p.ml * p.nl <= 32 * 32 ? 0 : p.ml * p.nl <= 64 * 64 ? 1 : p.ml * p.nl <= 128 * 64 ? 2 : 3;
    return std::make_tuple(p.kg > 1, p.kl > 1, p.db, acc32, tile, p.ks > 1, std::max(p.va, p.vb) > 1, p.tc);
  };
  std::map<decltype(stratum(GemmParams{}, 1)), std::vector<std::uint32_t>> buckets;
  for (std::size_t i = 0; i < space.size(); ++i) {
    buckets[stratum(space[i], 1)].push_back(static_cast<std::uint32_t>(2 * i + 1));
    if (f16 && space[i].ms % 2 == 0) buckets[stratum(space[i], 0)].push_back(static_cast<std::uint32_t>(2 * i));
  }
  std::vector<std::vector<std::uint32_t>> order;
  for (auto& [key, members] : buckets) order.push_back(std::move(members));
  // Shuffle the bucket order so that a short draw does not always favour the same strata.
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  int split_turn = parity;
  std::size_t empty = 0;
  for (std::size_t b = 0; static_cast<int>(cell.jobs.size()) < count && empty < order.size();
       b = (b + 1) % order.size()) {
    auto& members = order[b];
    if (members.empty()) {
      ++empty;
      continue;
    }
    empty = 0;
    std::size_t j = rng.below(members.size());
    std::uint32_t entry = members[j];
    members[j] = members.back();
    members.pop_back();
    GemmParams p = space[entry / 2];
    p.acc32 = static_cast<int>(entry % 2);
    if (!p.acc32) {
      if (!lower::check_gemm(problem, p)) continue;  // the twin's registers do not allow ACC=16
    }
    SweepJob job;
    job.problem = problem;
    job.params = p;
    if (p.kg > 1) job.mode = split_turn++ % 2 ? lower::SplitMode::deterministic : lower::SplitMode::atomic;
    // TC=2 (wgmma) exists on sm_90 alone, and so do the bf16 reductions of a split.
    const bool sm90_only = p.tc == 2 || (problem.dtype == DType::bf16 && p.kg > 1);
    job.target = lower::parse_target(sm90_only || (cell.jobs.size() + parity) % 2 ? "sm_90" : "sm_80");
    cell.jobs.push_back(job);
  }
  cell.space = space.size();
  return cell;
}

}  // namespace

TEST_CASE("ptxas sweep: 500+ legal parameter sets over every dtype and layout assemble for sm_80 and sm_90 without "
          "spills") {
  if (!lower::ptxas_available()) {
    MESSAGE("ptxas is not available (put the CUDA toolkit's bin on PATH or set ISAAC_PTXAS): sweep skipped");
    return;
  }
  auto start = std::chrono::steady_clock::now();
  int per_cell = 43;  // 12 cells x 43 = 516 sets, and a third as many in each of the 4 bf16 cells
  if (const char* env = std::getenv("ISAAC_SWEEP_PER_CELL"); env && *env) per_cell = std::max(1, std::atoi(env));

  // One cell per dtype and layout, drawn on two threads, each from its own seed (deterministic).
  // Three large aligned shapes take turns: each admits the template's whole space.
  std::vector<ir::Gemm> problems;
  const std::int64_t shapes[3][4] = {{2048, 2048, 2048, 1}, {4096, 1024, 8192, 1}, {1024, 2048, 4096, 4}};
  for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::f64})
    for (bool at : {false, true})
      for (bool bt : {false, true}) {
        auto& s = shapes[problems.size() % 3];
        problems.push_back(ir::dense_gemm(dtype, s[0], s[1], s[2], at, bt, s[3]));
      }
  auto wanted = [&](const ir::Gemm& g) { return g.dtype == DType::bf16 ? std::max(1, per_cell / 3) : per_cell; };
  std::vector<Cell> cells(problems.size());
  {
    std::atomic<std::size_t> next_cell{0};
    auto draw = [&] {
      for (std::size_t i; (i = next_cell.fetch_add(1)) < cells.size();)
        cells[i] = draw_cell(problems[i], wanted(problems[i]), 0x15AAC5C17ull + 7919 * i, static_cast<int>(i % 2));
    };
    std::thread t(draw);
    draw();
    t.join();
  }
  std::vector<SweepJob> jobs;
  std::size_t space_total = 0;
  for (const Cell& c : cells) {
    CHECK_MESSAGE(static_cast<int>(c.jobs.size()) == wanted(c.problem), ir::to_string(c.problem));
    jobs.insert(jobs.end(), c.jobs.begin(), c.jobs.end());
    space_total += c.space;
  }
  double sample_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Coverage of the space, before anything is compiled.
  auto count_if = [&](auto pred) { return std::count_if(jobs.begin(), jobs.end(), pred); };
  auto atomic_kg = count_if([](auto& j) { return j.params.kg > 1 && j.mode == lower::SplitMode::atomic; });
  auto determ_kg = count_if([](auto& j) { return j.params.kg > 1 && j.mode == lower::SplitMode::deterministic; });
  auto kl = count_if([](auto& j) { return j.params.kl > 1; });
  auto ks = count_if([](auto& j) { return j.params.ks > 1; });
  auto db0 = count_if([](auto& j) { return j.params.db == 0; });
  auto db1 = count_if([](auto& j) { return j.params.db == 1; });
  auto acc16 = count_if([](auto& j) { return j.problem.dtype == DType::f16 && !j.params.acc32; });
  auto acc32 = count_if([](auto& j) { return j.problem.dtype == DType::f16 && j.params.acc32; });
  auto tc = count_if([](auto& j) { return j.params.tc == 1; });
  auto sm80 = count_if([](auto& j) { return j.target.sm == 80; });
  auto sm90 = count_if([](auto& j) { return j.target.sm == 90; });
  CHECK(jobs.size() >= 500);
  CHECK(atomic_kg > 0);
  CHECK(determ_kg > 0);
  CHECK(kl > 0);
  CHECK(ks > 0);
  CHECK(db0 > 0);
  CHECK(db1 > 0);
  CHECK(acc16 > 0);
  CHECK(acc32 > 0);
  CHECK(tc > 0);
  CHECK(sm80 > 0);
  CHECK(sm90 > 0);
  for (const SweepJob& j : jobs) {
    Legality legal = lower::check_gemm(j.problem, j.params);
    INFO(ir::to_string(j.problem), " ", j.params.str(), ": ", legal.reason);
    REQUIRE(legal.legal);
  }

  // Emission and ptxas on two threads (one LLVMContext per emit_gemm call).
  std::vector<SweepResult> results(jobs.size());
  auto compile_start = std::chrono::steady_clock::now();
  double ptxas_cpu0 = children_cpu_s();
  unsigned n_threads = 2;
  if (const char* env = std::getenv("ISAAC_SWEEP_THREADS"); env && *env) n_threads = std::max(1, std::atoi(env));
  test::parallel_for(jobs.size(), n_threads, [&](std::size_t i) { results[i] = run_job(jobs[i]); });
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  double ptxas_cpu_s = children_cpu_s() - ptxas_cpu0;

  // The CSV, one row per set.
  auto csv_path = sweep_csv_path();
  {
    std::ofstream csv(csv_path);
    csv << "dtype,layout,target,split,params,threads,est_regs,ptxas_regs,spills,stack,ok,emit_ms,emit_cpu_ms,ptxas_ms\n";
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const SweepJob& j = jobs[i];
      const SweepResult& r = results[i];
      csv << ir::name(j.problem.dtype) << ',' << layout_name(j.problem.a_trans, j.problem.b_trans) << ','
          << j.target.name() << ',' << (j.params.kg == 1 ? "none" : j.mode == lower::SplitMode::atomic ? "atomic" : "deterministic")
          << ",\"" << j.params.str() << "\"," << j.params.threads() << ',' << r.est << ',' << r.regs << ','
          << r.spill_stores + r.spill_loads + r.helper_spills << ',' << r.stack << ',' << (r.ok ? 1 : 0) << ','
          << fixed(r.emit_ms) << ',' << fixed(r.emit_cpu_ms) << ',' << fixed(r.ptxas_ms) << '\n';
    }
  }

  // Failures: ptxas errors, exceptions, missing entry points, and every spill.
  std::vector<std::string> failures, spills;
  std::vector<double> abs_err, rel_err, emit_ms, emit_wall_ms, emit_cpu_ms, ptxas_ms, est_v, regs_v;
  int over_block = 0, with_stack = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const SweepJob& j = jobs[i];
    const SweepResult& r = results[i];
    std::string what = std::string(ir::name(j.problem.dtype)) + " " + layout_name(j.problem.a_trans, j.problem.b_trans) +
                       " " + j.target.name() + " " + j.params.str() +
                       (j.params.kg > 1 ? (j.mode == lower::SplitMode::atomic ? " atomic" : " deterministic") : "");
    if (!r.ok) {
      failures.push_back(what + ": " + r.error);
      continue;
    }
    if (!r.entries_ok) failures.push_back(what + ": the PTX lacks one of the kernels GemmKernel names");
    if (r.spill_stores || r.spill_loads || r.helper_spills)
      spills.push_back(what + ": ptxas " + std::to_string(r.regs) + " registers, " + std::to_string(r.spill_stores) +
                       " bytes spill stores, " + std::to_string(r.spill_loads) + " bytes spill loads" +
                       (r.helper_spills ? ", helper kernel spills " + std::to_string(r.helper_spills) : "") +
                       " (estimate " + std::to_string(r.est) + "; " + std::to_string(j.params.threads()) +
                       " threads, so at most " + std::to_string(std::min(255, 65536 / j.params.threads() / 8 * 8)) +
                       " registers)");
    if (r.stack) ++with_stack;
    if (r.regs * j.params.threads() > 65536) ++over_block;
    abs_err.push_back(std::abs(r.est - r.regs));
    rel_err.push_back(r.regs ? std::abs(r.est - r.regs) / double(r.regs) : 0.0);
    est_v.push_back(r.est);
    regs_v.push_back(r.regs);
    emit_ms.push_back(r.emit_ms);
    emit_wall_ms.push_back(r.emit_wall_ms);
    emit_cpu_ms.push_back(r.emit_cpu_ms);
    ptxas_ms.push_back(r.ptxas_ms);
  }
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  };
  double within = rel_err.empty() ? 0.0
                                  : double(std::count_if(rel_err.begin(), rel_err.end(), [](double e) { return e <= 0.25; })) /
                                        rel_err.size();
  // Least squares fit ptxas = a * est + b, and the signed bias.
  double a = 0, b = 0, bias = 0;
  if (est_v.size() > 1) {
    double mx = mean(est_v), my = mean(regs_v), sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < est_v.size(); ++i) {
      sxy += (est_v[i] - mx) * (regs_v[i] - my);
      sxx += (est_v[i] - mx) * (est_v[i] - mx);
    }
    a = sxx ? sxy / sxx : 0;
    b = my - a * mx;
    bias = my - mx;
  }
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::ostringstream summary;
  summary << "GEMM ptxas sweep: " << jobs.size() << " legal sets drawn from " << space_total
          << " (gemm_space over 12 dtype x layout cells, ACC=32) (" << sm80 << " sm_80, " << sm90 << " sm_90; KG>1 "
          << atomic_kg << " atomic + " << determ_kg << " deterministic, KL>1 " << kl << ", KS>1 " << ks << ", DB=0 "
          << db0 << ", DB=1 " << db1 << ", f16 ACC=32 " << acc32 << ", ACC=16 " << acc16 << ")\n"
          << "  ptxas failures: " << failures.size() << ", sets that spill: " << spills.size()
          << ", sets with a stack frame: " << with_stack << ", ptxas regs x threads > 65536: " << over_block << "\n"
          << "  register estimate vs ptxas: mean |error| " << fixed(mean(abs_err)) << ", max |error| "
          << fixed(abs_err.empty() ? 0 : *std::max_element(abs_err.begin(), abs_err.end()), 0) << ", mean relative "
          << fixed(100 * mean(rel_err), 1) << "%, within +-25%: " << fixed(100 * within, 1) << "%, mean(ptxas - est) "
          << fixed(bias, 1) << ", fit ptxas = " << fixed(a, 3) << " * est + " << fixed(b, 1) << "\n"
          << "  emit (LLVM) per kernel: mean " << fixed(mean(emit_ms)) << " ms, p95 " << fixed(percentile(emit_ms, 0.95))
          << " ms, max " << fixed(percentile(emit_ms, 1.0)) << " ms (emit_gemm wall: mean " << fixed(mean(emit_wall_ms))
          << " ms, p95 " << fixed(percentile(emit_wall_ms, 0.95)) << " ms; " << n_threads << " threads)\n"
          << "  emit CPU time per kernel (load-independent): mean " << fixed(mean(emit_cpu_ms)) << " ms, median "
          << fixed(percentile(emit_cpu_ms, 0.5)) << " ms, p95 " << fixed(percentile(emit_cpu_ms, 0.95)) << " ms, max "
          << fixed(percentile(emit_cpu_ms, 1.0)) << " ms\n"
          << "  ptxas per kernel: wall mean " << fixed(mean(ptxas_ms)) << " ms, p95 " << fixed(percentile(ptxas_ms, 0.95))
          << " ms; CPU mean " << fixed(jobs.empty() ? 0 : 1e3 * ptxas_cpu_s / jobs.size()) << " ms\n"
          << "  time: sampling " << fixed(sample_s, 1) << " s, emit + ptxas " << fixed(compile_s, 1) << " s, total "
          << fixed(total_s, 1) << " s; CSV: " << csv_path.string();
  MESSAGE(summary.str());

  // Per dtype, the estimate's error (the calibration the lead needs).
  for (DType dtype : {DType::f16, DType::f32, DType::f64}) {
    std::vector<double> e, d;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].problem.dtype == dtype && results[i].ok) {
        e.push_back(std::abs(results[i].est - results[i].regs));
        d.push_back(results[i].regs - results[i].est);
      }
    MESSAGE(ir::name(dtype), ": ", e.size(), " sets, mean |ptxas - est| ", fixed(mean(e)), ", mean(ptxas - est) ",
            fixed(mean(d)), ", max |error| ", fixed(e.empty() ? 0 : *std::max_element(e.begin(), e.end()), 0));
  }

  std::string failure_list, spill_list;
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) failure_list += "\n  " + failures[i];
  for (std::size_t i = 0; i < spills.size() && i < 50; ++i) spill_list += "\n  " + spills[i];
  CHECK_MESSAGE(failures.empty(), failures.size(), " sets failed to emit or assemble:", failure_list);
  CHECK_MESSAGE(spills.empty(), spills.size(), " legal sets spill (a spill is a failure):", spill_list);
}
