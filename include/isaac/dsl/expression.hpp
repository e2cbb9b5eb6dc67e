#pragma once
// Value expressions: tensor accesses, scalar parameters, literals, + - * /, element-wise calls and
// sums. Each node type states at compile time which indices it leaves free, which it sums over and
// how many sums it holds (hana sets of index names); statement.hpp checks them.
#include <isaac/dsl/index.hpp>
#include <isaac/ir/contraction.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <boost/hana/back.hpp>
#include <boost/hana/difference.hpp>
#include <boost/hana/drop_back.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/unpack.hpp>

namespace isaac::dsl {

template <class T>
inline constexpr bool is_value_node = false;
template <class T>
concept ValueNode = is_value_node<std::remove_cvref_t<T>>;
// A node, or a number that becomes a literal.
template <class T>
concept ValueOperand = ValueNode<T> || std::is_arithmetic_v<std::remove_cvref_t<T>>;

constexpr auto union_all() { return hana::make_set(); }
template <class First, class... Rest>
constexpr auto union_all(First first, Rest... rest) {
  return hana::union_(first, union_all(rest...));
}

// The leaves of value expressions that involve no index.
struct Leaf {
  static constexpr auto free_indices = hana::make_set();
  static constexpr auto summed_indices = hana::make_set();
  static constexpr int sums = 0;
};

struct Constant : Leaf {
  double value;
  ir::Expr to_ir(std::vector<ir::Tensor>&) const { return ir::constant(value); }
};

// A scalar parameter, bound at call time (alpha, beta).
struct Scalar : Leaf {
  explicit Scalar(std::string name) : name(std::move(name)) {}
  std::string name;
  ir::Expr to_ir(std::vector<ir::Tensor>&) const { return ir::scalar(name); }
};

template <class... Coordinates>
struct Access {
  static constexpr auto free_indices = union_all(indices_of<Coordinates>()...);
  static constexpr auto summed_indices = hana::make_set();
  static constexpr int sums = 0;

  std::string tensor;
  ir::DType dtype;
  hana::tuple<Coordinates...> coordinates;

  Access(std::string tensor, ir::DType dtype, hana::tuple<Coordinates...> coordinates)
      : tensor(std::move(tensor)), dtype(dtype), coordinates(std::move(coordinates)) {}
  Access(const Access&) = default;

  // `C(m, n) = right side` makes a statement (statement.hpp), it assigns nothing.
  template <ValueOperand Right>
  auto operator=(const Right& right) const;
  auto operator=(const Access& right) const;

