// The ahead-of-time header (issue 8) against the JIT path: aot_test_kernels.hpp is exported at build
// time from test/gpu/aot.spec by isaac-tune export. On a GPU, every exported kernel runs on random
// data beside isaac::CompiledGemm with the same parameters, and the two results must be identical bit
// for bit. The header's own checks (shapes it was not exported for, bad arguments) need no GPU: built
// with ISAAC_AOT_TEST_CPU_ONLY, this file is the CPU test test_aot_header, which also checks that the
// header carries exactly the PTX that isaac's emitter makes for each kernel's parameters.
#include "aot_test_kernels.hpp"

#include <doctest/doctest.h>
#include <isaac/gemm.hpp>
#include <isaac/ir/evaluate.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/runtime/runtime.hpp>

#include "support/host_data.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace isaac;
using test::HostArray;

namespace {

// A call of an exported function: sizes, scalars and device operands.
struct Call {
  std::int64_t m, n, k, lda, ldb, ldc;
  double alpha = 1.5, beta = -0.5;
  runtime::DevicePtr a = 0, b = 0, c = 0, workspace = 0;
  std::size_t workspace_bytes = 0;
};

template <class T>
T* device(runtime::DevicePtr p) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(p));
}

// One exported function, callable on a Call whatever its element type and signature.
struct Function {
  const char* name;
  ir::DType dtype;
  bool a_trans, b_trans;
  lower::SplitMode mode;
  std::function<aot_test::status(aot_test::stream_t, const Call&)> run;
  std::function<const aot_test::kernel_info*(const Call&)> select;
  std::function<std::size_t(const Call&)> workspace_bytes;
};

template <class T, class S, class F>
auto runner(F f) {
  return [f](aot_test::stream_t s, const Call& x) {
    return f(s, x.m, x.n, x.k, S(x.alpha), device<T>(x.a), x.lda, device<T>(x.b), x.ldb, S(x.beta), device<T>(x.c), x.ldc);
  };
}
template <class T, class S, class F>
auto runner_with_workspace(F f) {
  return [f](aot_test::stream_t s, const Call& x) {
    return f(s, x.m, x.n, x.k, S(x.alpha), device<T>(x.a), x.lda, device<T>(x.b), x.ldb, S(x.beta), device<T>(x.c), x.ldc,
             device<void>(x.workspace), x.workspace_bytes);
  };
}
template <class T, class F>
auto selector(F f) {
  return [f](const Call& x) { return f(x.m, x.n, x.k, device<T>(x.a), x.lda, device<T>(x.b), x.ldb); };
}
auto no_workspace = [](const Call&) { return std::size_t(0); };

const Function sgemm{"sgemm", ir::DType::f32, false, false, lower::SplitMode::atomic,
                     runner<float, float>(aot_test::sgemm), selector<float>(aot_test::sgemm_select), no_workspace};
const Function dgemm_nt{"dgemm_nt", ir::DType::f64, false, true, lower::SplitMode::atomic,
                        runner<double, double>(aot_test::dgemm_nt), selector<double>(aot_test::dgemm_nt_select),
                        no_workspace};
const Function hgemm_tn{"hgemm_tn", ir::DType::f16, true, false, lower::SplitMode::atomic,
                        runner<std::uint16_t, float>(aot_test::hgemm_tn), selector<std::uint16_t>(aot_test::hgemm_tn_select),
                        no_workspace};
const Function sgemm_det{"sgemm_det", ir::DType::f32, true, true, lower::SplitMode::deterministic,
                         runner_with_workspace<float, float>(aot_test::sgemm_det),
                         selector<float>(aot_test::sgemm_det_select),
                         [](const Call& x) { return aot_test::sgemm_det_workspace_bytes(x.m, x.n, x.k); }};
const Function sgemm_atomic{"sgemm_atomic", ir::DType::f32, false, true, lower::SplitMode::atomic,
                            runner<float, float>(aot_test::sgemm_atomic), selector<float>(aot_test::sgemm_atomic_select),
                            no_workspace};
const Function bgemm_nt{"bgemm_nt", ir::DType::bf16, false, true, lower::SplitMode::atomic,
                        runner<std::uint16_t, float>(aot_test::bgemm_nt), selector<std::uint16_t>(aot_test::bgemm_nt_select),
                        no_workspace};
