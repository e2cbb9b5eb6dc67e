#include "cublas.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace isaac::bench {

std::string cublas_status_text(int status) {
  auto s = static_cast<cublasStatus_t>(status);
  return fmt::format("{} ({})", cublasGetStatusName(s), cublasGetStatusString(s));
}

namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw BenchError(fmt::format("{} failed: {}", what, cublas_status_text(status)));
}

cudaStream_t cuda_stream(const runtime::Stream& s) { return static_cast<cudaStream_t>(s.handle()); }

struct Types {
  cudaDataType data;
  cublasComputeType_t compute;
  cudaDataType scale;
};

Types types_of(ir::DType d) {
  switch (d) {
    case ir::DType::f32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};  // no TF32: not _FAST_TF32
    case ir::DType::f16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};  // f32 accumulation
    case ir::DType::bf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case ir::DType::f64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    default:
      break;
  }
  throw BenchError(fmt::format("cuBLAS baseline: dtype {} is not benchmarked", ir::name(d)));
}

// alpha = 1, beta = 0 in the scale type.
struct Scalars {
  float f_one = 1.0f, f_zero = 0.0f;
  double d_one = 1.0, d_zero = 0.0;
  const void* one(ir::DType d) const { return d == ir::DType::f64 ? static_cast<const void*>(&d_one) : &f_one; }
  const void* zero(ir::DType d) const { return d == ir::DType::f64 ? static_cast<const void*>(&d_zero) : &f_zero; }
};
const Scalars scalars;

int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw BenchError(fmt::format("cuBLAS baseline: {}={} does not fit cublasGemmEx's int", what, v));
  return static_cast<int>(v);
}

void* ptr(runtime::DevicePtr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }

// What gemm_ex calls for `g`.
const char* gemm_ex_name(const ir::Gemm& g) { return g.batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx"; }

// A cuBLASLt layout of `rows` x `cols`, column-major with leading dimension `ld`; for a batch, with its
// count and the stride between its matrices.
void create_layout(cublasLtMatrixLayout_t& layout, cudaDataType type, std::int64_t rows, std::int64_t cols,
                   std::int64_t ld, std::int64_t batch, std::int64_t stride, const char* what) {
  check(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld),
        fmt::format("cublasLtMatrixLayoutCreate({})", what).c_str());
  if (batch == 1) return;
  const std::int32_t count = as_int(batch, "batch");
  check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
        fmt::format("cublasLtMatrixLayoutSetAttribute({}, BATCH_COUNT)", what).c_str());
  check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
        fmt::format("cublasLtMatrixLayoutSetAttribute({}, STRIDED_BATCH_OFFSET)", what).c_str());
}

// The descriptors of one cuBLASLt matmul, destroyed with it.
struct LtPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

}  // namespace

struct Cublas::State {
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  std::size_t workspace_bytes = 0;
  runtime::Buffer workspace_blas, workspace_lt;
};

