#include <isaac/error.hpp>
#include <isaac/ir/functions.hpp>
#include <isaac/ir/text.hpp>
#include <isaac/ir/verify.hpp>

#include "walk.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

[[noreturn]] void reject(const Contraction& c, const std::string& what) {
  throw InvalidArgument(fmt::format("{}: {}", statement_text(c), what));
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

const Tensor* find_tensor(const Contraction& c, std::string_view name) {
  for (const Tensor& t : c.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

void verify_tensors(const Contraction& c) {
  for (std::size_t i = 0; i < c.tensors.size(); ++i) {
    const Tensor& t = c.tensors[i];
    if (!is_identifier(t.name) || t.name == "sum")
      reject(c, fmt::format("'{}' cannot name a tensor: use an identifier other than 'sum'", t.name));
    for (std::size_t j = 0; j < i; ++j)
      if (c.tensors[j].name == t.name) reject(c, fmt::format("tensor {} is declared twice", t.name));
    if (!t.shape.empty() || !t.strides.empty())
      if (t.shape.size() != static_cast<std::size_t>(t.rank) || t.strides.size() != static_cast<std::size_t>(t.rank))
        reject(c, fmt::format("tensor {} of rank {} is bound to {} extents and {} strides", t.name, t.rank,
                              t.shape.size(), t.strides.size()));
  }
  for (const Access* access : accesses_of(c)) {
    const Access& a = *access;
    const Tensor* t = find_tensor(c, a.tensor);
    if (t == nullptr) reject(c, fmt::format("tensor {} is not declared", a.tensor));
    if (a.coordinates.size() != static_cast<std::size_t>(t->rank))
      reject(c, fmt::format("tensor {} has rank {} but {} gives {} coordinates", a.tensor, t->rank, to_string(a),
                            a.coordinates.size()));
    for (const Affine& coordinate : a.coordinates)
      for (const AffineTerm& term : coordinate.terms)
        if (!is_identifier(term.index) || term.index == "sum")
          reject(c, fmt::format("'{}' in {} cannot name an index: use an identifier other than 'sum'", term.index,
                                to_string(a)));
  }
}

void verify_output(const Contraction& c) {
  const Access& out = c.output;
  for (std::size_t d = 0; d < out.coordinates.size(); ++d) {
    if (!is_plain_index(out.coordinates[d]))
      reject(c, fmt::format("output coordinate {} of {} is {}, but the output takes plain indices", d, to_string(out),
                            to_string(out.coordinates[d])));
    for (std::size_t e = 0; e < d; ++e)
      if (out.coordinates[e] == out.coordinates[d])
        reject(c, fmt::format("index {} appears twice in the output {}: each output index names one dimension",
                              to_string(out.coordinates[d]), to_string(out)));
  }
  if (!c.reduction.empty())
    for (const Access* a : accesses_of(c.body))
      if (a->tensor == out.tensor)
        reject(c, fmt::format("the sum reads the output {} ({}): the output may be read only by the epilogue, at the "
                              "point it writes",
                              out.tensor, to_string(*a)));
  for (const Access* a : accesses_of(c.epilogue))
    if (a->tensor == out.tensor && !(*a == out))
      reject(c, fmt::format("the epilogue reads {} but the statement writes {}: the output may be read only at the "
                            "point it writes",
                            to_string(*a), to_string(out)));
}

void verify_nodes(const Contraction& c, const Expr& e, bool in_epilogue, int& reductions) {
  for_each_node(e, [&](const Expr& n) {
    switch (n.op) {
      case Op::sum:
        reject(c, "a sum inside the body or the epilogue: a contraction holds one sum, split by make_contraction");
      case Op::reduction:
        if (!in_epilogue) reject(c, "the body refers to the value of its own sum");
        ++reductions;
        break;
      case Op::scalar:
        if (!is_identifier(n.name) || n.name == "sum")
          reject(c, fmt::format("'{}' cannot name a scalar parameter: use an identifier other than 'sum'", n.name));
        if (find_tensor(c, n.name) != nullptr)
          reject(c, fmt::format("{} names both a tensor and a scalar parameter", n.name));
        break;
      case Op::call: {
        const auto f = find_function(n.name);
        if (!f)
          reject(c, fmt::format("unknown element-wise function '{}' (known: {}; see ir::register_function)", n.name,
                                fmt::join(function_names(), ", ")));
        if (static_cast<std::size_t>(f->arity) != n.operands.size())
          reject(c, fmt::format("{} takes {} argument(s), not {}", n.name, f->arity, n.operands.size()));
        break;
      }
      case Op::add: case Op::sub: case Op::mul: case Op::div:
        if (n.operands.size() != 2) reject(c, "a binary operation without two operands");
        break;
      case Op::neg:
        if (n.operands.size() != 1) reject(c, "a negation without one operand");
        break;
      case Op::access: case Op::constant:
        break;
    }
  });
}

void verify_indices(const Contraction& c) {
  const std::vector<std::string> out = output_indices(c);
  for (std::size_t i = 0; i < c.reduction.size(); ++i) {
    const std::string& r = c.reduction[i];
    if (!is_identifier(r) || r == "sum") reject(c, fmt::format("'{}' cannot name a reduction index", r));
    if (std::find(c.reduction.begin(), c.reduction.begin() + i, r) != c.reduction.begin() + i)
      reject(c, fmt::format("the sum lists index {} twice", r));
    if (contains(out, r))
      reject(c, fmt::format("reduction index {} also appears in the output {}: an index is either summed or kept", r,
                            to_string(c.output)));
  }
  std::vector<std::string> bound_on_right;
  if (!c.reduction.empty()) {
    const std::vector<std::string> body = indices_of(c.body);
    for (const std::string& r : c.reduction)
      if (!contains(body, r)) reject(c, fmt::format("the sum runs over {} but its body never uses {}", r, r));
    for (const std::string& index : body) {
      if (!contains(out, index) && !contains(c.reduction, index))
        reject(c, fmt::format("index {} on the right is neither an output index nor summed", index));
      bound_on_right.push_back(index);
    }
  }
  for (const std::string& index : indices_of(c.epilogue)) {
    if (contains(c.reduction, index))
      reject(c, fmt::format("index {} is used outside the sum that runs over it", index));
    if (!contains(out, index))
      reject(c, fmt::format("index {} on the right is neither an output index nor summed", index));
    bound_on_right.push_back(index);
  }
  for (const std::string& index : out)
    if (!contains(bound_on_right, index))
      reject(c, fmt::format("output index {} is never bound on the right: no access there uses it", index));
}

// Distinct output points must land on distinct elements: sorted by stride, each dimension must
// step over everything the smaller ones span.
void verify_output_strides(const Contraction& c, const Tensor& t) {
  // Unsigned: the magnitude of the stride -2^63 is not an int64.
  auto magnitude = [](std::int64_t v) {
    return v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  };
  std::vector<int> dims;
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int a, int b) { return magnitude(t.strides[a]) < magnitude(t.strides[b]); });
  // Saturates rather than wraps: a span beyond 2^64 exceeds every stride, which is an overlap.
  std::uint64_t spanned = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const int d = dims[i];
    const std::uint64_t stride = magnitude(t.strides[d]);
    if (stride == 0)
      reject(c, fmt::format("output {} dimension {} ({}) has stride 0 with extent {}: its elements share memory",
                            t.name, d, to_string(c.output.coordinates[d]), t.shape[d]));
    if (stride <= spanned) {
      const int previous = dims[i - 1];
      reject(c, fmt::format("output {} has overlapping strides: dimension {} ({}, extent {}, stride {}) and dimension "
                            "{} ({}, extent {}, stride {}) make two elements share memory",
                            t.name, previous, to_string(c.output.coordinates[previous]), t.shape[previous],
                            t.strides[previous], d, to_string(c.output.coordinates[d]), t.shape[d], t.strides[d]));
    }
    std::uint64_t reach = 0;
    if (__builtin_mul_overflow(stride, static_cast<std::uint64_t>(t.shape[d] - 1), &reach) ||
        __builtin_add_overflow(spanned, reach, &spanned))
      spanned = std::numeric_limits<std::uint64_t>::max();
  }
}