const Function only_exact{"only_exact", ir::DType::f32, false, false, lower::SplitMode::atomic,
                          runner<float, float>(aot_test::only_exact), selector<float>(aot_test::only_exact_select),
                          no_workspace};

// A dense call with each leading dimension padded by `pad`, and 16-byte aligned operands that are
// never dereferenced (for the checks that come before any launch).
Call shape(const Function& f, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t pad = 0) {
  Call x{m, n, k, (f.a_trans ? k : m) + pad, (f.b_trans ? n : k) + pad, m + pad};
  x.a = 0x100000, x.b = 0x200000, x.c = 0x300000, x.workspace = 0x400000, x.workspace_bytes = std::size_t(1) << 30;
  return x;
}

const aot_test::kernel_info& kernel_of(const Function& f, const Call& x) {
  const aot_test::kernel_info* k = f.select(x);
  REQUIRE_MESSAGE(k, aot_test::last_error());
  return *k;
}

}  // namespace

TEST_CASE("AOT: the header carries the PTX that isaac's emitter makes for each kernel's parameters") {
  REQUIRE(std::string(aot_test::target_arch) == "sm_90");
  const lower::Target target = lower::parse_target(aot_test::target_arch);
  for (int i = 0; i < aot_test::kernel_count; ++i) {
    const aot_test::kernel_info& k = aot_test::kernels[i];
    INFO("kernel " << i << ": " << k.dtype << " " << k.params);
    const lower::GemmParams p = lower::parse_gemm_params(k.params);
    CHECK(p.ml == k.ml);
    CHECK(p.kg == k.kg);
    CHECK(p.va == k.va);
    CHECK(p.lb == k.lb);
    const ir::Gemm g = ir::dense_gemm(ir::parse_dtype(k.dtype), 64, 64, 64, k.a_trans, k.b_trans);
    const lower::GemmKernel code =
        lower::emit_gemm(g, p, target, k.deterministic ? lower::SplitMode::deterministic : lower::SplitMode::atomic);
    std::string ptx;
    for (int piece = 0; piece < k.ptx_pieces; ++piece) ptx += k.ptx[piece];
    CHECK(ptx == code.ptx);
    CHECK(code.main_name == k.main_name);
    CHECK(code.prepare_name == k.prepare_name);
    CHECK(code.reduce_name == k.reduce_name);
    CHECK(code.threads == k.threads);
    CHECK(code.shared_bytes == k.shared_bytes);
    CHECK(code.helper_threads == k.helper_threads);
    if (k.cubin) {
      REQUIRE(k.cubin_bytes > 4);
      CHECK(std::memcmp(k.cubin, "\x7f" "ELF", 4) == 0);
      CHECK(k.registers > 0);
    }
  }
}

TEST_CASE("AOT: exact shapes take their kernel, other shapes and misaligned operands the generic one") {
  const Call exact = shape(sgemm, 256, 192, 96);
  CHECK(kernel_of(sgemm, exact).va == 4);
  CHECK(kernel_of(sgemm, shape(sgemm, 100, 37, 50)).va == 1);
  CHECK(kernel_of(sgemm, shape(sgemm, 256, 192, 96, 1)).va == 1);  // lda = 257: no 4-wide loads
  Call misaligned = exact;
  misaligned.a += 4;
  CHECK(kernel_of(sgemm, misaligned).va == 1);
  CHECK(kernel_of(dgemm_nt, shape(dgemm_nt, 130, 66, 40)).va == 2);  // the generic kernel has vector loads
  CHECK(kernel_of(sgemm_det, shape(sgemm_det, 96, 80, 2048)).kg == 4);
  CHECK(kernel_of(sgemm_det, shape(sgemm_det, 50, 40, 300)).kg == 2);
  CHECK(aot_test::sgemm_det_workspace_bytes(96, 80, 2048) == 4u * 96 * 80 * 4);
  CHECK(aot_test::sgemm_det_workspace_bytes(50, 40, 300) == 4u * 50 * 40 * 2);
}

