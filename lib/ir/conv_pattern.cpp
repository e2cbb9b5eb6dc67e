#include <isaac/ir/text.hpp>

#include "pattern_parts.hpp"
#include "walk.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

// One spatial coordinate of the input: stride * p + dilation * r - pad.
struct Spatial {
  int dimension;
  std::string output_index, filter_index;
  std::int64_t stride, dilation, pad;
};

// Does a tensor of these logical extents and strides nest its dimensions in memory as `order`
// (outermost first), with unit stride innermost? Dimensions of extent 1 may sit anywhere.
bool laid_out_as(const std::array<int, 4>& order, const std::array<std::int64_t, 4>& extents,
                 const std::array<std::int64_t, 4>& strides) {
  std::int64_t inner_span = 1;
  for (int i = 3; i >= 0; --i) {
    const int d = order[i];
    if (extents[d] == 1) continue;
    if (strides[d] < inner_span || (inner_span == 1 && strides[d] != 1)) return false;
    if (__builtin_mul_overflow(strides[d], extents[d], &inner_span)) return false;  // spans beyond 64-bit offsets
  }
  return true;
}

template <class Layout>
Layout layout_of(const std::vector<std::pair<Layout, std::array<int, 4>>>& candidates, std::string_view what,
                 std::string_view logical, const std::array<std::int64_t, 4>& extents,
                 const std::array<std::int64_t, 4>& strides) {
  for (const auto& [layout, order] : candidates)
    if (laid_out_as(order, extents, strides)) return layout;
  std::vector<std::string_view> names;
  for (const auto& candidate : candidates) names.push_back(name(candidate.first));
  throw NotThisPattern{fmt::format("{} with extents [{}] and strides {{{}}} in ({}) order is laid out as none of {}",
                                   what, fmt::join(extents, ","), fmt::join(strides, ","), logical,
                                   fmt::join(names, ", "))};
}

std::string one_index(const Affine& coordinate) { return coordinate.terms.at(0).index; }

}  // namespace

