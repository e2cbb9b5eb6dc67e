#include <isaac/error.hpp>
#include <isaac/ir/evaluate.hpp>
#include <isaac/ir/functions.hpp>
#include <isaac/ir/pattern.hpp>
#include <isaac/ir/text.hpp>
#include <isaac/ir/verify.hpp>

#include "walk.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

// The generic evaluator runs a loop nest over every index but one, the vector index x, and
// evaluates the expression for all values of x at once: each node yields either one value
// (uniform along x) or a vector of extent(x) values. Interpretation then costs once per vector,
// not once per element, and the element loops are plain contiguous loops the compiler vectorises.

namespace isaac::ir {

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

// The indices of the loop nest, numbered: output indices first, then the summed ones.
struct IndexSpace {
  std::vector<std::string> names;
  std::vector<std::int64_t> extents;
  int id(std::string_view name) const {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  }
};

// An access with its coordinates as coefficient rows over the numbered indices.
struct CompiledAccess {
  const double* data = nullptr;
  std::vector<std::int64_t> extent, stride, constant;  // per dimension
  std::vector<std::vector<std::int64_t>> coefficients;  // [dimension][index id]
};

CompiledAccess compile_access(const Access& a, const Tensor& t, const double* data, const IndexSpace& space) {
  CompiledAccess compiled;
  compiled.data = data;
  compiled.extent = t.shape;
  compiled.stride = t.strides;
  for (const Affine& coordinate : a.coordinates) {
    compiled.constant.push_back(coordinate.constant);
    std::vector<std::int64_t> row(space.names.size(), 0);
    for (const AffineTerm& term : coordinate.terms) row[space.id(term.index)] = term.coefficient;
    compiled.coefficients.push_back(std::move(row));
  }
  return compiled;
}

// One node's value over the vector index: uniform, or `length` values at `data` with `stride`.
struct Value {
  bool uniform = true;
  double scalar = 0;
  const double* data = nullptr;
  std::ptrdiff_t stride = 1;
};

enum class Code { access, scalar, reduction, add, sub, mul, div, neg, call };

struct Instruction {
  Code code = Code::scalar;
  int operand = 0;      // access number, for Code::access
  double value = 0;     // for Code::scalar (literals and bound parameters alike)
  int arity = 0;        // for Code::call
  std::function<double(std::span<const double>)> function;
};

// An expression flattened to postfix order over a value stack.
struct Program {
  std::vector<Instruction> code;
  std::vector<CompiledAccess> accesses;
};

void flatten(const Expr& e, const Contraction& c, const HostInputs& inputs, double* output,
             const ScalarValues& scalars, const IndexSpace& space, Program& program) {
  for (const Expr& operand : e.operands) flatten(operand, c, inputs, output, scalars, space, program);
  Instruction instruction;
  instruction.code = Code::scalar;
  switch (e.op) {
    case Op::access: {
      const double* data = output;
      if (e.access.tensor != c.output.tensor) {
        const auto input = inputs.find(e.access.tensor);
        if (input == inputs.end() || input->second == nullptr)
          throw InvalidArgument(fmt::format("evaluate {}: no host array for input {}", statement_text(c), e.access.tensor));
        data = input->second;
      }
      instruction.code = Code::access;
      instruction.operand = static_cast<int>(program.accesses.size());
      program.accesses.push_back(compile_access(e.access, tensor(c, e.access.tensor), data, space));
      break;
    }
    case Op::scalar: {
      const auto bound = scalars.find(e.name);
      if (bound == scalars.end())
        throw InvalidArgument(fmt::format("evaluate {}: no value for scalar parameter {}", statement_text(c), e.name));
      instruction.value = bound->second;
      break;
    }
    case Op::constant: instruction.value = e.value; break;
    case Op::reduction: instruction.code = Code::reduction; break;
    case Op::add: instruction.code = Code::add; break;
    case Op::sub: instruction.code = Code::sub; break;
    case Op::mul: instruction.code = Code::mul; break;
    case Op::div: instruction.code = Code::div; break;
    case Op::neg: instruction.code = Code::neg; break;
    case Op::call:
      instruction.code = Code::call;
      instruction.arity = static_cast<int>(e.operands.size());
      instruction.function = find_function(e.name)->evaluate;
      break;
    case Op::sum: throw InvalidArgument("evaluate: a sum inside a split contraction");
  }
  program.code.push_back(std::move(instruction));
}

// Runs a Program at each point of the loop nest over every index but `x`.
class VectorMachine {
 public:
  VectorMachine(Program program, int x, std::int64_t length)
      : program_(std::move(program)), length_(length) {
    scratch_.resize(program_.code.size() + 1, std::vector<double>(static_cast<std::size_t>(length_)));
    for (const CompiledAccess& a : program_.accesses) loads_.push_back(plan_load(a, x));
  }

