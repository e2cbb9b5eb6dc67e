#include <isaac/ir/features.hpp>

#include <initializer_list>

namespace isaac::ir {

namespace {

// The widest access along the contiguous dimension, in bytes and at most 16, that stays aligned at
// every start of it: the largest power of two dividing the base alignment and each other stride in
// bytes (unit strides are the contiguous dimension itself, zero strides never move).
double vector_bytes(int base_align, DType dtype, std::initializer_list<std::int64_t> strides) {
  int width = base_align;
  for (std::int64_t stride : strides) {
    if (stride == 1 || stride == 0) continue;
    // Modulo 2^64, which every width divides: exact divisibility, and no overflow for huge strides.
    const std::uint64_t bytes = static_cast<std::uint64_t>(stride) * size_of(dtype);
    while (width > 1 && bytes % static_cast<std::uint64_t>(width) != 0) width /= 2;
  }
  return width;
}

}  // namespace

InputFeatures input_features(const Gemm& g) {
  const std::int64_t batch_a = g.batch > 1 ? g.stride_a : 0, batch_b = g.batch > 1 ? g.stride_b : 0,
                     batch_c = g.batch > 1 ? g.stride_c : 0;
  return {{"m", "n", "k", "batch", "dtype_bytes", "a_trans", "b_trans", "vector_a", "vector_b", "vector_c"},
          {double(g.m), double(g.n), double(g.k), double(g.batch), double(size_of(g.dtype)), double(g.a_trans),
           double(g.b_trans), vector_bytes(g.align_a, g.dtype, {g.lda, batch_a}),
           vector_bytes(g.align_b, g.dtype, {g.ldb, batch_b}), vector_bytes(g.align_c, g.dtype, {g.ldc, batch_c})}};
}

InputFeatures input_features(const Conv& conv) {
  auto vector = [&](int align, const std::array<std::int64_t, 4>& strides) {
    return vector_bytes(align, conv.dtype, {strides[0], strides[1], strides[2], strides[3]});
  };
  return {{"n", "c", "h", "w", "k", "p", "q", "r", "s", "stride_h", "stride_w", "pad_h", "pad_w", "dilation_h",
           "dilation_w", "dtype_bytes", "input_layout", "filter_layout", "output_layout", "vector_input",
           "vector_filter", "vector_output"},
          {double(conv.n), double(conv.c), double(conv.h), double(conv.w), double(conv.k), double(conv.p),
           double(conv.q), double(conv.r), double(conv.s), double(conv.stride_h), double(conv.stride_w),
           double(conv.pad_h), double(conv.pad_w), double(conv.dilation_h), double(conv.dilation_w),
           double(size_of(conv.dtype)), double(static_cast<int>(conv.input_layout)),
           double(static_cast<int>(conv.filter_layout)), double(static_cast<int>(conv.output_layout)),
           vector(conv.align_input, conv.input_strides), vector(conv.align_filter, conv.filter_strides),
           vector(conv.align_output, conv.output_strides)}};
}

}  // namespace isaac::ir