void recognise_conv(const Contraction& c, const Product& product, Pattern& pattern) {
  auto has_affine = [](const Access& a) {
    return std::any_of(a.coordinates.begin(), a.coordinates.end(), [](const Affine& x) { return !is_plain_index(x); });
  };
  if (has_affine(*product.x) && has_affine(*product.y))
    throw NotThisPattern{fmt::format("both {} and {} have affine coordinates; a convolution has one input and one filter "
                                     "indexed plainly",
                                     to_string(*product.x), to_string(*product.y))};
  const Access& in = has_affine(*product.x) ? *product.x : *product.y;
  const Access& filter = has_affine(*product.x) ? *product.y : *product.x;
  const Access& out = c.output;
  const std::string prefix = "not a 2-D convolution: ";
  for (const Access* a : {&in, &filter, &out})
    if (a->coordinates.size() != 4)
      throw NotThisPattern{prefix + fmt::format("{} has rank {}; a 2-D convolution takes rank-4 input, filter and output",
                                                to_string(*a), a->coordinates.size())};
  for (const Affine& coordinate : filter.coordinates)
    if (!is_plain_index(coordinate))
      throw NotThisPattern{prefix + fmt::format("filter {} has an affine coordinate", to_string(filter))};
  if (indices_of(filter).size() != 4)
    throw NotThisPattern{prefix + fmt::format("filter {} uses an index twice", to_string(filter))};

  const std::vector<std::string> in_out = indices_of(out), in_filter = indices_of(filter);
  auto output_only = [&](const std::string& i) { return contains(in_out, i) && !contains(in_filter, i); };
  auto summed_with_filter = [&](const std::string& i) { return contains(c.reduction, i) && contains(in_filter, i); };

  std::vector<int> batch_dims, channel_dims;
  std::vector<Spatial> spatial;
  for (int d = 0; d < 4; ++d) {
    const Affine& coordinate = in.coordinates[d];
    if (is_plain_index(coordinate)) {
      const std::string index = one_index(coordinate);
      if (output_only(index)) batch_dims.push_back(d);
      else if (summed_with_filter(index)) channel_dims.push_back(d);
      else
        throw NotThisPattern{prefix + fmt::format("input coordinate {} of {} is neither the image index (output only) "
                                                  "nor the channel (summed with the filter)",
                                                  index, to_string(in))};
      continue;
    }
    const auto is_output_term = [&](const AffineTerm& t) { return output_only(t.index); };
    const auto is_filter_term = [&](const AffineTerm& t) { return summed_with_filter(t.index); };
    const auto& terms = coordinate.terms;
    const auto output_term = std::find_if(terms.begin(), terms.end(), is_output_term);
    const auto filter_term = std::find_if(terms.begin(), terms.end(), is_filter_term);
    if (terms.size() != 2 || output_term == terms.end() || filter_term == terms.end())
      throw NotThisPattern{prefix + fmt::format("input coordinate {} of {} is not stride * p + dilation * r - pad with p "
                                                "an output index and r a filter index summed over",
                                                to_string(coordinate), to_string(in))};
    if (output_term->coefficient < 1 || filter_term->coefficient < 1 || coordinate.constant > 0)
      throw NotThisPattern{prefix + fmt::format("input coordinate {} of {} has a stride or dilation below 1 or a negative "
                                                "padding",
                                                to_string(coordinate), to_string(in))};
    spatial.push_back({d, output_term->index, filter_term->index, output_term->coefficient, filter_term->coefficient,
                       -coordinate.constant});
  }
  if (batch_dims.size() != 1 || channel_dims.size() != 1 || spatial.size() != 2)
    throw NotThisPattern{prefix + fmt::format("input {} needs one image index, one channel index and two spatial "
                                              "coordinates; it has {}, {} and {}",
                                              to_string(in), batch_dims.size(), channel_dims.size(), spatial.size())};
  const std::string n = one_index(in.coordinates[batch_dims[0]]), ch = one_index(in.coordinates[channel_dims[0]]);
  const Spatial& h = spatial[0];
  const Spatial& w = spatial[1];
  std::string k;
  for (const std::string& index : in_out)
    if (contains(in_filter, index)) k = index;
  const std::vector<std::string> expected_out{n, k, h.output_index, w.output_index};
  const std::vector<std::string> expected_filter{k, ch, h.filter_index, w.filter_index};
  auto same_set = [](std::vector<std::string> a, std::vector<std::string> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
  };
  if (k.empty() || !same_set(in_out, expected_out) || !same_set(in_filter, expected_filter) ||
      !same_set(c.reduction, {ch, h.filter_index, w.filter_index}))
    throw NotThisPattern{prefix + fmt::format("expected output (n,k,p,q) = ({},{},{},{}), filter (k,c,r,s) = "
                                              "({},{},{},{}) and a sum over ({},{},{}) but found {}, {} and sum({})",
                                              n, k.empty() ? "?" : k, h.output_index, w.output_index, k.empty() ? "?" : k,
                                              ch, h.filter_index, w.filter_index, ch, h.filter_index, w.filter_index,
                                              to_string(out), to_string(filter), fmt::join(c.reduction, ","))};

  const Tensor& in_tensor = tensor(c, in.tensor);
  const Tensor& filter_tensor = tensor(c, filter.tensor);
  const Tensor& out_tensor = output_tensor(c);
  if (in_tensor.dtype != filter_tensor.dtype || in_tensor.dtype != out_tensor.dtype)
    throw NotThisPattern{fmt::format("mixed element types ({} {}, {} {}, {} {}): ir::Conv takes one", in_tensor.name,
                                     name(in_tensor.dtype), filter_tensor.name, name(filter_tensor.dtype),
                                     out_tensor.name, name(out_tensor.dtype))};

  // Logical order: input (n, c, h, w), filter (k, c, r, s), output (n, k, p, q).
  auto dim_of = [](const Access& a, const std::string& index) {
    for (int d = 0; d < 4; ++d)
      if (is_plain_index(a.coordinates[d]) && one_index(a.coordinates[d]) == index) return d;
    return -1;
  };
  const std::array<int, 4> in_dims{batch_dims[0], channel_dims[0], h.dimension, w.dimension};
  const std::array<int, 4> filter_dims{dim_of(filter, k), dim_of(filter, ch), dim_of(filter, h.filter_index),
                                       dim_of(filter, w.filter_index)};
  const std::array<int, 4> out_dims{dim_of(out, n), dim_of(out, k), dim_of(out, h.output_index),
                                    dim_of(out, w.output_index)};
  auto logical = [](const std::array<int, 4>& dims, const std::vector<std::int64_t>& values) {
    std::array<std::int64_t, 4> result{};
    for (int i = 0; i < 4; ++i) result[i] = values[dims[i]];
    return result;
  };

  Conv& conv = pattern.conv;
  conv.dtype = out_tensor.dtype;
  conv.input_strides = logical(in_dims, in_tensor.strides);
  conv.filter_strides = logical(filter_dims, filter_tensor.strides);
  conv.output_strides = logical(out_dims, out_tensor.strides);
  const auto in_extents = logical(in_dims, in_tensor.shape);
  const auto filter_extents = logical(filter_dims, filter_tensor.shape);
  const auto out_extents = logical(out_dims, out_tensor.shape);
  conv.n = in_extents[0], conv.c = in_extents[1], conv.h = in_extents[2], conv.w = in_extents[3];
  conv.k = filter_extents[0], conv.r = filter_extents[2], conv.s = filter_extents[3];
  conv.p = out_extents[2], conv.q = out_extents[3];
  conv.stride_h = h.stride, conv.stride_w = w.stride;
  conv.dilation_h = h.dilation, conv.dilation_w = w.dilation;
  conv.pad_h = h.pad, conv.pad_w = w.pad;

  const std::vector<std::pair<ImageLayout, std::array<int, 4>>> images{
      {ImageLayout::nchw, {0, 1, 2, 3}}, {ImageLayout::chwn, {1, 2, 3, 0}}, {ImageLayout::nhwc, {0, 2, 3, 1}}};
  const std::vector<std::pair<FilterLayout, std::array<int, 4>>> filters{
      {FilterLayout::kcrs, {0, 1, 2, 3}}, {FilterLayout::crsk, {1, 2, 3, 0}}, {FilterLayout::krsc, {0, 2, 3, 1}}};
  conv.input_layout = layout_of(images, "input " + in_tensor.name, "n,c,h,w", in_extents, conv.input_strides);
  conv.filter_layout = layout_of(filters, "filter " + filter_tensor.name, "k,c,r,s", filter_extents, conv.filter_strides);
  conv.output_layout = layout_of(images, "output " + out_tensor.name, "n,k,p,q", out_extents, conv.output_strides);
  conv.align_input = in_tensor.align, conv.align_filter = filter_tensor.align, conv.align_output = out_tensor.align;

  pattern.kind = PatternKind::conv;
  pattern.a = in_tensor.name, pattern.b = filter_tensor.name, pattern.c = out_tensor.name;
}

}  // namespace isaac::ir
