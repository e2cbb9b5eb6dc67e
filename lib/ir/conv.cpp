#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

std::string upper(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return result;
}

// Dense strides for logical dimensions stored in the memory order `order` (outermost first).
std::array<std::int64_t, 4> strides_in_order(std::array<int, 4> order, std::array<std::int64_t, 4> extents) {
  std::array<std::int64_t, 4> strides{};
  std::int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    strides[order[i]] = stride;
    stride *= extents[order[i]];
  }
  return strides;
}

}  // namespace

ImplicitGemm implicit_gemm(const Conv& conv) {
  return {conv.n * conv.p * conv.q, conv.k, conv.c * conv.r * conv.s};
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
  return (in + 2 * pad - dilation * (filter - 1) - 1) / stride + 1;
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
  Conv conv;
  conv.dtype = dtype;
  conv.n = n, conv.c = c, conv.h = h, conv.w = w, conv.k = k, conv.r = r, conv.s = s;
  conv.stride_h = conv.stride_w = stride;
  conv.pad_h = conv.pad_w = pad;
  conv.dilation_h = conv.dilation_w = dilation;
  conv.p = output_size(h, r, stride, pad, dilation);
  conv.q = output_size(w, s, stride, pad, dilation);
  conv.input_layout = conv.output_layout = image_layout;
  conv.filter_layout = filter_layout;
  conv.input_strides = dense_strides(image_layout, {n, c, h, w});
  conv.filter_strides = dense_strides(filter_layout, {k, c, r, s});
  conv.output_strides = dense_strides(image_layout, {n, k, conv.p, conv.q});
  return conv;
}

std::string to_string(const Conv& conv) {
  return fmt::format("{} {}/{}/{} n={} c={} h={} w={} k={} p={} q={} r={} s={} stride={},{} pad={},{} dilation={},{}",
                     name(conv.dtype), name(conv.input_layout), name(conv.filter_layout), name(conv.output_layout),
                     conv.n, conv.c, conv.h, conv.w, conv.k, conv.p, conv.q, conv.r, conv.s, conv.stride_h,
                     conv.stride_w, conv.pad_h, conv.pad_w, conv.dilation_h, conv.dilation_w);
}

}  // namespace isaac::ir