  std::int64_t length() const { return length_; }

  // The value of the program at outer point `at` (at[x] is ignored); `reduction` feeds Code::reduction.
  Value run(const std::vector<std::int64_t>& at, Value reduction) {
    stack_.clear();
    for (std::size_t pc = 0; pc < program_.code.size(); ++pc) {
      const Instruction& in = program_.code[pc];
      std::vector<double>& out = scratch_[pc];
      switch (in.code) {
        case Code::access: stack_.push_back(load(loads_[in.operand], at, out)); break;
        case Code::scalar: stack_.push_back(Value{true, in.value}); break;
        case Code::reduction: stack_.push_back(reduction); break;
        case Code::neg: stack_.back() = unary(stack_.back(), out, [](double v) { return -v; }); break;
        case Code::add: binary(out, [](double a, double b) { return a + b; }); break;
        case Code::sub: binary(out, [](double a, double b) { return a - b; }); break;
        case Code::mul: binary(out, [](double a, double b) { return a * b; }); break;
        case Code::div: binary(out, [](double a, double b) { return a / b; }); break;
        case Code::call: call(in, out); break;
      }
    }
    return stack_.back();
  }

  // `value` as a contiguous vector (gathered into spare scratch when strided).
  const double* contiguous(const Value& value) {
    std::vector<double>& spare = scratch_.back();
    if (value.uniform) {
      std::fill(spare.begin(), spare.end(), value.scalar);
      return spare.data();
    }
    if (value.stride == 1) return value.data;
    for (std::int64_t i = 0; i < length_; ++i) spare[i] = value.data[i * value.stride];
    return spare.data();
  }

 private:
  // An access's coordinates split for the vector index: per dimension, the other indices with a
  // nonzero coefficient, and the coefficient of x.
  struct LoadPlan {
    const double* data;
    std::vector<std::int64_t> extent, stride, constant, step;
    std::vector<std::vector<std::pair<int, std::int64_t>>> terms;
  };

  static LoadPlan plan_load(const CompiledAccess& a, int x) {
    LoadPlan plan{a.data, a.extent, a.stride, a.constant, {}, {}};
    for (const std::vector<std::int64_t>& row : a.coefficients) {
      plan.step.push_back(x < 0 ? 0 : row[x]);
      std::vector<std::pair<int, std::int64_t>> terms;
      for (std::size_t id = 0; id < row.size(); ++id)
        if (static_cast<int>(id) != x && row[id] != 0) terms.emplace_back(static_cast<int>(id), row[id]);
      plan.terms.push_back(std::move(terms));
    }
    return plan;
  }

  Value load(const LoadPlan& a, const std::vector<std::int64_t>& at, std::vector<double>& out) const {
    std::int64_t offset = 0, x_stride = 0, first = 0, last = length_;  // valid for first <= i < last
    bool uses_x = false;
    for (std::size_t d = 0; d < a.extent.size(); ++d) {
      std::int64_t base = a.constant[d];
      for (const auto& [id, coefficient] : a.terms[d]) base += coefficient * at[id];
      const std::int64_t step = a.step[d];
      offset += base * a.stride[d];
      x_stride += step * a.stride[d];
      uses_x = uses_x || step != 0;
      // 0 <= base + step * i <= extent - 1
      if (step == 0) {
        if (base < 0 || base >= a.extent[d]) return Value{true, 0.0};
      } else if (step > 0) {
        first = std::max(first, ceil_div(-base, step));
        last = std::min(last, floor_div(a.extent[d] - 1 - base, step) + 1);
      } else {
        first = std::max(first, ceil_div(a.extent[d] - 1 - base, step));
        last = std::min(last, floor_div(-base, step) + 1);
      }
    }
    if (!uses_x) return Value{true, a.data[offset]};
    if (first >= last) return Value{true, 0.0};
    if (first == 0 && last == length_) return Value{false, 0.0, a.data + offset, x_stride};
    std::fill(out.begin(), out.begin() + first, 0.0);
    for (std::int64_t i = first; i < last; ++i) out[i] = a.data[offset + i * x_stride];
    std::fill(out.begin() + last, out.end(), 0.0);
    return Value{false, 0.0, out.data(), 1};
  }

