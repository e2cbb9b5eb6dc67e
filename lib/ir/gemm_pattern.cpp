#include <isaac/error.hpp>
#include <isaac/ir/text.hpp>

#include "pattern_parts.hpp"
#include "walk.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

struct Operand {
  const Access* access;
  const Tensor* tensor;
};

std::int64_t stride_of(const Operand& operand, const std::string& index) {
  for (std::size_t d = 0; d < operand.access->coordinates.size(); ++d)
    if (operand.access->coordinates[d].terms[0].index == index) return operand.tensor->strides[d];
  return 0;
}

// One GEMM dimension (a group of indices fused into one): its extent and its stride in each operand
// that holds it. An extent of 1 leaves the strides free.
struct Dimension {
  std::int64_t extent = 1;
  std::vector<std::int64_t> strides;
};

Dimension fuse(std::string_view group, const std::vector<std::string>& indices, const std::vector<Operand>& operands,
               const Product& product) {
  Dimension fused;
  fused.strides.assign(operands.size(), 0);
  std::vector<std::string> varying;
  for (const std::string& index : indices)
    if (product.extents.at(index) > 1) varying.push_back(index);
  if (varying.empty()) return fused;
  // Innermost first, as laid out in the first operand; every other operand must nest them alike.
  std::sort(varying.begin(), varying.end(), [&](const std::string& a, const std::string& b) {
    return std::llabs(stride_of(operands[0], a)) < std::llabs(stride_of(operands[0], b));
  });
  for (std::size_t i = 0; i + 1 < varying.size(); ++i)
    for (const Operand& operand : operands) {
      const std::int64_t inner = stride_of(operand, varying[i]), outer = stride_of(operand, varying[i + 1]);
      const std::int64_t extent = product.extents.at(varying[i]);
      std::int64_t needed = 0;
      const bool beyond = __builtin_mul_overflow(inner, extent, &needed);
      if (beyond || outer != needed)
        throw NotThisPattern{fmt::format(
            "indices {} of the {} group cannot fuse into one dimension: in {} index {} has stride {} and extent {}, "
            "so {} would need stride {}, not {}",
            fmt::join(varying, ","), group, operand.tensor->name, varying[i], inner, extent, varying[i + 1],
            beyond ? fmt::format("{} x {} (beyond 64 bits)", inner, extent) : fmt::format("{}", needed), outer)};
    }
  for (const std::string& index : varying)
    if (__builtin_mul_overflow(fused.extent, product.extents.at(index), &fused.extent))
      throw InvalidArgument(fmt::format("the {} dimension fused of indices {} has more than {} elements", group,
                                        fmt::join(varying, ","), std::numeric_limits<std::int64_t>::max()));
  for (std::size_t o = 0; o < operands.size(); ++o) fused.strides[o] = stride_of(operands[o], varying[0]);
  return fused;
}

struct BlasLayout {
  bool trans;
  std::int64_t ld;
};

// A rows x cols operand as BLAS stores it: column-major (unit stride down the rows), or, when
// `allow_trans`, row-major (stored transposed).
std::optional<BlasLayout> blas_layout(std::int64_t rows, std::int64_t row_stride, std::int64_t cols,
                                      std::int64_t col_stride, bool allow_trans) {
  auto ld_or_minimal = [](std::int64_t extent, std::int64_t stride, std::int64_t minimal) {
    return extent == 1 && stride < minimal ? minimal : stride;
  };
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= std::max<std::int64_t>(1, rows)))
    return BlasLayout{false, ld_or_minimal(cols, col_stride, std::max<std::int64_t>(1, rows))};
  if (allow_trans && (cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= std::max<std::int64_t>(1, cols)))
    return BlasLayout{true, ld_or_minimal(rows, row_stride, std::max<std::int64_t>(1, cols))};
  return std::nullopt;
}

[[noreturn]] void not_blas(const Operand& operand, std::string_view rows, std::int64_t row_stride, std::string_view cols,
                           std::int64_t col_stride) {
  throw NotThisPattern{fmt::format(
      "{} is not a BLAS layout: it needs unit stride along {} or {}, with the other stride at least the extent of the "
      "first, but has strides {} and {}",
      to_string(*operand.access), rows, cols, row_stride, col_stride)};
}

std::string joined(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ",")); }

std::vector<std::string> filtered(const std::vector<std::string>& indices, auto keep) {
  std::vector<std::string> result;
  std::copy_if(indices.begin(), indices.end(), std::back_inserter(result), keep);
  return result;
}

}  // namespace

