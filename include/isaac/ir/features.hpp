#pragma once
// The input features x_i the tuner's model takes (DESIGN.md, "Tuning"): sizes, dtype, layout and
// alignment of one GEMM or CONV, as plain numbers with their names.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>

#include <string_view>
#include <vector>

namespace isaac::ir {

struct InputFeatures {
  std::vector<std::string_view> names;  // stable: part of every dataset's header
  std::vector<double> values;
};

// m, n, k, batch, dtype_bytes, a_trans, b_trans, then for A, B and C the widest vector access in bytes
// (at most 16) that the base alignment, leading dimension and batch stride all allow.
InputFeatures input_features(const Gemm& g);
// n, c, h, w, k, p, q, r, s, stride, pad and dilation (h then w), dtype_bytes, the three layouts as
// their enumerator index, and the vector width allowed for each tensor as for GEMM.
InputFeatures input_features(const Conv& conv);

}  // namespace isaac::ir