  template <class F>
  Value unary(const Value& v, std::vector<double>& out, F f) {
    if (v.uniform) return Value{true, f(v.scalar)};
    for (std::int64_t i = 0; i < length_; ++i) out[i] = f(v.data[i * v.stride]);
    return Value{false, 0.0, out.data(), 1};
  }

  template <class F>
  void binary(std::vector<double>& out, F f) {
    const Value b = stack_.back();
    stack_.pop_back();
    const Value a = stack_.back();
    double* o = out.data();
    if (a.uniform && b.uniform) {
      stack_.back() = Value{true, f(a.scalar, b.scalar)};
      return;
    }
    if (a.uniform && b.stride == 1) {
      for (std::int64_t i = 0; i < length_; ++i) o[i] = f(a.scalar, b.data[i]);
    } else if (b.uniform && a.stride == 1) {
      for (std::int64_t i = 0; i < length_; ++i) o[i] = f(a.data[i], b.scalar);
    } else if (!a.uniform && !b.uniform && a.stride == 1 && b.stride == 1) {
      for (std::int64_t i = 0; i < length_; ++i) o[i] = f(a.data[i], b.data[i]);
    } else {
      for (std::int64_t i = 0; i < length_; ++i)
        o[i] = f(a.uniform ? a.scalar : a.data[i * a.stride], b.uniform ? b.scalar : b.data[i * b.stride]);
    }
    stack_.back() = Value{false, 0.0, o, 1};
  }

  void call(const Instruction& in, std::vector<double>& out) {
    const std::vector<Value> arguments(stack_.end() - in.arity, stack_.end());
    stack_.resize(stack_.size() - in.arity);
    std::vector<double> values(static_cast<std::size_t>(in.arity));
    const bool uniform = std::all_of(arguments.begin(), arguments.end(), [](const Value& v) { return v.uniform; });
    for (std::int64_t i = 0; i < (uniform ? 1 : length_); ++i) {
      for (int j = 0; j < in.arity; ++j)
        values[j] = arguments[j].uniform ? arguments[j].scalar : arguments[j].data[i * arguments[j].stride];
      out[i] = in.function(values);
    }
    stack_.push_back(uniform ? Value{true, out[0]} : Value{false, 0.0, out.data(), 1});
  }

  Program program_;
  std::int64_t length_;
  std::vector<LoadPlan> loads_;
  std::vector<std::vector<double>> scratch_;  // one vector per instruction, plus a spare
  std::vector<Value> stack_;
};

// Visits every point of the indices in `order` (outermost first), calling visit(at).
template <class Visit>
void for_each_point(const IndexSpace& space, const std::vector<int>& order, std::vector<std::int64_t>& at,
                    Visit&& visit) {
  std::fill(at.begin(), at.end(), 0);
  for (;;) {
    visit(at);
    int level = static_cast<int>(order.size()) - 1;
    for (; level >= 0; --level) {
      const int id = order[level];
      if (++at[id] < space.extents[id]) break;
      at[id] = 0;
    }
    if (level < 0) return;
  }
}

// Smallest absolute stride each index moves by in any of the accesses.
std::vector<std::int64_t> smallest_strides(const IndexSpace& space, const std::vector<const CompiledAccess*>& accesses) {
  std::vector<std::int64_t> smallest(space.names.size(), INT64_MAX);
  for (const CompiledAccess* a : accesses)
    for (std::size_t id = 0; id < space.names.size(); ++id) {
      std::int64_t stride = 0;
      for (std::size_t d = 0; d < a->extent.size(); ++d) stride += a->coefficients[d][id] * a->stride[d];
      if (stride != 0) smallest[id] = std::min<std::int64_t>(smallest[id], std::llabs(stride));
    }
  return smallest;
}

// Outer loops ordered so that indices moving through memory in small steps run innermost.
std::vector<int> loop_order(const IndexSpace& space, const std::vector<int>& ids, int x,
                            const std::vector<const CompiledAccess*>& accesses) {
  const std::vector<std::int64_t> smallest = smallest_strides(space, accesses);
  std::vector<int> order;
  for (int id : ids)
    if (id != x) order.push_back(id);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return smallest[a] > smallest[b]; });
  return order;
}

