#pragma once
// A GEMM kernel of the template, compiled for one parameter set and loaded on a device: the layer
// that ties lower (PTX) to runtime (launch). Tools, tests and benchmarks run GEMMs through it.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/runtime/runtime.hpp>

#include <memory>

namespace isaac {

class CompiledGemm {
 public:
  // Emits and JIT-loads the kernels for `problem`'s dtype and layout on device `ordinal`.
  CompiledGemm(const ir::Gemm& problem, const lower::GemmParams& params,
               lower::SplitMode mode = lower::SplitMode::atomic, int ordinal = 0);
  // The same from PTX emitted earlier (e.g. compiled in parallel, or read from a cache).
  CompiledGemm(lower::GemmKernel kernel, const lower::GemmParams& params, lower::SplitMode mode, int ordinal = 0);
  CompiledGemm(CompiledGemm&&) noexcept;
  CompiledGemm& operator=(CompiledGemm&&) noexcept;
  ~CompiledGemm();

  // C = alpha op(A) op(B) + beta C on `stream`. `problem` must have the dtype and layout this was
  // compiled for and pass check_gemm with these parameters, else InvalidArgument says why. Runs on
  // different streams (and threads) may overlap: a deterministic split keeps a workspace per stream.
  void run(const ir::Gemm& problem, runtime::DevicePtr c, runtime::DevicePtr a, runtime::DevicePtr b, double alpha,
           double beta, const runtime::Stream& stream) const;

  // The grids run() launches for `problem`: lower::gemm_grid's, but for a tile loop (GemmKernel::
  // tile_loop) a main grid of the blocks the device holds at once (lower::gemm_tile_loop_blocks).
  lower::GemmGrid launch_grids(const ir::Gemm& problem) const;

  const lower::GemmParams& params() const;
  const lower::GemmKernel& kernel() const;
  runtime::KernelAttributes attributes() const;  // of the main kernel, as the driver compiled it

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Emits the kernels for device `ordinal`, and assembles them with ptxas where it is installed (ptxas
// runs as a process, so several threads compile in parallel; the driver's JIT would not).
lower::GemmKernel build_gemm_kernel(const ir::Gemm& problem, const lower::GemmParams& params, lower::SplitMode mode,
                                    int ordinal = 0);

// The device's limits in the form the legality check takes.
lower::DeviceLimits device_limits(const runtime::DeviceInfo& info);

}  // namespace isaac
