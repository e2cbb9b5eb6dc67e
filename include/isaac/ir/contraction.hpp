#pragma once
// ir::Contraction: one statement `out(i, j, ...) = epilogue(sum(r, s, ..., body))`.
//
// The output access takes plain, distinct indices. Every other access takes affine coordinates;
// a coordinate outside [0, extent) reads zero, which is how padding is written (2 * p + r - 1).
// The sum is optional: without one the statement is element-wise and `epilogue` is the whole right
// side. The epilogue may read the output, but only at the point being written (beta * C(m, n)).
//
// Shapes, strides and the base address are bound at call time (bind below); until then a tensor
// knows only its name, element type and rank.
#include <isaac/ir/dtype.hpp>
#include <isaac/ir/expr.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace isaac::ir {

struct Tensor {
  std::string name;
  DType dtype = DType::f32;
  int rank = 0;
  std::vector<std::int64_t> shape;    // empty until bound (a rank-0 tensor is always bound)
  std::vector<std::int64_t> strides;  // in elements, one per dimension; may be zero or negative
  // Largest power of two, in bytes and at most 16, that divides the base address.
  int align = 16;
  // The base address when known, for the aliasing checks of verify(); 0 when unknown. It is not
  // part of the printed form: two calls on different buffers share one cache key.
  std::uint64_t address = 0;
  bool operator==(const Tensor&) const = default;
};

bool is_bound(const Tensor& t);
// Element offsets of the lowest and one past the highest element the tensor spans: a host array
// for it needs (end - begin) elements, and element (0, ..., 0) sits at index -begin.
struct Span {
  std::int64_t begin = 0, end = 0;
};
// Throws InvalidArgument when the span is beyond 64-bit offsets (verify() rejects such tensors).
Span span_of(const Tensor& t);
// Dense strides; throw InvalidArgument when a stride is beyond int64.
std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape);
std::vector<std::int64_t> column_major_strides(const std::vector<std::int64_t>& shape);
// The largest power of two, at most 16, dividing `address` (16 for address 0).
int alignment_of(std::uint64_t address);

struct Contraction {
  Access output;
  std::vector<std::string> reduction;  // the indices the sum runs over; empty without a sum
  Expr body;                           // the summand; meaningless without a sum
  Expr epilogue;                       // the right side, with Op::reduction where the sum stood
  // Every tensor the statement names, the output first, then in order of first appearance.
  std::vector<Tensor> tensors;
  bool operator==(const Contraction&) const = default;
};

// Builds a contraction from `output = right_side`, where the right side holds at most one Op::sum.
// `declarations` gives the element type and rank of each tensor (in any order; a tensor named in
// the statement but not declared gets f32 and the rank of its first access). Runs the structural
// checks of verify() and throws InvalidArgument naming the first problem.
Contraction make_contraction(Access output, Expr right_side, std::vector<Tensor> declarations);
// The right side with the sum put back in place of Op::reduction.
Expr right_side(const Contraction& c);

const Tensor& tensor(const Contraction& c, std::string_view name);  // throws if absent
Tensor& tensor(Contraction& c, std::string_view name);
const Tensor& output_tensor(const Contraction& c);
// The scalar parameters the statement reads, sorted by name.
std::vector<std::string> scalar_names(const Contraction& c);
bool is_bound(const Contraction& c);

// Binds the shape and element strides of one tensor; empty strides mean dense row-major (the last
// coordinate contiguous). A nonzero address sets `align` from it and enables the aliasing checks.
// Runs verify() and leaves `c` unchanged when it throws.
void bind(Contraction& c, std::string_view tensor, std::vector<std::int64_t> shape,
          std::vector<std::int64_t> strides = {}, std::uint64_t address = 0);

// The extent of every index, read off the dimensions it indexes as a plain coordinate. Requires the
// tensors that determine them to be bound; throws InvalidArgument on a conflict or when an index
// appears only inside affine coordinates (its range would be unknown).
std::map<std::string, std::int64_t, std::less<>> index_extents(const Contraction& c);

}  // namespace isaac::ir