// The vector index: prefer one along which many accesses are contiguous (or constant), then the
// longest; an index shorter than 16 only when nothing is longer.
int vector_index(const IndexSpace& space, const std::vector<int>& candidates,
                 const std::vector<const CompiledAccess*>& accesses) {
  int best = -1;
  std::tuple<bool, int, std::int64_t> best_key{};
  for (int id : candidates) {
    int score = 0;
    for (const CompiledAccess* a : accesses) {
      std::int64_t stride = 0;
      for (std::size_t d = 0; d < a->extent.size(); ++d) stride += a->coefficients[d][id] * a->stride[d];
      score += std::llabs(stride) == 1 ? 2 : stride == 0 ? 1 : 0;
    }
    const auto key = std::make_tuple(space.extents[id] >= 16, score, space.extents[id]);
    if (best < 0 || key > best_key) best = id, best_key = key;
  }
  return best;
}

// A dense accumulator over the output indices, nested in memory as the output is (so that pattern
// analysis sees the output's layout in it).
struct Accumulator {
  std::vector<double> values;
  std::vector<std::int64_t> strides;  // per index id; 0 for summed indices
};

Accumulator make_accumulator(const IndexSpace& space, std::size_t output_count, const CompiledAccess& output) {
  std::vector<std::int64_t> output_strides(output_count, 0);
  for (std::size_t d = 0; d < output.extent.size(); ++d)
    for (std::size_t id = 0; id < output_count; ++id) output_strides[id] += output.coefficients[d][id] * output.stride[d];
  std::vector<int> order(output_count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return std::llabs(output_strides[a]) < std::llabs(output_strides[b]); });
  Accumulator acc;
  acc.strides.assign(space.names.size(), 0);
  std::int64_t size = 1;
  for (int id : order) {
    acc.strides[id] = size;
    size *= space.extents[id];
  }
  acc.values.assign(static_cast<std::size_t>(size), 0.0);
  return acc;
}

// The accumulator seen as an access, for choosing the vector index and the loop order.
CompiledAccess accumulator_access(const Accumulator& acc, const IndexSpace& space, std::size_t output_count) {
  CompiledAccess a;
  for (std::size_t id = 0; id < output_count; ++id) {
    a.extent.push_back(space.extents[id]);
    a.stride.push_back(acc.strides[id]);
    a.constant.push_back(0);
    std::vector<std::int64_t> row(space.names.size(), 0);
    row[id] = 1;
    a.coefficients.push_back(std::move(row));
  }
  return a;
}

std::int64_t offset_in(const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& at, int skip) {
  std::int64_t offset = 0;
  for (std::size_t id = 0; id < strides.size(); ++id)
    if (static_cast<int>(id) != skip) offset += strides[id] * at[id];
  return offset;
}

std::vector<const CompiledAccess*> pointers(const Program& p) {
  std::vector<const CompiledAccess*> result;
  for (const CompiledAccess& a : p.accesses) result.push_back(&a);
  return result;
}

// The statement `acc(outputs) = sum(...)` in float64, with the accumulator's layout: when pattern
// analysis recognises it, the sum runs through reference_gemm.
Contraction sum_into_accumulator(const Contraction& c, const IndexSpace& space, const Accumulator& acc) {
  Contraction summed = c;
  summed.epilogue = reduction();
  for (Tensor& t : summed.tensors) t.dtype = DType::f64, t.address = 0;
  Tensor& out = tensor(summed, c.output.tensor);
  for (int d = 0; d < out.rank; ++d) out.strides[d] = acc.strides[space.id(c.output.coordinates[d].terms[0].index)];
  return summed;
}

const double* input_of(const HostInputs& inputs, const std::string& name) {
  const auto found = inputs.find(name);
  return found == inputs.end() ? nullptr : found->second;
}

