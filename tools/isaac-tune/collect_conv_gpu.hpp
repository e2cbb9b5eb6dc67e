#pragma once
// The GPU side of `isaac-tune collect --template conv`: loads a CONV kernel's PTX through the
// driver's JIT (isaac::CompiledConv, on the GPU thread), spot-checks it now and then, and times it on
// its input's operands. A CONV kernel is specialised for its problem, so the spot check runs it on
// the timing operands: the output poisoned with NaN, every element checked to be finite, and a
// sample compared with float64 sums (collect_conv_check.hpp).
#include "collect_gpu.hpp"

#include <isaac/conv.hpp>

#include <cstdint>
#include <list>
#include <string>
#include <vector>

namespace isaac::tune::cli {

class ConvGpuRunner : public GpuRunnerBase {
 public:
  using GpuRunnerBase::GpuRunnerBase;
  ~ConvGpuRunner();

  // As GpuRunner::process, for a CONV kernel of parameters `p` for the problem `v`.
  void process(const ir::Conv& v, const lower::ConvParams& p, lower::ConvKernel kernel, std::uint64_t shape,
               bool check, ResultRow& row);

 private:
  struct Operands {
    std::uint64_t shape;
    runtime::Buffer input, filter, output;
    const std::vector<double>* input_values;  // one period of each operand (random_buffer)
    const std::vector<double>* filter_values;
  };
  Operands& operands_for(std::uint64_t shape, const ir::Conv& v);
  std::string spot_check(const CompiledConv& conv, Operands& ops, std::uint64_t variant);

  std::list<Operands> operands_;  // the two most recent shapes, most recent first
};

}  // namespace isaac::tune::cli