void recognise_gemm(const Contraction& c, const Product& product, Pattern& pattern) {
  const Operand x{product.x, &tensor(c, product.x->tensor)};
  const Operand y{product.y, &tensor(c, product.y->tensor)};
  const Operand out{&c.output, &output_tensor(c)};
  for (const Operand& operand : {x, y}) {
    const std::vector<std::string> indices = indices_of(*operand.access);
    if (indices.size() != operand.access->coordinates.size())
      throw NotThisPattern{fmt::format("{} uses an index twice (a diagonal), which no GEMM layout expresses",
                                       to_string(*operand.access))};
  }
  if (x.tensor->dtype != y.tensor->dtype || x.tensor->dtype != out.tensor->dtype)
    throw NotThisPattern{fmt::format("mixed element types ({} {}, {} {}, {} {}): ir::Gemm takes one", x.tensor->name,
                                     name(x.tensor->dtype), y.tensor->name, name(y.tensor->dtype), out.tensor->name,
                                     name(out.tensor->dtype))};

  const std::vector<std::string> in_x = indices_of(*x.access), in_y = indices_of(*y.access);
  const std::vector<std::string> in_c = indices_of(c.output);
  auto in = [](const std::vector<std::string>& set) { return [&set](const std::string& i) { return contains(set, i); }; };
  auto not_in = [](const std::vector<std::string>& set) {
    return [&set](const std::string& i) { return !contains(set, i); };
  };
  for (const std::string& index : in_x)
    if (!contains(in_y, index) && !contains(in_c, index))
      throw NotThisPattern{fmt::format("index {} is summed within {} alone (a reduction of one operand), not in a product",
                                       index, x.tensor->name)};
  for (const std::string& index : in_y)
    if (!contains(in_x, index) && !contains(in_c, index))
      throw NotThisPattern{fmt::format("index {} is summed within {} alone (a reduction of one operand), not in a product",
                                       index, y.tensor->name)};
  for (const std::string& index : in_c)
    if (!contains(in_x, index) && !contains(in_y, index))
      throw NotThisPattern{fmt::format("output index {} indexes neither {} nor {}: the result is broadcast along it",
                                       index, x.tensor->name, y.tensor->name)};

  auto m_indices = filtered(filtered(in_x, in(in_c)), not_in(in_y));
  auto n_indices = filtered(filtered(in_y, in(in_c)), not_in(in_x));
  auto k_indices = filtered(in_x, [&](const std::string& i) { return contains(in_y, i) && !contains(in_c, i); });
  auto batch_indices = filtered(filtered(in_x, in(in_y)), in(in_c));

  const Dimension m = fuse("M", m_indices, {x, out}, product);
  const Dimension n = fuse("N", n_indices, {y, out}, product);
  const Dimension k = fuse("K", k_indices, {x, y}, product);
  const Dimension batch = fuse("batch", batch_indices, {x, y, out}, product);

  // C(m, n) column-major as written, or C^T = B^T A^T when C's unit stride runs along N.
  const std::int64_t c_m_stride = m.strides[1], c_n_stride = n.strides[1];
  bool swap = false;
  std::optional<BlasLayout> c_layout;
  if (!(m.extent > 1 && c_m_stride == 1) && n.extent > 1 && c_n_stride == 1) swap = true;
  c_layout = swap ? blas_layout(n.extent, c_n_stride, m.extent, c_m_stride, false)
                  : blas_layout(m.extent, c_m_stride, n.extent, c_n_stride, false);
  if (!c_layout && !swap) {
    swap = true;
    c_layout = blas_layout(n.extent, c_n_stride, m.extent, c_m_stride, false);
  }
  if (!c_layout)
    not_blas(out, "M (" + joined(m_indices) + ")", c_m_stride, "N (" + joined(n_indices) + ")", c_n_stride);

  const Operand& a = swap ? y : x;
  const Operand& b = swap ? x : y;
  const Dimension& rows = swap ? n : m;
  const Dimension& cols = swap ? m : n;
  const std::int64_t a_k_stride = k.strides[swap ? 1 : 0], b_k_stride = k.strides[swap ? 0 : 1];
  const auto& row_names = swap ? n_indices : m_indices;
  const auto& col_names = swap ? m_indices : n_indices;
  const auto a_layout = blas_layout(rows.extent, rows.strides[0], k.extent, a_k_stride, true);
  if (!a_layout)
    not_blas(a, joined(row_names), rows.strides[0], joined(k_indices), a_k_stride);
  const auto b_layout = blas_layout(k.extent, b_k_stride, cols.extent, cols.strides[0], true);
  if (!b_layout)
    not_blas(b, joined(k_indices), b_k_stride, joined(col_names), cols.strides[0]);

  const std::int64_t a_batch_stride = batch.strides[swap ? 1 : 0], b_batch_stride = batch.strides[swap ? 0 : 1];
  if (batch.extent > 1 && (a_batch_stride < 0 || b_batch_stride < 0 || batch.strides[2] <= 0))
    throw NotThisPattern{fmt::format("negative batch strides ({} {}, {} {}, {} {}) are not a GEMM layout", a.tensor->name,
                                     a_batch_stride, b.tensor->name, b_batch_stride, out.tensor->name, batch.strides[2])};

  Gemm& g = pattern.gemm;
  g.dtype = out.tensor->dtype;
  g.m = rows.extent, g.n = cols.extent, g.k = k.extent, g.batch = batch.extent;
  g.a_trans = a_layout->trans, g.b_trans = b_layout->trans;
  g.lda = a_layout->ld, g.ldb = b_layout->ld, g.ldc = c_layout->ld;
  if (batch.extent > 1) {
    g.stride_a = a_batch_stride, g.stride_b = b_batch_stride, g.stride_c = batch.strides[2];
  } else {  // where a next matrix would start, as dense_gemm has it
    auto next_matrix = [](const char* operand, std::int64_t ld, std::int64_t columns) {
      std::int64_t stride = 0;
      if (__builtin_mul_overflow(ld, columns, &stride))
        throw InvalidArgument(fmt::format("{} spans {} x {} elements, beyond 64-bit offsets", operand, ld, columns));
      return stride;
    };
    g.stride_a = next_matrix("A", g.lda, g.a_trans ? g.m : g.k);
    g.stride_b = next_matrix("B", g.ldb, g.b_trans ? g.k : g.n);
    g.stride_c = next_matrix("C", g.ldc, g.n);
  }
  g.align_a = a.tensor->align, g.align_b = b.tensor->align, g.align_c = out.tensor->align;
  pattern.kind = PatternKind::gemm;
  pattern.a = a.tensor->name, pattern.b = b.tensor->name, pattern.c = out.tensor->name;
}

}  // namespace isaac::ir
