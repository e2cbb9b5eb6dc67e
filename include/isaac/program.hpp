#pragma once
// isaac::compile: a statement of the DSL (or a contraction read by ir::parse) becomes a Program.
// For now a Program holds the verified IR; code generation and launching join it later.
#include <isaac/dsl/statement.hpp>
#include <isaac/ir/contraction.hpp>
#include <isaac/ir/verify.hpp>

namespace isaac {

class Program {
 public:
  explicit Program(ir::Contraction contraction) : contraction_(std::move(contraction)) { isaac::ir::verify(contraction_); }
  const ir::Contraction& ir() const { return contraction_; }

 private:
  isaac::ir::Contraction contraction_;
};

inline Program compile(isaac::ir::Contraction contraction) { return Program(std::move(contraction)); }

template <class Output, class Right>
Program compile(const dsl::Statement<Output, Right>& statement) {
  return Program(dsl::to_contraction(statement));
}

}  // namespace isaac