  ir::Access to_ir_access() const {
    ir::Access a{tensor, {}};
    hana::for_each(coordinates, [&](const auto& c) { a.coordinates.push_back(to_affine(c)); });
    return a;
  }
  ir::Tensor declaration() const {
    ir::Tensor t;
    t.name = tensor;
    t.dtype = dtype;
    t.rank = static_cast<int>(sizeof...(Coordinates));
    return t;
  }
  ir::Expr to_ir(std::vector<ir::Tensor>& tensors) const {
    tensors.push_back(declaration());
    return ir::access(to_ir_access());
  }
};

template <ir::Op Operation, class Left, class Right>
struct Binary {
  static constexpr auto free_indices = hana::union_(Left::free_indices, Right::free_indices);
  static constexpr auto summed_indices = hana::union_(Left::summed_indices, Right::summed_indices);
  static constexpr int sums = Left::sums + Right::sums;
  Left left;
  Right right;
  ir::Expr to_ir(std::vector<ir::Tensor>& tensors) const {
    ir::Expr l = left.to_ir(tensors);
    ir::Expr r = right.to_ir(tensors);
    if constexpr (Operation == ir::Op::add) return ir::add(std::move(l), std::move(r));
    else if constexpr (Operation == ir::Op::sub) return ir::sub(std::move(l), std::move(r));
    else if constexpr (Operation == ir::Op::mul) return ir::mul(std::move(l), std::move(r));
    else return ir::div(std::move(l), std::move(r));
  }
};

template <class Operand>
struct Negate {
  static constexpr auto free_indices = Operand::free_indices;
  static constexpr auto summed_indices = Operand::summed_indices;
  static constexpr int sums = Operand::sums;
  Operand operand;
  ir::Expr to_ir(std::vector<ir::Tensor>& tensors) const { return ir::neg(operand.to_ir(tensors)); }
};

// A function name as a template argument: Function<"relu", 1>.
template <std::size_t N>
struct FixedString {
  char text[N];
  constexpr FixedString(const char (&s)[N]) { std::copy_n(s, N, text); }
};

template <FixedString Name, class... Arguments>
struct Call {
  static constexpr auto free_indices = union_all(Arguments::free_indices...);
  static constexpr auto summed_indices = union_all(Arguments::summed_indices...);
  static constexpr int sums = (0 + ... + Arguments::sums);
  hana::tuple<Arguments...> arguments;
  ir::Expr to_ir(std::vector<ir::Tensor>& tensors) const {
    std::vector<ir::Expr> operands;
    hana::for_each(arguments, [&](const auto& a) { operands.push_back(a.to_ir(tensors)); });
    return ir::call(Name.text, std::move(operands));
  }
};

template <class Body, char... Names>
struct Sum {
  static constexpr auto reduced = index_set<Names...>();
  static constexpr auto free_indices = hana::difference(Body::free_indices, reduced);
  static constexpr auto summed_indices = hana::union_(reduced, Body::summed_indices);
  static constexpr int sums = Body::sums + 1;
  Body body;
  ir::Expr to_ir(std::vector<ir::Tensor>& tensors) const {
    return ir::sum({std::string(1, Names)...}, body.to_ir(tensors));
  }
};

template <>
inline constexpr bool is_value_node<Constant> = true;
template <>
inline constexpr bool is_value_node<Scalar> = true;
template <class... Coordinates>
inline constexpr bool is_value_node<Access<Coordinates...>> = true;
template <ir::Op Operation, class Left, class Right>
inline constexpr bool is_value_node<Binary<Operation, Left, Right>> = true;
template <class Operand>
inline constexpr bool is_value_node<Negate<Operand>> = true;
template <FixedString Name, class... Arguments>
inline constexpr bool is_value_node<Call<Name, Arguments...>> = true;
template <class Body, char... Names>
inline constexpr bool is_value_node<Sum<Body, Names...>> = true;

template <ValueOperand T>
auto as_node(const T& operand) {
  if constexpr (ValueNode<T>) return operand;
  else return Constant{{}, static_cast<double>(operand)};
}
template <class T>
using node_t = decltype(as_node(std::declval<T>()));

template <ValueOperand A, ValueOperand B>
  requires(ValueNode<A> || ValueNode<B>)
auto operator+(const A& a, const B& b) {
  return Binary<ir::Op::add, node_t<A>, node_t<B>>{as_node(a), as_node(b)};
}
template <ValueOperand A, ValueOperand B>
  requires(ValueNode<A> || ValueNode<B>)
auto operator-(const A& a, const B& b) {
  return Binary<ir::Op::sub, node_t<A>, node_t<B>>{as_node(a), as_node(b)};
}
template <ValueOperand A, ValueOperand B>
  requires(ValueNode<A> || ValueNode<B>)
auto operator*(const A& a, const B& b) {
  return Binary<ir::Op::mul, node_t<A>, node_t<B>>{as_node(a), as_node(b)};
}
template <ValueOperand A, ValueOperand B>
  requires(ValueNode<A> || ValueNode<B>)
auto operator/(const A& a, const B& b) {
  return Binary<ir::Op::div, node_t<A>, node_t<B>>{as_node(a), as_node(b)};
}
template <ValueNode A>
auto operator-(const A& a) {
  return Negate<A>{a};
}

// An index where a value belongs (p * A(m, k)) gets a message rather than a list of overloads.
template <class A, class B>
  requires((IndexExpression<A> && ValueNode<B>) || (ValueNode<A> && IndexExpression<B>))
auto operator*(const A&, const B&) {
  static_assert(always_false<A, B>, "isaac: an index is not a value: use indices only as tensor coordinates");
  return Constant{};
}
template <class A, class B>
  requires((IndexExpression<A> && ValueNode<B>) || (ValueNode<A> && IndexExpression<B>))
auto operator+(const A&, const B&) {
  static_assert(always_false<A, B>, "isaac: an index is not a value: use indices only as tensor coordinates");
  return Constant{};
}

// An element-wise function of `Arity` values; ir/functions.hpp says how to add one.
template <FixedString Name, std::size_t Arity>
struct Function {
  template <ValueOperand... Arguments>
  auto operator()(const Arguments&... arguments) const {
    static_assert(sizeof...(Arguments) == Arity, "isaac: wrong number of arguments to an element-wise function");
    return Call<Name, node_t<Arguments>...>{hana::make_tuple(as_node(arguments)...)};
  }
};

inline constexpr Function<"relu", 1> relu{};
inline constexpr Function<"sigmoid", 1> sigmoid{};
inline constexpr Function<"gelu", 1> gelu{};
inline constexpr Function<"silu", 1> silu{};
inline constexpr Function<"maximum", 2> maximum{};
inline constexpr Function<"minimum", 2> minimum{};

template <class Body, char... Names>
auto make_sum(const Body& body) {
  static_assert(set_size<decltype(index_set<Names...>())> == sizeof...(Names), "isaac: sum lists an index twice");
  static_assert(Body::sums == 0, "isaac: sums do not nest: list every reduction index in one sum(i, j, ..., body)");
  static_assert(is_subset<decltype(index_set<Names...>()), decltype(Body::free_indices)>,
                "isaac: sum over an index that its body never uses");
  return Sum<Body, Names...>{body};
}

template <class T>
inline constexpr bool is_index = false;
template <char Name>
inline constexpr bool is_index<Index<Name>> = true;

// sum(k, body) or sum(c, r, s, body): the body summed over every value of the listed indices.
template <class... Arguments>
auto sum(const Arguments&... arguments) {
  static_assert(sizeof...(Arguments) >= 2, "isaac: sum(i, j, ..., body) takes at least one index and a body");
  const auto all = hana::make_tuple(arguments...);
  const auto body = as_node(hana::back(all));
  return hana::unpack(hana::drop_back(all), [&](auto... indices) {
    static_assert((is_index<decltype(indices)> && ...),
                  "isaac: the arguments of sum before its body must be plain indices (Index<'k'>)");
    return make_sum<std::remove_const_t<decltype(body)>, decltype(indices)::name...>(body);
  });
}

}  // namespace isaac::dsl
