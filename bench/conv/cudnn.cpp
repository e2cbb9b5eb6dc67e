#include "cudnn.hpp"

#include <isaac/error.hpp>
#include <isaac/runtime/timer.hpp>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

namespace isaac::bench {


cudnnDataType_t cudnn_data_type(ir::DType t) {
  switch (t) {
    case ir::DType::f16: return CUDNN_DATA_HALF;
    case ir::DType::bf16: return CUDNN_DATA_BFLOAT16;
    case ir::DType::f32: return CUDNN_DATA_FLOAT;
    case ir::DType::f64: return CUDNN_DATA_DOUBLE;
  }
  throw InvalidArgument(fmt::format("no cuDNN data type for {}", ir::name(t)));
}

CudnnBest cudnn_best(const Problem& pr, ir::DType t, cudnnTensorFormat_t format, const runtime::Stream& stream) {
  ir::Conv v = make_conv(pr, t, format == CUDNN_TENSOR_NCHW ? ir::ImageLayout::nchw : ir::ImageLayout::nhwc,
                         format == CUDNN_TENSOR_NCHW ? ir::FilterLayout::kcrs : ir::FilterLayout::krsc);
  const bool tensor_cores = ir::is_16_bit(t);
  const cudnnDataType_t data = cudnn_data_type(t);
  cudnnDataType_t compute = t == ir::DType::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, format, data, v.n, v.c, v.h, v.w));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, format, data, v.n, v.k, v.p, v.q));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, data, format, v.k, v.c, v.r, v.s));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, compute));
  Operands ops(v);
  std::size_t ws_bytes = std::size_t(512) << 20;
  runtime::Buffer ws(ws_bytes);
  float one = 1, zero = 0;
  double one64 = 1, zero64 = 0;
  const void* alpha = t == ir::DType::f64 ? static_cast<const void*>(&one64) : &one;
  const void* beta = t == ir::DType::f64 ? static_cast<const void*>(&zero64) : &zero;
  CudnnBest best{1e30, "none"};
  for (int find = 0; find < cudnn_finds; ++find) {
    // FP32: FMA math, no TF32 (isaac computes in FP32 FFMA); f16 and bf16: tensor cores allowed.
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv, tensor_cores ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    cudnnHandle_t handle;
    CUDNN_CHECK(cudnnCreate(&handle));
    cudnnConvolutionFwdAlgoPerf_t perf[16];
    int returned = 0;
    CUDNN_CHECK(cudnnSetStream(handle, static_cast<cudaStream_t>(stream.handle())));
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
        handle, x, reinterpret_cast<void*>(ops.in.ptr()), w, reinterpret_cast<void*>(ops.filter.ptr()), conv, y,
        reinterpret_cast<void*>(ops.out.ptr()), 16, &returned, perf, reinterpret_cast<void*>(ws.ptr()), ws_bytes));
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > ws_bytes) continue;
      if (!tensor_cores && perf[i].mathType == CUDNN_TENSOR_OP_MATH) continue;
      // f16 and bf16: the math type that Find timed this algorithm with (the descriptor's may differ
      // from it); f32 and f64 stay on FMA math, without TF32.
      if (tensor_cores) CUDNN_CHECK(cudnnSetConvolutionMathType(conv, perf[i].mathType));
      auto timing = runtime::time_on_stream(
          [&](const runtime::Stream&) {
            CUDNN_CHECK(cudnnConvolutionForward(handle, alpha, x, reinterpret_cast<void*>(ops.in.ptr()), w,
                                                reinterpret_cast<void*>(ops.filter.ptr()), conv, perf[i].algo,
                                                reinterpret_cast<void*>(ws.ptr()), ws_bytes, beta, y,
                                                reinterpret_cast<void*>(ops.out.ptr())));
          },
          stream);
      if (timing.median_ms < best.ms)
        best = {timing.median_ms, fmt::format("{} algo {}", format == CUDNN_TENSOR_NCHW ? "NCHW" : "NHWC",
                                              static_cast<int>(perf[i].algo))};
    }
    // The graph API once: its heuristics list the same engines each time. Its failure leaves cuDNN
    // at the legacy API's time, which may be far slower: say so.
    if (find == 0) try {
        const CudnnBest graph = cudnn_graph_best(v, ops, ws, handle, stream);
        if (graph.ms < best.ms)
          best = {graph.ms, fmt::format("{} {}", format == CUDNN_TENSOR_NCHW ? "NCHW" : "NHWC", graph.how)};
      } catch (const std::exception& e) {
        fmt::print(stderr, "warning: cuDNN's graph API failed on {}: {}\n", ir::to_string(v), e.what());
      }
    cudnnDestroy(handle);
  }
  cudnnDestroyTensorDescriptor(x);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyConvolutionDescriptor(conv);
  return best;
}

}  // namespace isaac::bench