struct ByteRange {
  std::uint64_t begin, end;
};

// The byte offsets, from element (0, ..., 0), of the lowest and one past the highest byte a bound
// tensor spans; throws InvalidArgument where they are beyond 64-bit offsets.
Span byte_offsets(const Tensor& t) {
  const Span span = span_of(t);
  const auto size = static_cast<std::int64_t>(size_of(t.dtype));
  Span bytes;
  if (__builtin_mul_overflow(span.begin, size, &bytes.begin) || __builtin_mul_overflow(span.end, size, &bytes.end))
    throw InvalidArgument(fmt::format("tensor {} spans elements [{}, {}) of {} bytes: more bytes than 64-bit offsets "
                                      "reach ({})",
                                      t.name, span.begin, span.end, size, std::numeric_limits<std::int64_t>::max()));
  return bytes;
}

// The addresses a bound tensor with a known address spans.
ByteRange bytes_of(const Tensor& t) {
  const Span offsets = byte_offsets(t);
  ByteRange range{};
  if (__builtin_add_overflow(t.address, offsets.begin, &range.begin) ||
      __builtin_add_overflow(t.address, offsets.end, &range.end))
    throw InvalidArgument(fmt::format("tensor {} at address {:#x} spans bytes [{}, {}) from there: beyond the 64-bit "
                                      "address space",
                                      t.name, t.address, offsets.begin, offsets.end));
  return range;
}

