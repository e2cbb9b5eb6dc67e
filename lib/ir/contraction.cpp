#include <isaac/error.hpp>
#include <isaac/ir/contraction.hpp>
#include <isaac/ir/text.hpp>
#include <isaac/ir/verify.hpp>

#include "walk.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

int count_sums(const Expr& e) {
  int sums = 0;
  for_each_node(e, [&](const Expr& n) { sums += n.op == Op::sum; });
  return sums;
}

// The nodes of `op` in `e`, parents first. Recursion here costs little stack per level: a chain of n
// terms is a tree n deep.
void find_nodes(Expr& e, Op op, std::vector<Expr*>& found) {
  if (e.op == op) found.push_back(&e);
  for (Expr& operand : e.operands) find_nodes(operand, op, found);
}

// Replaces the one sum node in `e` by Op::reduction; the sum itself goes to `sum_node`.
void take_sum(Expr& e, Expr& sum_node) {
  std::vector<Expr*> sums;
  find_nodes(e, Op::sum, sums);
  if (sums.empty()) return;
  sum_node = std::move(*sums.front());
  *sums.front() = reduction();
}

void put_sum(Expr& e, const Contraction& c) {
  std::vector<Expr*> reductions;
  find_nodes(e, Op::reduction, reductions);
  for (Expr* r : reductions) *r = sum(c.reduction, c.body);  // leaves: replacing one leaves the others in place
}

void declare_in_order(std::vector<Tensor>& ordered, const Access& a, std::vector<Tensor>& declarations) {
  auto same_name = [&](const Tensor& t) { return t.name == a.tensor; };
  if (std::any_of(ordered.begin(), ordered.end(), same_name)) return;
  auto declared = std::find_if(declarations.begin(), declarations.end(), same_name);
  if (declared != declarations.end()) {
    ordered.push_back(std::move(*declared));
    declarations.erase(declared);
    return;
  }
  Tensor t;
  t.name = a.tensor;
  t.rank = static_cast<int>(a.coordinates.size());
  ordered.push_back(t);
}

// Dense strides with dimensions nested in `order` (innermost first). The element count of the whole
// tensor is no stride, so only the strides themselves must stay within int64.
std::vector<std::int64_t> dense_strides_in_order(const std::vector<std::int64_t>& shape,
                                                 const std::vector<std::size_t>& order) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t i = 0; i < order.size(); ++i) {
    strides[order[i]] = stride;
    if (i + 1 < order.size() && __builtin_mul_overflow(stride, shape[order[i]], &stride))
      throw InvalidArgument(fmt::format("dense strides of shape [{}]: a stride is beyond {}, the largest 64-bit "
                                        "offset",
                                        fmt::join(shape, ","), std::numeric_limits<std::int64_t>::max()));
  }
  return strides;
}

}  // namespace

bool is_bound(const Tensor& t) {
  return t.shape.size() == static_cast<std::size_t>(t.rank) && t.strides.size() == static_cast<std::size_t>(t.rank);
}

Span span_of(const Tensor& t) {
  Span span{0, 1};
  for (int d = 0; d < t.rank; ++d) {
    std::int64_t last = 0, reach = 0;
    bool overflow = __builtin_sub_overflow(t.shape[d], 1, &last) || __builtin_mul_overflow(t.strides[d], last, &reach);
    if (!overflow) {
      std::int64_t& bound = reach < 0 ? span.begin : span.end;
      overflow = __builtin_add_overflow(bound, reach, &bound);
    }
    if (overflow)
      throw InvalidArgument(fmt::format("tensor {} of shape [{}] and strides {{{}}} spans more elements than 64-bit "
                                        "offsets reach ({})",
                                        t.name, fmt::join(t.shape, ","), fmt::join(t.strides, ","),
                                        std::numeric_limits<std::int64_t>::max()));
  }
  return span;
}

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> order(shape.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
  return dense_strides_in_order(shape, order);
}

std::vector<std::int64_t> column_major_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> order(shape.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  return dense_strides_in_order(shape, order);
}

int alignment_of(std::uint64_t address) {
  int align = 1;
  while (align < 16 && address % (2 * align) == 0) align *= 2;
  return align;
}

