#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/ir/pattern.hpp>
#include <isaac/ir/text.hpp>
#include <isaac/program.hpp>

#include <fmt/format.h>

#include <mutex>

namespace isaac {

struct Program::State {
  ir::Contraction contraction;
  TuningOptions options;
  std::mutex mutex;
  struct Entry {
    GemmDecision decision;
    std::shared_ptr<CompiledGemm> gemm;
  };
  std::map<std::string, Entry, std::less<>> gemms;  // by ir::to_string of the GEMM
};

Program::Program(ir::Contraction contraction, TuningOptions options)
    : state_(std::make_shared<State>()) {
  ir::verify(contraction);
  state_->contraction = std::move(contraction);
  state_->options = options;
}

const ir::Contraction& Program::ir() const { return state_->contraction; }

void Program::operator()(const runtime::Stream& stream, const DeviceTensors& tensors,
                         const ir::ScalarValues& scalars) const {
  ir::Contraction bound = state_->contraction;
  for (const ir::Tensor& t : bound.tensors)
    if (!tensors.count(t.name))
      throw InvalidArgument(fmt::format("no device tensor was given for {} of {}", t.name, ir::to_string(bound)));
  for (const auto& [name, t] : tensors) ir::bind(bound, name, t.shape, t.strides, t.data);
  const ir::Pattern pattern = ir::analyze(bound);
  if (pattern.kind == ir::PatternKind::conv)
    throw Error(fmt::format("{}: isaac::Program runs GEMMs; run a convolution with isaac::CompiledConv",
                            ir::to_string(bound)));
  if (pattern.kind != ir::PatternKind::gemm)
    throw InvalidArgument(fmt::format("{}: isaac::Program runs GEMMs, and this contraction is not one: {}",
                                      ir::to_string(bound), pattern.reason));
  if (!pattern.linear_epilogue)
    throw Error(fmt::format("{}: the GEMM template applies only the epilogue alpha * sum + beta * C so far",
                            ir::to_string(bound)));
  const double alpha = ir::evaluate_scalar(pattern.linear_epilogue->alpha, scalars);
  const double beta = ir::evaluate_scalar(pattern.linear_epilogue->beta, scalars);
  const ir::Gemm& g = pattern.gemm;

  std::shared_ptr<CompiledGemm> gemm;
  {
    std::lock_guard lock(state_->mutex);
    const std::string key = ir::to_string(g);
    auto it = state_->gemms.find(key);
    if (it == state_->gemms.end()) {
      State::Entry entry;
      entry.decision = choose_gemm(g, state_->options);
      entry.gemm = std::make_shared<CompiledGemm>(g, entry.decision.params, state_->options.mode,
                                                  state_->options.ordinal);
      it = state_->gemms.emplace(key, std::move(entry)).first;
    }
    gemm = it->second.gemm;
  }
  gemm->run(g, tensors.find(pattern.c)->second.data, tensors.find(pattern.a)->second.data,
            tensors.find(pattern.b)->second.data, alpha, beta, stream);
}

std::vector<std::pair<std::string, GemmDecision>> Program::decisions() const {
  std::lock_guard lock(state_->mutex);
  std::vector<std::pair<std::string, GemmDecision>> out;
  for (const auto& [key, e] : state_->gemms) out.emplace_back(key, e.decision);
  return out;
}

}  // namespace isaac
