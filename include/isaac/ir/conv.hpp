#pragma once
// The CONV description that pattern analysis produces and the CONV code generator takes.
//
// For each image n, output channel k and output pixel (p, q):
//   O(n, k, p, q) = alpha * sum_{c, r, s} I(n, c, h, w) * F(k, c, r, s) + beta * O(n, k, p, q)
//   with h = p * stride_h + r * dilation_h - pad_h, w = q * stride_w + s * dilation_w - pad_w,
// and taps outside 0 <= h < H, 0 <= w < W reading zero. P and Q are given, not derived: the padding
// after the last row follows from H, P and the rest (output_size() gives the usual P).
// As implicit GEMM: M = N*P*Q rows, N = K columns, a reduction over C*R*S (implicit_gemm()).
//
// Layouts name the order of the dimensions in memory, outermost first; the output uses the input's
// spelling (NCHW: n, k, p, q). Where dimensions of extent 1 make several layouts describe the same
// memory (c = 1, or r = s = 1), pattern analysis reports the first in enumeration order. The strides are in elements, in logical order, whatever the layout:
// input (n, c, h, w), filter (k, c, r, s), output (n, k, p, q).
#include <isaac/ir/dtype.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace isaac::ir {

enum class ImageLayout { nchw, chwn, nhwc };
enum class FilterLayout { kcrs, crsk, krsc };

struct Conv {
  DType dtype = DType::f32;  // of input, filter and output
  std::int64_t n = 1, c = 1, h = 1, w = 1;
  std::int64_t k = 1, p = 1, q = 1, r = 1, s = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  ImageLayout input_layout = ImageLayout::nchw, output_layout = ImageLayout::nchw;
  FilterLayout filter_layout = FilterLayout::kcrs;
  std::array<std::int64_t, 4> input_strides{}, filter_strides{}, output_strides{};
  int align_input = 16, align_filter = 16, align_output = 16;  // bytes, as in ir::Gemm
  bool operator==(const Conv&) const = default;
};

struct ImplicitGemm {
  std::int64_t m = 0, n = 0, k = 0;  // N*P*Q, K, C*R*S
};
// Throws InvalidArgument when N*P*Q or C*R*S is beyond int64.
ImplicitGemm implicit_gemm(const Conv& conv);

std::string_view name(ImageLayout layout);   // "NCHW", "CHWN", "NHWC"
std::string_view name(FilterLayout layout);  // "KCRS", "CRSK", "KRSC"
ImageLayout parse_image_layout(std::string_view text);    // either case; throws InvalidArgument
FilterLayout parse_filter_layout(std::string_view text);

// The usual output size: (in + 2 * pad - dilation * (filter - 1) - 1) / stride + 1. Throws
// InvalidArgument unless in, filter, stride and dilation are at least 1, pad at least 0, and the
// dilated filter fits the padded input (an output of at least 1).
std::int64_t output_size(std::int64_t in, std::int64_t filter, std::int64_t stride, std::int64_t pad,
                         std::int64_t dilation);
// Dense strides, in logical order, of a tensor of the given logical extents stored in `layout`.
// Throws InvalidArgument when a stride is beyond int64.
std::array<std::int64_t, 4> dense_strides(ImageLayout layout, std::array<std::int64_t, 4> nchw);
std::array<std::int64_t, 4> dense_strides(FilterLayout layout, std::array<std::int64_t, 4> kcrs);

// A convolution with P and Q from output_size(), dense tensors and 16-byte aligned operands. Throws
// InvalidArgument as output_size() does, for a size below 1, and when a tensor's element count or
// the implicit GEMM's sizes are beyond int64.
Conv dense_conv(DType dtype, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k,
                std::int64_t r, std::int64_t s, std::int64_t stride = 1, std::int64_t pad = 0,
                std::int64_t dilation = 1, ImageLayout image_layout = ImageLayout::nchw,
                FilterLayout filter_layout = FilterLayout::kcrs);

// "f32 NCHW/KCRS/NCHW n=16 c=1 h=83 w=360 k=32 p=79 q=341 r=5 s=20 stride=1,1 pad=0,0 dilation=1,1"
std::string to_string(const Conv& conv);

}  // namespace isaac::ir
