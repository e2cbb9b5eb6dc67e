#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace isaac::ir {

namespace {

std::string upper(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return result;
}

constexpr std::int64_t max_int64 = std::numeric_limits<std::int64_t>::max();

// a * b, or nullopt where it leaves int64.
std::optional<std::int64_t> product(std::int64_t a, std::int64_t b) {
  std::int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// The product of `sizes`, named by `names` ("N x P x Q") in the error when it leaves int64.
std::int64_t checked_product(std::string_view what, std::string_view names, std::initializer_list<std::int64_t> sizes) {
  std::int64_t result = 1;
  for (std::int64_t size : sizes) {
    const auto next = product(result, size);
    if (!next)
      throw InvalidArgument(fmt::format("{} = {} = {} is beyond {}, the largest 64-bit size", what, names,
                                        fmt::join(sizes, " x "), max_int64));
    result = *next;
  }
  return result;
}

// Dense strides for logical dimensions stored in the memory order `order` (outermost first).
std::array<std::int64_t, 4> strides_in_order(std::array<int, 4> order, std::array<std::int64_t, 4> extents) {
  std::array<std::int64_t, 4> strides{};
  std::int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    strides[order[i]] = stride;
    if (i == 0) break;  // the size of the whole tensor is no stride: it may exceed int64 without harm here
    const auto next = product(stride, extents[order[i]]);
    if (!next)
      throw InvalidArgument(fmt::format("dense strides of extents [{}]: a stride is beyond {}, the largest 64-bit "
                                        "offset",
                                        fmt::join(extents, ","), max_int64));
    stride = *next;
  }
  return strides;
}

void check_window(std::int64_t stride, std::int64_t pad, std::int64_t dilation) {
  if (stride < 1 || dilation < 1 || pad < 0)
    throw InvalidArgument(fmt::format("stride {}, padding {}, dilation {}: the stride and the dilation must be at least "
                                      "1, the padding at least 0",
                                      stride, pad, dilation));
}

// The input as padded and the filter as dilated, along one dimension, for checked parameters.
struct Window {
  std::int64_t padded, dilated;
};

Window window(std::int64_t in, std::int64_t filter, std::int64_t pad, std::int64_t dilation) {
  Window w{};
  if (__builtin_mul_overflow(pad, 2, &w.padded) || __builtin_add_overflow(w.padded, in, &w.padded) ||
      __builtin_mul_overflow(dilation, filter - 1, &w.dilated) || __builtin_add_overflow(w.dilated, 1, &w.dilated))
    throw InvalidArgument(fmt::format("the input size {} padded by {}, or the filter size {} dilated by {}, is beyond "
                                      "{}, the largest 64-bit size",
                                      in, pad, filter, dilation, max_int64));
  return w;
}

}  // namespace

ImplicitGemm implicit_gemm(const Conv& conv) {
  return {checked_product("the implicit GEMM's M", "N x P x Q", {conv.n, conv.p, conv.q}), conv.k,
          checked_product("the implicit GEMM's K", "C x R x S", {conv.c, conv.r, conv.s})};
}

std::string_view name(ImageLayout layout) {
  switch (layout) {
    case ImageLayout::nchw: return "NCHW";
    case ImageLayout::chwn: return "CHWN";
    case ImageLayout::nhwc: return "NHWC";
  }
  return "?";
}

std::string_view name(FilterLayout layout) {
  switch (layout) {
    case FilterLayout::kcrs: return "KCRS";
    case FilterLayout::crsk: return "CRSK";
    case FilterLayout::krsc: return "KRSC";
  }
  return "?";
}

ImageLayout parse_image_layout(std::string_view text) {
  for (ImageLayout layout : {ImageLayout::nchw, ImageLayout::chwn, ImageLayout::nhwc})
    if (upper(text) == name(layout)) return layout;
  throw InvalidArgument(fmt::format("unknown image layout '{}': expected NCHW, CHWN or NHWC", text));
}

FilterLayout parse_filter_layout(std::string_view text) {
  for (FilterLayout layout : {FilterLayout::kcrs, FilterLayout::crsk, FilterLayout::krsc})
    if (upper(text) == name(layout)) return layout;
  throw InvalidArgument(fmt::format("unknown filter layout '{}': expected KCRS, CRSK or KRSC", text));
}

std::int64_t output_size(std::int64_t in, std::int64_t filter, std::int64_t stride, std::int64_t pad,
                         std::int64_t dilation) {
  check_window(stride, pad, dilation);
  if (in < 1 || filter < 1)
    throw InvalidArgument(fmt::format("input size {}, filter size {}: both must be at least 1", in, filter));
  const Window w = window(in, filter, pad, dilation);
  if (w.dilated > w.padded)
    throw InvalidArgument(fmt::format("the dilated filter (1 + dilation x (filter - 1) = 1 + {} x ({} - 1) = {}) is "
                                      "larger than the padded input (in + 2 x pad = {} + 2 x {} = {}): no output",
                                      dilation, filter, w.dilated, in, pad, w.padded));
  return (w.padded - w.dilated) / stride + 1;
}