// Implicit GEMM: per image and block of output pixels, the input taps are gathered into a matrix
// (pixels x C*R*S, zero where padding) and multiplied by the filters as a (C*R*S x K) matrix.
void sum_as_conv(const Conv& v, const double* in, const double* filter, double alpha, Accumulator& acc) {
  const std::int64_t crs = v.c * v.r * v.s, pixels = v.p * v.q;
  const auto& is = v.input_strides;
  const auto& fs = v.filter_strides;
  const auto& os = v.output_strides;
  std::vector<double> filters(static_cast<std::size_t>(crs * v.k));
  for (std::int64_t k = 0; k < v.k; ++k)
    for (std::int64_t c = 0; c < v.c; ++c)
      for (std::int64_t r = 0; r < v.r; ++r)
        for (std::int64_t s = 0; s < v.s; ++s)
          filters[(c * v.r + r) * v.s + s + k * crs] = filter[k * fs[0] + c * fs[1] + r * fs[2] + s * fs[3]];
  const std::int64_t block = std::clamp<std::int64_t>((std::int64_t{1} << 22) / crs, 1, pixels);
  std::vector<double> taps(static_cast<std::size_t>(block * crs)), product(static_cast<std::size_t>(block * v.k));
  for (std::int64_t n = 0; n < v.n; ++n)
    for (std::int64_t first = 0; first < pixels; first += block) {
      const std::int64_t rows = std::min(block, pixels - first);
      for (std::int64_t c = 0; c < v.c; ++c)
        for (std::int64_t r = 0; r < v.r; ++r)
          for (std::int64_t s = 0; s < v.s; ++s) {
            double* column = taps.data() + ((c * v.r + r) * v.s + s) * rows;
            for (std::int64_t row = 0; row < rows; ++row) {
              const std::int64_t p = (first + row) / v.q, q = (first + row) % v.q;
              const std::int64_t h = p * v.stride_h + r * v.dilation_h - v.pad_h;
              const std::int64_t w = q * v.stride_w + s * v.dilation_w - v.pad_w;
              const bool inside = h >= 0 && h < v.h && w >= 0 && w < v.w;
              column[row] = inside ? in[n * is[0] + c * is[1] + h * is[2] + w * is[3]] : 0.0;
            }
          }
      reference_gemm(dense_gemm(DType::f64, rows, v.k, crs, false, false), alpha, 0.0, taps.data(), filters.data(),
                     product.data());
      for (std::int64_t k = 0; k < v.k; ++k)
        for (std::int64_t row = 0; row < rows; ++row) {
          const std::int64_t p = (first + row) / v.q, q = (first + row) % v.q;
          acc.values[n * os[0] + k * os[1] + p * os[2] + q * os[3]] = product[row + k * rows];
        }
    }
}

// The sum through reference_gemm when pattern analysis finds a GEMM or a CONV; false otherwise.
bool sum_by_pattern(const Contraction& c, const HostInputs& inputs, const ScalarValues& scalars,
                    const IndexSpace& space, Accumulator& acc) {
  const Pattern pattern = analyze(sum_into_accumulator(c, space, acc));
  if (pattern.kind == PatternKind::neither) return false;
  const double* a = input_of(inputs, pattern.a);
  const double* b = input_of(inputs, pattern.b);
  if (a == nullptr || b == nullptr) return false;  // the generic path names the missing input
  const double alpha = evaluate_scalar(pattern.linear_epilogue->alpha, scalars);
  if (pattern.kind == PatternKind::gemm) reference_gemm(pattern.gemm, alpha, 0.0, a, b, acc.values.data());
  else sum_as_conv(pattern.conv, a, b, alpha, acc);
  return true;
}

}  // namespace

double evaluate_scalar(const Expr& e, const ScalarValues& scalars) {
  auto operand = [&](int i) { return evaluate_scalar(e.operands.at(i), scalars); };
  switch (e.op) {
    case Op::constant: return e.value;
    case Op::scalar: {
      const auto bound = scalars.find(e.name);
      if (bound == scalars.end()) throw InvalidArgument(fmt::format("no value for scalar parameter {}", e.name));
      return bound->second;
    }
    case Op::add: return operand(0) + operand(1);
    case Op::sub: return operand(0) - operand(1);
    case Op::mul: return operand(0) * operand(1);
    case Op::div: return operand(0) / operand(1);
    case Op::neg: return -operand(0);
    case Op::call: {
      const auto f = find_function(e.name);
      if (!f) throw InvalidArgument(fmt::format("unknown element-wise function '{}'", e.name));
      std::vector<double> values;
      for (std::size_t i = 0; i < e.operands.size(); ++i) values.push_back(operand(static_cast<int>(i)));
      return f->evaluate(values);
    }
    default: throw InvalidArgument(fmt::format("{} is not a scalar expression", to_string(e)));
  }
}

