// cuDNN's graph (backend) API: the engines its heuristics list for a forward convolution, each
// finalized and timed. The legacy API's cudnnFind does not reach these engines: on the H200 they ran
// the paper's f16 problems up to 5x faster (round 58), as PyTorch, which uses them, does.
#include "cudnn.hpp"

#include <isaac/runtime/timer.hpp>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace isaac::bench {

namespace {

// The graph API marks its handle attributes deprecated in favour of device properties; the handle
// still binds the graph and plans to this process's device, as the heuristics need.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr cudnnBackendAttributeName_t graph_handle = CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
constexpr cudnnBackendAttributeName_t plan_handle = CUDNN_ATTR_EXECUTION_PLAN_HANDLE;
#pragma GCC diagnostic pop

// An owned backend descriptor.
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) { CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_)); }
  ~Descriptor() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Descriptor(Descriptor&& other) noexcept : d_(std::exchange(other.d_, nullptr)) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor& operator=(Descriptor&&) = delete;

  cudnnBackendDescriptor_t get() const { return d_; }
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count, const void* values) {
    CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values));
  }
  void set(cudnnBackendAttributeName_t name, const Descriptor& value) {
    cudnnBackendDescriptor_t raw = value.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  }
  void finalize() { CUDNN_CHECK(cudnnBackendFinalize(d_)); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

Descriptor tensor(std::int64_t uid, cudnnDataType_t type, std::array<std::int64_t, 4> dims,
                  std::array<std::int64_t, 4> strides) {
  Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::int64_t alignment = 16;
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  t.finalize();
  return t;
}

// Whether an engine computes as isaac's kernels of this dtype may: f32 and f64 without tensor cores
// (TF32) or inputs converted down, and no dtype with partial sums kept in less than f32.
bool comparable(cudnnBackendDescriptor_t engine, ir::DType t) {
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  std::int64_t count = 0;
  CUDNN_CHECK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                       std::int64_t(notes.size()), &count, notes.data()));
  for (std::int64_t i = 0; i < count; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) return false;
    if (!ir::is_16_bit(t) &&
        (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE || notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))
      return false;
  }
  return true;
}

}  // namespace

CudnnBest cudnn_graph_best(const ir::Conv& v, const Operands& ops, const runtime::Buffer& workspace,
                           cudnnHandle_t handle, const runtime::Stream& stream) {
  const bool f64 = v.dtype == ir::DType::f64;
  const cudnnDataType_t data = cudnn_data_type(v.dtype), compute = f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const Descriptor x = tensor(1, data, {v.n, v.c, v.h, v.w}, v.input_strides);
  const Descriptor w = tensor(2, data, {v.k, v.c, v.r, v.s}, v.filter_strides);
  const Descriptor y = tensor(3, data, {v.n, v.k, v.p, v.q}, v.output_strides);

  Descriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::int64_t spatial = 2;
  const std::array<std::int64_t, 2> stride{v.stride_h, v.stride_w}, dilation{v.dilation_h, v.dilation_w},
      padding{v.pad_h, v.pad_w};
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, padding.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, padding.data());
  conv.finalize();

  Descriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
  const float one = 1, zero = 0;
  const double one64 = 1, zero64 = 0;
  const cudnnBackendAttributeType_t scalar = f64 ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scalar, 1, f64 ? static_cast<const void*>(&one64) : &one);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scalar, 1, f64 ? static_cast<const void*>(&zero64) : &zero);
  op.finalize();

  Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(graph_handle, CUDNN_TYPE_HANDLE, 1, &handle);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, op);
  graph.finalize();

  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  void* pointers[] = {reinterpret_cast<void*>(ops.in.ptr()), reinterpret_cast<void*>(ops.filter.ptr()),
                      reinterpret_cast<void*>(ops.out.ptr())};
  const std::int64_t uids[] = {1, 2, 3};
  void* workspace_pointer = reinterpret_cast<void*>(workspace.ptr());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace_pointer);
  pack.finalize();

  CudnnBest best{1e30, "none"};
  const std::pair<cudnnBackendHeurMode_t, const char*> modes[] = {
      {CUDNN_HEUR_MODE_A, "A"}, {CUDNN_HEUR_MODE_B, "B"}, {CUDNN_HEUR_MODE_FALLBACK, "fallback"}};
  for (auto [heur_mode, mode_name] : modes) {
    Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
    if (cudnnBackendFinalize(heuristics.get()) != CUDNN_STATUS_SUCCESS) continue;  // a mode may not apply
    std::int64_t listed = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &listed, nullptr));
    listed = std::min<std::int64_t>(listed, graph_configs_per_mode);
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (std::int64_t i = 0; i < listed; ++i) raw.push_back(configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR).get());
    CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, listed, &listed, raw.data()));
    for (std::int64_t i = 0; i < listed; ++i) {
      Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      cudnnBackendDescriptor_t engine_raw = engine.get();
      std::int64_t got = 0, index = -1;
      CUDNN_CHECK(cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                           &got, &engine_raw));
      CUDNN_CHECK(cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got,
                                           &index));
      if (!comparable(engine_raw, v.dtype)) continue;
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set(plan_handle, CUDNN_TYPE_HANDLE, 1, &handle);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[i]);
      if (cudnnBackendFinalize(plan.get()) != CUDNN_STATUS_SUCCESS) continue;  // not for this problem
      std::int64_t workspace_bytes = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &got, &workspace_bytes));
      if (workspace_bytes > static_cast<std::int64_t>(workspace.bytes())) continue;
      if (cudnnBackendExecute(handle, plan.get(), pack.get()) != CUDNN_STATUS_SUCCESS) continue;
      const auto timing = runtime::time_on_stream(
          [&](const runtime::Stream&) { CUDNN_CHECK(cudnnBackendExecute(handle, plan.get(), pack.get())); }, stream);
      if (timing.median_ms < best.ms)
        best = {timing.median_ms, fmt::format("graph engine {} (heuristics {}, #{})", index, mode_name, i)};
    }
  }
  return best;
}

}  // namespace isaac::bench
