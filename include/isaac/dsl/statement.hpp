#pragma once
// A statement `C(m, n) = right side` and the compile-time checks that make a contraction of it.
#include <isaac/dsl/expression.hpp>
#include <isaac/ir/contraction.hpp>


namespace isaac::dsl {

template <class Output, class Right>
struct Statement {
  Output output;
  Right right;
};

template <class T>
inline constexpr bool is_statement = false;
template <class Output, class Right>
inline constexpr bool is_statement<Statement<Output, Right>> = true;

template <class T>
inline constexpr bool is_plain_index_coordinate = false;
template <char Name>
inline constexpr bool is_plain_index_coordinate<Index<Name>> = true;

template <class... Coordinates, class Right>
auto make_statement(const Access<Coordinates...>& output, const Right& right) {
  using Out = Access<Coordinates...>;
  constexpr bool plain = (is_plain_index_coordinate<Coordinates> && ...);
  static_assert(plain, "isaac: the output takes plain indices, as in C(m, n) = ..., not C(m + 1, n) or C(0, n)");
  using OutIndices = decltype(Out::free_indices);
  using RightIndices = decltype(Right::free_indices);
  constexpr bool distinct = set_size<OutIndices> == sizeof...(Coordinates);
  static_assert(!plain || distinct, "isaac: an index appears twice in the output");
  constexpr bool one_sum = Right::sums <= 1;
  static_assert(one_sum, "isaac: a statement holds at most one sum: list every reduction index in one sum(i, j, ..., body)");
  constexpr bool reduction_kept = !are_disjoint<OutIndices, decltype(Right::summed_indices)>;
  static_assert(!reduction_kept, "isaac: a reduction index appears in the output: an index is either summed over or kept");
  constexpr bool output_bound = is_subset<OutIndices, RightIndices>;
  static_assert(reduction_kept || output_bound,
                "isaac: an output index is never bound on the right-hand side: every index of the output must index "
                "some tensor on the right");
  constexpr bool right_bound = is_subset<RightIndices, OutIndices>;
  static_assert(right_bound,
                "isaac: an index on the right-hand side is neither an output index nor summed over (or is used "
                "outside the sum that runs over it)");
  return Statement<Out, Right>{output, right};
}

template <class... Coordinates>
template <ValueOperand Right>
auto Access<Coordinates...>::operator=(const Right& right) const {
  return make_statement(*this, as_node(right));
}

template <class... Coordinates>
auto Access<Coordinates...>::operator=(const Access& right) const {
  return make_statement(*this, right);
}

// The IR of a statement: its structure was checked above, make_contraction checks the rest (one
// element type and rank per tensor name).
template <class Output, class Right>
ir::Contraction to_contraction(const Statement<Output, Right>& statement) {
  std::vector<ir::Tensor> tensors{statement.output.declaration()};
  ir::Expr right = statement.right.to_ir(tensors);
  return ir::make_contraction(statement.output.to_ir_access(), std::move(right), std::move(tensors));
}

}  // namespace isaac::dsl