Contraction make_contraction(Access output, Expr right_side, std::vector<Tensor> declarations) {
  const int sums = count_sums(right_side);
  if (sums > 1)
    throw InvalidArgument(fmt::format("{} = {}: a statement holds at most one sum (found {}); list every "
                                      "reduction index in one sum(i, j, ..., body)",
                                      to_string(output), to_string(right_side), sums));
  Contraction c;
  c.output = std::move(output);
  Expr sum_node;
  take_sum(right_side, sum_node);
  c.epilogue = std::move(right_side);
  if (sums == 1) {
    c.reduction = std::move(sum_node.indices);
    c.body = std::move(sum_node.operands.at(0));
  }
  for (std::size_t i = 0; i < declarations.size(); ++i)
    for (std::size_t j = i + 1; j < declarations.size(); ++j)
      if (declarations[i].name == declarations[j].name && !(declarations[i] == declarations[j]))
        throw InvalidArgument(fmt::format("tensor {} is declared twice, differently: {} and {}", declarations[i].name,
                                          to_string(declarations[i]), to_string(declarations[j])));
  for (const Access* a : accesses_of(c)) declare_in_order(c.tensors, *a, declarations);
  for (const Tensor& unused : declarations)
    if (std::none_of(c.tensors.begin(), c.tensors.end(), [&](const Tensor& t) { return t.name == unused.name; }))
      throw InvalidArgument(fmt::format("tensor {} is declared but the statement {} never uses it", unused.name,
                                        to_string(c)));
  verify(c);
  return c;
}

Expr right_side(const Contraction& c) {
  Expr right = c.epilogue;
  put_sum(right, c);
  return right;
}

const Tensor& tensor(const Contraction& c, std::string_view name) {
  for (const Tensor& t : c.tensors)
    if (t.name == name) return t;
  throw InvalidArgument(fmt::format("no tensor named {} in {}", name, to_string(c)));
}

Tensor& tensor(Contraction& c, std::string_view name) {
  return const_cast<Tensor&>(tensor(static_cast<const Contraction&>(c), name));
}

const Tensor& output_tensor(const Contraction& c) { return tensor(c, c.output.tensor); }

std::vector<std::string> scalar_names(const Contraction& c) {
  std::vector<std::string> names;
  auto collect = [&](const Expr& n) {
    if (n.op == Op::scalar && !contains(names, n.name)) names.push_back(n.name);
  };
  for_each_node(c.epilogue, collect);
  if (!c.reduction.empty()) for_each_node(c.body, collect);
  std::sort(names.begin(), names.end());
  return names;
}

bool is_bound(const Contraction& c) {
  return std::all_of(c.tensors.begin(), c.tensors.end(), [](const Tensor& t) { return is_bound(t); });
}

void bind(Contraction& c, std::string_view name, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
          std::uint64_t address) {
  Contraction bound = c;  // `c` stays as it was when the binding is rejected
  Tensor& t = tensor(bound, name);
  if (strides.empty()) strides = row_major_strides(shape);
  if (shape.size() != static_cast<std::size_t>(t.rank) || strides.size() != shape.size())
    throw InvalidArgument(fmt::format("cannot bind tensor {} of rank {} to shape [{}] and strides {{{}}}: "
                                      "give one extent and one stride per dimension",
                                      t.name, t.rank, fmt::join(shape, ","), fmt::join(strides, ",")));
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  t.address = address;
  if (address != 0) t.align = alignment_of(address);
  verify(bound);
  c = std::move(bound);
}

std::map<std::string, ExtentSource, std::less<>> known_extents(const Contraction& c) {
  std::map<std::string, ExtentSource, std::less<>> sources;
  for (const Access* access : accesses_of(c)) {
    const Access& a = *access;
    const Tensor& t = tensor(c, a.tensor);
    if (!is_bound(t)) continue;
    for (int d = 0; d < t.rank; ++d) {
      if (!is_plain_index(a.coordinates[d])) continue;
      const std::string& index = a.coordinates[d].terms[0].index;
      auto [known, inserted] = sources.try_emplace(index, ExtentSource{t.shape[d], t.name, d});
      if (!inserted && known->second.extent != t.shape[d])
        throw InvalidArgument(fmt::format("index {} has conflicting extents: {} from {} dimension {} and {} from {} "
                                          "dimension {}",
                                          index, known->second.extent, known->second.tensor,
                                          known->second.dimension, t.shape[d], t.name, d));
    }
  }
  return sources;
}

std::map<std::string, std::int64_t, std::less<>> index_extents(const Contraction& c) {
  const auto sources = known_extents(c);
  std::map<std::string, std::int64_t, std::less<>> extents;
  for (const Access* access : accesses_of(c))
    for (const std::string& index : indices_of(*access)) {
      auto source = sources.find(index);
      if (source != sources.end()) {
        extents[index] = source->second.extent;
        continue;
      }
      if (!is_bound(tensor(c, access->tensor)))
        throw InvalidArgument(fmt::format("the extent of index {} is unknown: bind the shape of {} first", index,
                                          access->tensor));
      throw InvalidArgument(fmt::format("the extent of index {} is unknown: it appears only inside affine coordinates "
                                        "such as {}; index some dimension with {} alone",
                                        index, to_string(*access), index));
    }
  return extents;
}

}  // namespace isaac::ir