std::array<std::int64_t, 4> dense_strides(ImageLayout layout, std::array<std::int64_t, 4> nchw) {
  switch (layout) {
    case ImageLayout::nchw: return strides_in_order({0, 1, 2, 3}, nchw);
    case ImageLayout::chwn: return strides_in_order({1, 2, 3, 0}, nchw);
    case ImageLayout::nhwc: return strides_in_order({0, 2, 3, 1}, nchw);
  }
  return {};
}

std::array<std::int64_t, 4> dense_strides(FilterLayout layout, std::array<std::int64_t, 4> kcrs) {
  switch (layout) {
    case FilterLayout::kcrs: return strides_in_order({0, 1, 2, 3}, kcrs);
    case FilterLayout::crsk: return strides_in_order({1, 2, 3, 0}, kcrs);
    case FilterLayout::krsc: return strides_in_order({0, 2, 3, 1}, kcrs);
  }
  return {};
}

Conv dense_conv(DType dtype, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k,
                std::int64_t r, std::int64_t s, std::int64_t stride, std::int64_t pad, std::int64_t dilation,
                ImageLayout image_layout, FilterLayout filter_layout) {
  if (std::min({n, c, h, w, k, r, s}) < 1)
    throw InvalidArgument(
        fmt::format("n={} c={} h={} w={} k={} r={} s={}: every size must be at least 1", n, c, h, w, k, r, s));
  check_window(stride, pad, dilation);
  const Window rows = window(h, r, pad, dilation), columns = window(w, s, pad, dilation);
  if (rows.dilated > rows.padded || columns.dilated > columns.padded) {
    const bool tall = rows.dilated > rows.padded;
    throw InvalidArgument(fmt::format(
        "the {} x {} filter (dilation {}) does not fit the {} x {} input padded by {}: no output (the "
        "dilated filter, 1 + dilation x ({} - 1) = {}, is larger than the padded input, {} + 2 x pad = {})",
        r, s, dilation, h, w, pad, tall ? 'r' : 's', tall ? rows.dilated : columns.dilated, tall ? 'h' : 'w',
        tall ? rows.padded : columns.padded));
  }
  Conv conv;
  conv.dtype = dtype;
  conv.n = n, conv.c = c, conv.h = h, conv.w = w, conv.k = k, conv.r = r, conv.s = s;
  conv.stride_h = conv.stride_w = stride;
  conv.pad_h = conv.pad_w = pad;
  conv.dilation_h = conv.dilation_w = dilation;
  conv.p = (rows.padded - rows.dilated) / stride + 1;
  conv.q = (columns.padded - columns.dilated) / stride + 1;
  // Each tensor must be addressable, and so must the implicit GEMM (implicit_gemm throws otherwise).
  checked_product("the input's elements", "N x C x H x W", {n, c, h, w});
  checked_product("the filter's elements", "K x C x R x S", {k, c, r, s});
  checked_product("the output's elements", "N x K x P x Q", {n, k, conv.p, conv.q});
  implicit_gemm(conv);
  conv.input_layout = conv.output_layout = image_layout;
  conv.filter_layout = filter_layout;
  conv.input_strides = dense_strides(image_layout, {n, c, h, w});
  conv.filter_strides = dense_strides(filter_layout, {k, c, r, s});
  conv.output_strides = dense_strides(image_layout, {n, k, conv.p, conv.q});
  return conv;
}

std::string to_string(const Conv& conv) {
  std::string text =
      fmt::format("{} {}/{}/{} n={} c={} h={} w={} k={} p={} q={} r={} s={} stride={},{} pad={},{} dilation={},{}",
                  name(conv.dtype), name(conv.input_layout), name(conv.filter_layout), name(conv.output_layout),
                  conv.n, conv.c, conv.h, conv.w, conv.k, conv.p, conv.q, conv.r, conv.s, conv.stride_h,
                  conv.stride_w, conv.pad_h, conv.pad_w, conv.dilation_h, conv.dilation_w);
  // Kernels take the tensors' strides and alignments as constants, so the text (a cache key) names
  // those that differ from dense, 16-byte aligned tensors.
  auto strides = [&](const char* name, const std::array<std::int64_t, 4>& actual, const std::array<std::int64_t, 4>& dense) {
    if (actual != dense) text += fmt::format(" {}_strides={}", name, fmt::join(actual, ","));
  };
  strides("input", conv.input_strides, dense_strides(conv.input_layout, {conv.n, conv.c, conv.h, conv.w}));
  strides("filter", conv.filter_strides, dense_strides(conv.filter_layout, {conv.k, conv.c, conv.r, conv.s}));
  strides("output", conv.output_strides, dense_strides(conv.output_layout, {conv.n, conv.k, conv.p, conv.q}));
  if (conv.align_input != 16 || conv.align_filter != 16 || conv.align_output != 16)
    text += fmt::format(" align={}/{}/{}", conv.align_input, conv.align_filter, conv.align_output);
  return text;
}

}  // namespace isaac::ir
