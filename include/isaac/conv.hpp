#pragma once
// A CONV kernel of the template, compiled for one problem and one parameter set and loaded on a
// device, with its look-up table of reduction offsets built once and kept in device memory.
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/runtime/runtime.hpp>

#include <memory>

namespace isaac {

class CompiledConv {
 public:
  // Emits and JIT-loads the kernels for `problem` on device `ordinal`, and uploads its LUT.
  // Throws InvalidArgument with the legality reason when the parameters do not fit the problem.
  CompiledConv(const ir::Conv& problem, const lower::ConvParams& params, const lower::ConvEpilogue& epilogue = {},
               int ordinal = 0);
  // The same from PTX emitted earlier for this problem (e.g. compiled in parallel threads).
  CompiledConv(const ir::Conv& problem, lower::ConvKernel kernel, const lower::ConvParams& params,
               const lower::ConvEpilogue& epilogue = {}, int ordinal = 0);
  CompiledConv(CompiledConv&&) noexcept;
  CompiledConv& operator=(CompiledConv&&) noexcept;
  ~CompiledConv();

  // O = relu?(alpha * conv(I, F) + beta * O + bias?) on `stream`, for the problem this was compiled
  // for (pointers to element (0,0,0,0) of each tensor, laid out with the problem's strides). beta = 0
  // does not read O. `bias` (K elements of the dtype) is required exactly when the epilogue has one.
  void run(runtime::DevicePtr output, runtime::DevicePtr input, runtime::DevicePtr filter, double alpha, double beta,
           const runtime::Stream& stream, runtime::DevicePtr bias = 0) const;

  const ir::Conv& problem() const;
  const lower::ConvParams& params() const;
  const lower::ConvEpilogue& epilogue() const;
  const lower::ConvKernel& kernel() const;
  runtime::KernelAttributes attributes() const;  // of the main kernel, as the driver compiled it

 private:
  // WG=2: the filter and input transforms, the batched GEMM over the planes and the output transform.
  void run_winograd_product(runtime::DevicePtr output, runtime::DevicePtr input, runtime::DevicePtr filter,
                            runtime::DevicePtr bias, void* alpha_arg, void* beta_arg,
                            const runtime::Stream& stream) const;

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace isaac