void evaluate(const Contraction& c, const HostInputs& inputs, double* output, const ScalarValues& scalars) {
  verify_bound(c);
  if (output == nullptr) throw InvalidArgument(fmt::format("evaluate {}: no host array for the output", statement_text(c)));
  const auto extents = index_extents(c);
  IndexSpace space;
  for (const std::string& index : output_indices(c)) space.names.push_back(index);
  const std::size_t output_count = space.names.size();
  for (const std::string& index : c.reduction) space.names.push_back(index);
  for (const std::string& index : space.names) space.extents.push_back(extents.at(index));
  std::vector<int> all_ids(space.names.size()), output_ids(output_count);
  std::iota(all_ids.begin(), all_ids.end(), 0);
  std::iota(output_ids.begin(), output_ids.end(), 0);
  std::vector<std::int64_t> at(space.names.size(), 0);

  const CompiledAccess written = compile_access(c.output, output_tensor(c), output, space);
  Accumulator acc;
  if (!c.reduction.empty()) {
    acc = make_accumulator(space, output_count, written);
    if (!sum_by_pattern(c, inputs, scalars, space, acc)) {
      Program body;
      flatten(c.body, c, inputs, output, scalars, space, body);
      const CompiledAccess acc_access = accumulator_access(acc, space, output_count);
      std::vector<const CompiledAccess*> accesses = pointers(body);
      accesses.push_back(&acc_access);
      const int x = vector_index(space, all_ids, accesses);
      const std::vector<int> order = loop_order(space, all_ids, x, accesses);
      VectorMachine machine(std::move(body), x, x < 0 ? 1 : space.extents[x]);
      const bool x_is_output = x >= 0 && static_cast<std::size_t>(x) < output_count;
      const std::int64_t x_acc_stride = x_is_output ? acc.strides[x] : 0;
      for_each_point(space, order, at, [&](const std::vector<std::int64_t>& point) {
        const Value value = machine.run(point, Value{});
        double* target = acc.values.data() + offset_in(acc.strides, point, x);
        if (x_is_output) {
          const double* v = machine.contiguous(value);
          if (x_acc_stride == 1)
            for (std::int64_t i = 0; i < machine.length(); ++i) target[i] += v[i];
          else
            for (std::int64_t i = 0; i < machine.length(); ++i) target[i * x_acc_stride] += v[i];
        } else if (value.uniform) {
          *target += value.scalar * static_cast<double>(machine.length());
        } else {
          double total = 0;
          for (std::int64_t i = 0; i < machine.length(); ++i) total += value.data[i * value.stride];
          *target += total;
        }
      });
    }
  }

  // The epilogue at every output point, vectorised along the output's most contiguous index.
  Program epilogue;
  flatten(c.epilogue, c, inputs, output, scalars, space, epilogue);
  std::vector<const CompiledAccess*> store_first{&written};
  const int x = vector_index(space, output_ids, store_first);
  const std::vector<int> order = loop_order(space, output_ids, x, store_first);
  std::vector<std::int64_t> out_strides(space.names.size(), 0);
  for (std::size_t d = 0; d < written.extent.size(); ++d)
    for (std::size_t id = 0; id < output_count; ++id) out_strides[id] += written.coefficients[d][id] * written.stride[d];
  VectorMachine machine(std::move(epilogue), x, x < 0 ? 1 : space.extents[x]);
  const std::int64_t x_out_stride = x < 0 ? 0 : out_strides[x];
  const std::ptrdiff_t x_acc_stride = x < 0 || acc.values.empty() ? 0 : acc.strides[x];
  std::vector<double> result(static_cast<std::size_t>(machine.length()));
  for_each_point(space, order, at, [&](const std::vector<std::int64_t>& point) {
    const Value sum = acc.values.empty()
                          ? Value{}
                          : Value{false, 0.0, acc.values.data() + offset_in(acc.strides, point, x), x_acc_stride};
    // Through `result`: the epilogue may read the very elements it overwrites.
    const double* v = machine.contiguous(machine.run(point, sum));
    std::copy(v, v + machine.length(), result.begin());
    double* target = output + offset_in(out_strides, point, x);
    for (std::int64_t i = 0; i < machine.length(); ++i) target[i * x_out_stride] = result[i];
  });
}

}  // namespace isaac::ir