TEST_CASE("AOT: a shape outside the export is refused with what was exported") {
  const Call x = shape(only_exact, 65, 64, 64);
  CHECK(only_exact.select(x) == nullptr);
  CHECK(only_exact.run(nullptr, x) == aot_test::status::not_exported);
  const std::string message = aot_test::last_error();
  CHECK_MESSAGE(message.find("only_exact (f32 NN): no exported kernel takes M=65 N=64 K=64") != std::string::npos, message);
  CHECK_MESSAGE(message.find("Exported shapes (M x N x K): 64x64x64.") != std::string::npos, message);
  CHECK_MESSAGE(message.find("There is no generic entry") != std::string::npos, message);
  CHECK(std::string(aot_test::to_string(aot_test::status::not_exported)) == "no exported kernel for this shape");

  // A generic kernel still has the limits of its parameters, checked at run time.
  CHECK(dgemm_nt.run(nullptr, shape(dgemm_nt, 131, 66, 40)) == aot_test::status::not_exported);
  CHECK_MESSAGE(std::string(aot_test::last_error()).find("VA=2 vector loads need M=131") != std::string::npos,
                aot_test::last_error());
  CHECK(sgemm_det.run(nullptr, shape(sgemm_det, 50, 40, 8)) == aot_test::status::not_exported);
  CHECK_MESSAGE(std::string(aot_test::last_error()).find("KG=2 splits K=8 into more pieces than its 1 tiles of U=8") !=
                    std::string::npos,
                aot_test::last_error());
}

TEST_CASE("AOT: invalid arguments are refused before anything runs") {
  auto refused = [](const Function& f, Call x, const char* expected) {
    INFO(f.name << ": " << expected);
    CHECK(f.run(nullptr, x) == aot_test::status::invalid_argument);
    CHECK_MESSAGE(std::string(aot_test::last_error()).find(expected) != std::string::npos, aot_test::last_error());
  };
  Call x = shape(sgemm, 100, 37, 50);
  x.lda = 99;
  refused(sgemm, x, "lda=99 must be at least M=100");
  x = shape(hgemm_tn, 100, 37, 50);
  x.lda = 49;
  refused(hgemm_tn, x, "lda=49 must be at least K=50");
  x = shape(sgemm, 100, 37, 50);
  x.c = 0;
  refused(sgemm, x, "a null operand");
  refused(sgemm, shape(sgemm, -1, 37, 50), "may not be negative");
  refused(sgemm, shape(sgemm, std::int64_t(1) << 31, 1, 1), "must each be below 2^31");
  x = shape(sgemm_det, 96, 80, 2048);
  x.workspace_bytes = aot_test::sgemm_det_workspace_bytes(96, 80, 2048) - 1;
  refused(sgemm_det, x, "needs an 8-byte aligned workspace of 122880 bytes");

  // An empty C is nothing to compute, as in BLAS: no operand is looked at.
  Call empty = shape(sgemm, 0, 37, 50);
  empty.a = empty.b = empty.c = 0;
  CHECK(sgemm.run(nullptr, empty) == aot_test::status::success);
}

#ifdef ISAAC_AOT_TEST_CPU_ONLY

TEST_CASE("AOT: without a CUDA driver a valid call says so") {
  std::string why;
  if (runtime::driver_available(&why)) {
    MESSAGE("a CUDA driver is here: test_gpu_aot covers the launches");
    return;
  }
  CHECK(aot_test::driver() == nullptr);
  CHECK(sgemm.run(nullptr, shape(sgemm, 100, 37, 50)) == aot_test::status::no_driver);
  const std::string message = aot_test::last_error();
  CHECK_MESSAGE(message.rfind("sgemm: ", 0) == 0, message);
  CHECK_MESSAGE((message.find("no CUDA driver") != std::string::npos ||
                 message.find("cuInit failed") != std::string::npos),
                message);
}

#else  // the GPU half: test_gpu_aot

namespace {

// Random operands of the call's shape; C's result from the header and from CompiledGemm.
struct Operands {
  ir::Gemm g;
  HostArray a, b, c;
  runtime::Buffer da, db, dc, workspace;