void verify_shapes(const Contraction& c) {
  for (const Access* access : accesses_of(c)) {
    const Tensor& t = tensor(c, access->tensor);
    if (!is_bound(t)) continue;
    for (int d = 0; d < t.rank; ++d)
      if (t.shape[d] <= 0)
        reject(c, fmt::format("tensor {} dimension {} ({}) has extent {}; extents must be positive", t.name, d,
                              to_string(access->coordinates[d]), t.shape[d]));
  }
  for (const Tensor& t : c.tensors) {
    if (!is_bound(t)) continue;
    try {
      if (t.address == 0) byte_offsets(t);
      else bytes_of(t);
    } catch (const InvalidArgument& too_large) {
      reject(c, too_large.what());
    }
  }
  try {
    known_extents(c);
  } catch (const InvalidArgument& conflict) {
    reject(c, conflict.what());
  }
  const Tensor& out = output_tensor(c);
  if (!is_bound(out)) return;
  verify_output_strides(c, out);
  if (out.address == 0) return;
  const ByteRange written = bytes_of(out);
  for (const Tensor& t : c.tensors) {
    if (t.name == out.name || !is_bound(t) || t.address == 0) continue;
    const ByteRange read = bytes_of(t);
    if (read.begin < written.end && written.begin < read.end)
      reject(c, fmt::format("output {} occupies bytes [{:#x}, {:#x}), which overlap input {} at [{:#x}, {:#x}): the "
                            "output must not alias an input",
                            out.name, written.begin, written.end, t.name, read.begin, read.end));
  }
}

}  // namespace

void verify(const Contraction& c) {
  verify_tensors(c);
  int reductions = 0;
  if (!c.reduction.empty()) verify_nodes(c, c.body, false, reductions);
  verify_nodes(c, c.epilogue, true, reductions);
  if (c.reduction.empty() && reductions != 0) reject(c, "the epilogue refers to a sum that does not exist");
  if (!c.reduction.empty() && reductions != 1)
    reject(c, fmt::format("the epilogue uses the value of the sum {} times; it must use it once", reductions));
  verify_output(c);
  verify_indices(c);
  verify_shapes(c);
}

void verify_bound(const Contraction& c) {
  verify(c);
  for (const Tensor& t : c.tensors)
    if (!is_bound(t)) reject(c, fmt::format("tensor {} is not bound: bind its shape and strides first", t.name));
  try {
    index_extents(c);
  } catch (const InvalidArgument& unknown) {
    reject(c, unknown.what());
  }
}

}  // namespace isaac::ir
