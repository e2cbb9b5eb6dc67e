#pragma once
// Tensor placeholders: a name, an element type and a rank. Shapes, strides and memory come at call
// time; an access T(i, j, ...) takes exactly `Rank` coordinates.
#include <isaac/dsl/statement.hpp>
#include <isaac/ir/dtype.hpp>

#include <string>
#include <type_traits>

namespace isaac::dsl {

// Element types without a standard C++ spelling; they only name the dtype.
struct half {};
struct bfloat16 {};

template <class T>
inline constexpr bool is_element_type = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                        std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

template <class T>
constexpr ir::DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return ir::DType::f32;
  else if constexpr (std::is_same_v<T, double>) return ir::DType::f64;
  else if constexpr (std::is_same_v<T, half>) return ir::DType::f16;
  else return ir::DType::bf16;
}

template <class T, int Rank>
class Tensor {
 public:
  static_assert(is_element_type<T>,
                "isaac: a tensor's element type is float, double, isaac::dsl::half or isaac::dsl::bfloat16");
  static_assert(Rank >= 0, "isaac: a tensor's rank is zero or more");
  static constexpr ir::DType dtype = dtype_of<T>();

  explicit Tensor(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  template <class... Coordinates>
  auto operator()(const Coordinates&... coordinates) const {
    static_assert(sizeof...(Coordinates) == Rank,
                  "isaac: wrong number of indices: an access to a Tensor<T, Rank> takes exactly Rank indices");
    static_assert((Coordinate<Coordinates> && ...),
                  "isaac: a tensor coordinate is an index, an affine expression of indices (2 * p + r - 1) or an "
                  "integer");
    return Access<Coordinates...>(name_, dtype, hana::make_tuple(coordinates...));
  }

 private:
  std::string name_;
};

}  // namespace isaac::dsl