Cublas::Cublas(std::size_t workspace_bytes) : s_(std::make_unique<State>()) {
  // cuBLAS works in the device's primary context, the one isaac uses: make it current first.
  runtime::use_device(0);
  s_->workspace_bytes = workspace_bytes;
  s_->workspace_blas = runtime::Buffer(workspace_bytes);
  s_->workspace_lt = runtime::Buffer(workspace_bytes);
  try {
    check(cublasCreate(&s_->handle), "cublasCreate");
    check(cublasLtCreate(&s_->lt), "cublasLtCreate");
    // The default math mode: with CUBLAS_COMPUTE_32F no TF32 (and no emulation); f16 uses tensor cores.
    check(cublasSetMathMode(s_->handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode(CUBLAS_DEFAULT_MATH)");
    check(cublasSetWorkspace(s_->handle, ptr(s_->workspace_blas.ptr()), workspace_bytes), "cublasSetWorkspace");
  } catch (...) {
    if (s_->lt) cublasLtDestroy(s_->lt);
    if (s_->handle) cublasDestroy(s_->handle);
    throw;
  }
}

Cublas::~Cublas() {
  if (!s_) return;
  if (s_->lt) cublasLtDestroy(s_->lt);
  if (s_->handle) cublasDestroy(s_->handle);
}

std::string Cublas::version() const {
  int v = 0;
  check(cublasGetVersion(s_->handle, &v), "cublasGetVersion");
  return fmt::format("cuBLAS {}.{}.{}, cuBLASLt {}", v / 10000, (v / 100) % 100, v % 100, cublasLtGetVersion());
}

void Cublas::gemm_ex(const ir::Gemm& g, runtime::DevicePtr c, runtime::DevicePtr a, runtime::DevicePtr b,
                     const runtime::Stream& stream) {
  Types t = types_of(g.dtype);
  check(cublasSetStream(s_->handle, cuda_stream(stream)), "cublasSetStream");
  const cublasOperation_t ta = g.a_trans ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.b_trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (g.batch == 1) {
    check(cublasGemmEx(s_->handle, ta, tb, as_int(g.m, "m"), as_int(g.n, "n"), as_int(g.k, "k"), scalars.one(g.dtype),
                       ptr(a), t.data, as_int(g.lda, "lda"), ptr(b), t.data, as_int(g.ldb, "ldb"),
                       scalars.zero(g.dtype), ptr(c), t.data, as_int(g.ldc, "ldc"), t.compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
    return;
  }
  check(cublasGemmStridedBatchedEx(s_->handle, ta, tb, as_int(g.m, "m"), as_int(g.n, "n"), as_int(g.k, "k"),
                                   scalars.one(g.dtype), ptr(a), t.data, as_int(g.lda, "lda"), g.stride_a, ptr(b),
                                   t.data, as_int(g.ldb, "ldb"), g.stride_b, scalars.zero(g.dtype), ptr(c), t.data,
                                   as_int(g.ldc, "ldc"), g.stride_c, as_int(g.batch, "batch"), t.compute,
                                   CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

BaselineResult Cublas::best(const ir::Gemm& g, runtime::DevicePtr c, runtime::DevicePtr a, runtime::DevicePtr b,
                            const runtime::Stream& stream, const runtime::TimingOptions& timing, int requested) {
  BaselineResult result;
  result.median_ms = std::numeric_limits<double>::infinity();
  auto consider = [&](const std::string& which, double ms) {
    result.notes.push_back(fmt::format("{} {:.4f} ms", which, ms));
    if (ms < result.median_ms) {
      result.median_ms = ms;
      result.which = which;
    }
  };

  try {
    auto t = runtime::time_on_stream([&](const runtime::Stream& s) { gemm_ex(g, c, a, b, s); }, stream, timing);
    consider(gemm_ex_name(g), t.median_ms);
  } catch (const std::exception& e) {
    result.notes.push_back(fmt::format("{} could not run: {}", gemm_ex_name(g), e.what()));
  }

  // cuBLASLt: column-major layouts of the matrices as stored (A is KxM when transposed, B is NxK), with
  // the batch's count and strides.
  Types t = types_of(g.dtype);
  LtPlan plan;
  std::vector<cublasLtMatmulHeuristicResult_t> heuristics(static_cast<std::size_t>(std::max(requested, 1)));
  int returned = 0;
  try {
    check(cublasLtMatmulDescCreate(&plan.op, t.compute, t.scale), "cublasLtMatmulDescCreate");
    cublasOperation_t ta = g.a_trans ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.b_trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
          "cublasLtMatmulDescSetAttribute(TRANSA)");
    check(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
          "cublasLtMatmulDescSetAttribute(TRANSB)");
    create_layout(plan.a, t.data, g.a_trans ? g.k : g.m, g.a_trans ? g.m : g.k, g.lda, g.batch, g.stride_a, "A");
    create_layout(plan.b, t.data, g.b_trans ? g.n : g.k, g.b_trans ? g.k : g.n, g.ldb, g.batch, g.stride_b, "B");
    create_layout(plan.c, t.data, g.m, g.n, g.ldc, g.batch, g.stride_c, "C");
    check(cublasLtMatmulPreferenceCreate(&plan.pref), "cublasLtMatmulPreferenceCreate");
    std::uint64_t ws = s_->workspace_bytes;
    check(cublasLtMatmulPreferenceSetAttribute(plan.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    check(cublasLtMatmulAlgoGetHeuristic(s_->lt, plan.op, plan.a, plan.b, plan.c, plan.c, plan.pref,
                                         static_cast<int>(heuristics.size()), heuristics.data(), &returned),
          "cublasLtMatmulAlgoGetHeuristic");
  } catch (const std::exception& e) {
    result.notes.push_back(fmt::format("cuBLASLt gave no algorithm: {}", e.what()));
    returned = 0;
  }
  for (int i = 0; i < returned; ++i) {
    const auto& h = heuristics[static_cast<std::size_t>(i)];
    std::string which = fmt::format("cublasLt#{}", i);
    if (h.state != CUBLAS_STATUS_SUCCESS) {
      result.notes.push_back(fmt::format("{} skipped: heuristic state {}", which, cublas_status_text(h.state)));
      continue;
    }
    if (h.workspaceSize > s_->workspace_bytes) {
      result.notes.push_back(fmt::format("{} skipped: needs {} bytes of workspace", which, h.workspaceSize));
      continue;
    }
    try {
      auto timing_result = runtime::time_on_stream(
          [&](const runtime::Stream& s) {
            check(cublasLtMatmul(s_->lt, plan.op, scalars.one(g.dtype), ptr(a), plan.a, ptr(b), plan.b,
                                 scalars.zero(g.dtype), ptr(c), plan.c, ptr(c), plan.c, &h.algo,
                                 ptr(s_->workspace_lt.ptr()), s_->workspace_bytes, cuda_stream(s)),
                  "cublasLtMatmul");
          },
          stream, timing);
      consider(which, timing_result.median_ms);
    } catch (const std::exception& e) {
      result.notes.push_back(fmt::format("{} could not run: {}", which, e.what()));
    }
  }
  if (result.which.empty()) {
    std::string why;
    for (const auto& n : result.notes) why += "\n  " + n;
    throw BenchError(fmt::format("cuBLAS could not run {}:{}", ir::to_string(g), why));
  }
  return result;
}

}  // namespace isaac::bench