  Operands(const Function& f, const Call& x, std::mt19937_64& rng, bool integers)
      : g(gemm_of(f, x)),
        a(f.dtype, ir::gemm_storage(g).a),
        b(f.dtype, ir::gemm_storage(g).b),
        c(f.dtype, ir::gemm_storage(g).c),
        da(a.bytes.size()),
        db(b.bytes.size()),
        dc(c.bytes.size()) {
    // KG > 1 with atomics adds its partial sums in an order that varies from run to run: small
    // integers make every order exact, so the two results can still be compared bit for bit.
    std::uniform_int_distribution<int> small(-4, 4);
    for (HostArray* h : {&a, &b, &c}) {
      if (integers) {
        for (std::size_t i = 0; i < h->size(); ++i) h->set(i, small(rng));
      } else {
        h->fill_random(rng);
      }
    }
    da.upload(a.bytes.data(), a.bytes.size());
    db.upload(b.bytes.data(), b.bytes.size());
  }

  static ir::Gemm gemm_of(const Function& f, const Call& x) {
    ir::Gemm g = ir::dense_gemm(f.dtype, x.m, x.n, x.k, f.a_trans, f.b_trans);
    g.lda = x.lda, g.ldb = x.ldb, g.ldc = x.ldc;
    return g;
  }

  Call bind(Call x) {
    x.a = da.ptr(), x.b = db.ptr(), x.c = dc.ptr();
    return x;
  }
};

// Runs the call through the header and through CompiledGemm with the kernel's parameters, on the
// same data and stream, and checks that the two results are the same bits.
void compare(const Function& f, Call x, std::mt19937_64& rng, const char* expect_params = nullptr) {
  const bool integers = f.mode == lower::SplitMode::atomic && kernel_of(f, shape(f, x.m, x.n, x.k)).kg > 1;
  Operands ops(f, x, rng, integers);
  x = ops.bind(x);
  const aot_test::kernel_info& k = kernel_of(f, x);
  INFO(f.name << " " << ir::to_string(ops.g) << " alpha=" << x.alpha << " beta=" << x.beta << " kernel " << k.params);
  if (expect_params) CHECK(std::string(k.params) == expect_params);
  if (const std::size_t bytes = f.workspace_bytes(x)) {
    ops.workspace = runtime::Buffer(bytes);
    x.workspace = ops.workspace.ptr(), x.workspace_bytes = bytes;
  }
  if (x.beta == 0)  // then C is not read: NaNs there must not reach the result
    for (std::size_t i = 0; i < ops.c.size(); ++i) ops.c.set(i, std::nan(""));
  runtime::Stream stream;
  const auto handle = static_cast<aot_test::stream_t>(stream.handle());

  ops.dc.upload(ops.c.bytes.data(), ops.c.bytes.size());
  REQUIRE_MESSAGE(f.run(handle, x) == aot_test::status::success, aot_test::last_error());
  stream.synchronize();
  std::vector<unsigned char> from_header(ops.c.bytes.size());
  ops.dc.download(from_header.data(), from_header.size());

  const CompiledGemm jit(ops.g, lower::parse_gemm_params(k.params), f.mode);
  ops.dc.upload(ops.c.bytes.data(), ops.c.bytes.size());
  jit.run(ops.g, ops.dc.ptr(), ops.da.ptr(), ops.db.ptr(), x.alpha, x.beta, stream);
  stream.synchronize();
  std::vector<unsigned char> from_jit(ops.c.bytes.size());
  ops.dc.download(from_jit.data(), from_jit.size());

  CHECK_MESSAGE(from_header != ops.c.bytes, "C is unchanged: nothing ran");
  HostArray result(f.dtype, static_cast<std::int64_t>(ops.c.size()));
  result.bytes = from_header;
  std::size_t nans = 0;
  for (std::size_t i = 0; i < result.size(); ++i) nans += std::isnan(result.get(i));
  CHECK_MESSAGE(nans == 0, nans << " elements of C are NaN");
  std::size_t differ = 0, first = 0;
  const std::size_t elem = ir::size_of(f.dtype);
  for (std::size_t i = 0; i < ops.c.size(); ++i)
    if (std::memcmp(&from_header[i * elem], &from_jit[i * elem], elem) && differ++ == 0) first = i;
  CHECK_MESSAGE(differ == 0, differ << " of " << ops.c.size() << " elements of C differ from the JIT path's, first at "
                                    << first);
}

// The header's cubins and PTX are for sm_90: an older GPU cannot load them.
bool can_load_sm90() {
  const int cc = runtime::device_info(0).compute_capability();
  if (cc >= 90) return true;
  MESSAGE("the header was exported for sm_90; this GPU is sm_" << cc);
  return false;
}

}  // namespace

