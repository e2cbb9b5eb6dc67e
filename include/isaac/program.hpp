#pragma once
// isaac::compile: a statement of the DSL (or a contraction read by ir::parse) becomes a Program.
// Calling a Program binds the shapes and strides of the tensors passed, recognises the pattern,
// chooses parameters (choose_gemm: model + top-k re-benchmark) on first sight of a shape and keeps
// the decision and the compiled kernel in memory for the next call with that shape.
#include <isaac/dsl/statement.hpp>
#include <isaac/ir/contraction.hpp>
#include <isaac/ir/evaluate.hpp>
#include <isaac/ir/verify.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/tuning.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace isaac {

// A tensor in device memory: element (0, ..., 0) at `data` (the user's allocation or a Buffer),
// its shape and its element strides (empty: dense row-major).
struct DeviceTensor {
  runtime::DevicePtr data = 0;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

using DeviceTensors = std::map<std::string, DeviceTensor, std::less<>>;

class Program {
 public:
  explicit Program(ir::Contraction contraction, TuningOptions options = {});
  const ir::Contraction& ir() const;

  // Runs the statement on `stream` (only enqueues work, except on first sight of a shape, when the
  // candidates are timed on scratch memory). Every tensor of the statement must be given; scalars
  // by name. Supported so far: GEMM-shaped statements with the epilogue alpha * sum + beta * C.
  // Anything else throws isaac::Error saying what is not supported.
  void operator()(const runtime::Stream& stream, const DeviceTensors& tensors,
                  const ir::ScalarValues& scalars = {}) const;

  // Per GEMM seen so far (ir::to_string of it): the parameters and how they were chosen.
  std::vector<std::pair<std::string, GemmDecision>> decisions() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

inline Program compile(isaac::ir::Contraction contraction, TuningOptions options = {}) {
  return Program(std::move(contraction), options);
}

template <class Output, class Right>
Program compile(const dsl::Statement<Output, Right>& statement, TuningOptions options = {}) {
  return Program(dsl::to_contraction(statement), options);
}

}  // namespace isaac
