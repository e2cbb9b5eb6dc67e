#pragma once
// Indices and the affine coordinates built from them (2 * p + r - 1).
//
// An index is a type, Index<'m'>, so the DSL knows at compile time which indices every expression
// involves (as a hana::set of their names) and turns misuse into a readable static_assert. The
// coefficients and constants are ordinary runtime integers carried in an ir::Affine.
#include <isaac/error.hpp>
#include <isaac/ir/expr.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <boost/hana/fold_left.hpp>
#include <boost/hana/insert.hpp>
#include <boost/hana/intersection.hpp>
#include <boost/hana/is_subset.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/set.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/union.hpp>

namespace isaac::dsl {

namespace hana = boost::hana;

// A static_assert condition that holds for no instantiation, for overloads that exist only to
// explain why an expression is wrong.
template <class...>
inline constexpr bool always_false = false;

// The set of index names, for any number of names (duplicates collapse).
template <char... Names>
constexpr auto index_set() {
  return hana::fold_left(hana::make_tuple(hana::char_c<Names>...), hana::make_set(), hana::insert);
}

// Facts about index sets, as compile-time constants.
template <class Set>
inline constexpr std::size_t set_size = decltype(hana::length(std::declval<Set>()))::value;
// (Empty sets are decided here: hana's set algorithms do not accept them everywhere.)
template <class Small, class Large>
constexpr bool subset_of() {
  if constexpr (set_size<Small> == 0) return true;
  else return decltype(hana::is_subset(std::declval<Small>(), std::declval<Large>()))::value;
}
template <class Small, class Large>
inline constexpr bool is_subset = subset_of<Small, Large>();
template <class A, class B>
constexpr bool disjoint() {
  if constexpr (set_size<A> == 0 || set_size<B> == 0) return true;
  else return set_size<decltype(hana::intersection(std::declval<A>(), std::declval<B>()))> == 0;
}
template <class A, class B>
inline constexpr bool are_disjoint = disjoint<A, B>();

template <char Name>
struct Index {
  static constexpr char name = Name;
  static constexpr auto indices = index_set<Name>();
  ir::Affine affine() const { return ir::index_coordinate(std::string(1, Name)); }
};

// An affine expression of the indices in the hana::set `Set`.
template <class Set>
struct AffineIndex {
  static constexpr auto indices = Set{};
  ir::Affine value;
  ir::Affine affine() const { return value; }
};

template <class T>
inline constexpr bool is_index_expression = false;
template <char Name>
inline constexpr bool is_index_expression<Index<Name>> = true;
template <class Set>
inline constexpr bool is_index_expression<AffineIndex<Set>> = true;

template <class T>
concept IndexExpression = is_index_expression<std::remove_cvref_t<T>>;
// What may stand as a tensor coordinate: an index expression or an integer.
template <class T>
concept Coordinate = IndexExpression<T> || std::integral<std::remove_cvref_t<T>>;

template <Coordinate C>
constexpr auto indices_of() {
  if constexpr (IndexExpression<C>) return std::remove_cvref_t<C>::indices;
  else return hana::make_set();
}

// An integer of a coordinate as int64. An unsigned one beyond int64 would wrap into a different
// (negative) coordinate, so it is refused; the affine arithmetic refuses overflow likewise.
template <std::integral I>
std::int64_t coordinate_integer(I value) {
  if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(std::int64_t)) {
    constexpr auto largest = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (value > largest)
      throw InvalidArgument("the integer " + std::to_string(value) + " in a coordinate is beyond " +
                            std::to_string(largest) + ", the largest coefficient or constant");
  }
  return static_cast<std::int64_t>(value);
}

template <Coordinate C>
ir::Affine to_affine(const C& coordinate) {
  if constexpr (IndexExpression<C>) return coordinate.affine();
  else return ir::constant_coordinate(coordinate_integer(coordinate));
}

template <class Set>
AffineIndex<Set> make_affine(Set, ir::Affine value) {
  return AffineIndex<Set>{std::move(value)};
}

template <Coordinate A, Coordinate B>
  requires(IndexExpression<A> || IndexExpression<B>)
auto operator+(const A& a, const B& b) {
  return make_affine(hana::union_(indices_of<A>(), indices_of<B>()), to_affine(a) + to_affine(b));
}

template <Coordinate A, Coordinate B>
  requires(IndexExpression<A> || IndexExpression<B>)
auto operator-(const A& a, const B& b) {
  return make_affine(hana::union_(indices_of<A>(), indices_of<B>()), to_affine(a) - to_affine(b));
}

template <IndexExpression A>
auto operator-(const A& a) {
  return make_affine(indices_of<A>(), (-1) * to_affine(a));
}

template <std::integral Factor, IndexExpression A>
auto operator*(Factor factor, const A& a) {
  return make_affine(indices_of<A>(), coordinate_integer(factor) * to_affine(a));
}

template <IndexExpression A, std::integral Factor>
auto operator*(const A& a, Factor factor) {
  return make_affine(indices_of<A>(), coordinate_integer(factor) * to_affine(a));
}

template <IndexExpression A, IndexExpression B>
auto operator*(const A& a, const B& b) {
  static_assert(always_false<A, B>,
                "isaac: non-affine index expression: a coordinate may add indices and multiply them by integers "
                "(2 * p + r - 1), but not multiply two indices (p * r)");
  return a + b;
}

template <IndexExpression A, Coordinate B>
auto operator/(const A& a, const B& b) {
  static_assert(always_false<A, B>,
                "isaac: non-affine index expression: a coordinate may add indices and multiply them by integers "
                "(2 * p + r - 1), but not divide them");
  return a + b;
}

template <IndexExpression A, Coordinate B>
auto operator%(const A& a, const B& b) {
  static_assert(always_false<A, B>,
                "isaac: non-affine index expression: a coordinate may add indices and multiply them by integers "
                "(2 * p + r - 1), but not take a remainder");
  return a + b;
}

}  // namespace isaac::dsl