TEST_CASE("AOT: threads that load a kernel at the same time all get it") {
  if (!can_load_sm90()) return;
  // The first test case to launch only_exact: the threads race to load its kernel.
  std::mt19937_64 rng(9);
  std::vector<Operands> operands;
  operands.reserve(4);
  for (int t = 0; t < 4; ++t) operands.emplace_back(only_exact, shape(only_exact, 64, 64, 64), rng, false);
  for (Operands& o : operands) o.dc.upload(o.c.bytes.data(), o.c.bytes.size());
  std::vector<aot_test::status> statuses(4, aot_test::status::load_failed);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      runtime::use_device(0);  // the primary context, current on this thread
      statuses[t] = only_exact.run(nullptr, operands[t].bind(shape(only_exact, 64, 64, 64)));
    });
  for (std::thread& t : threads) t.join();
  runtime::use_device(0);
  const lower::GemmParams params = lower::parse_gemm_params(kernel_of(only_exact, shape(only_exact, 64, 64, 64)).params);
  for (int t = 0; t < 4; ++t) {
    CHECK(statuses[t] == aot_test::status::success);
    std::vector<unsigned char> result(operands[t].c.bytes.size());
    operands[t].dc.download(result.data(), result.size());
    const CompiledGemm jit(operands[t].g, params);
    std::vector<unsigned char> expected(result.size());
    runtime::Stream stream;
    operands[t].dc.upload(operands[t].c.bytes.data(), operands[t].c.bytes.size());
    jit.run(operands[t].g, operands[t].dc.ptr(), operands[t].da.ptr(), operands[t].db.ptr(), 1.5, -0.5, stream);
    stream.synchronize();
    operands[t].dc.download(expected.data(), expected.size());
    CHECK(result == expected);
  }
}

TEST_CASE("AOT: every exported kernel matches the JIT path bit for bit") {
  if (!can_load_sm90()) return;
  std::mt19937_64 rng(8);
  compare(sgemm, shape(sgemm, 256, 192, 96), rng, aot_test::kernels[0].params);
  compare(sgemm, shape(sgemm, 256, 192, 96, 1), rng, aot_test::kernels[1].params);  // padded: the generic kernel
  compare(sgemm, shape(sgemm, 100, 37, 50), rng);
  compare(dgemm_nt, shape(dgemm_nt, 512, 512, 32), rng);
  compare(dgemm_nt, shape(dgemm_nt, 130, 66, 40, 2), rng);
  compare(hgemm_tn, shape(hgemm_tn, 128, 128, 64), rng);
  compare(hgemm_tn, shape(hgemm_tn, 70, 33, 20), rng);
  compare(bgemm_nt, shape(bgemm_nt, 128, 128, 64), rng);
  compare(bgemm_nt, shape(bgemm_nt, 70, 33, 20), rng);
  compare(sgemm_det, shape(sgemm_det, 96, 80, 2048), rng);
  compare(sgemm_det, shape(sgemm_det, 50, 40, 300, 3), rng);
  compare(sgemm_atomic, shape(sgemm_atomic, 64, 48, 1024), rng);
  Call beta_zero = shape(only_exact, 64, 64, 64);
  beta_zero.beta = 0;
  compare(only_exact, beta_zero, rng);
}

TEST_CASE("AOT: a thread without a current context is told so") {
  aot_test::status status = aot_test::status::success;
  std::string message;
  runtime::Buffer buffer(64 * 64 * 4);
  std::thread([&] {
    Call x = shape(only_exact, 64, 64, 64);
    x.a = x.b = x.c = buffer.ptr();
    status = only_exact.run(nullptr, x);
    message = aot_test::last_error();
  }).join();
  CHECK(status == aot_test::status::no_context);
  CHECK_MESSAGE(message.find("no CUDA context is current on the calling thread") != std::string::npos, message);
}

#endif
