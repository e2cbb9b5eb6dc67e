#pragma once
// A parameter choice without a model: the first legal set of a short list of shapes known to work,
// with the load layouts and the K split fitted to the problem. The fallback until the tuner has a
// model for the device, and the starting point of searches.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

namespace isaac::tune {

// Always returns a legal set (for any problem check_gemm can accept with scalar loads).
lower::GemmParams heuristic_gemm(const ir::Gemm& problem, const lower::DeviceLimits& device);

// Fills in LA and LB with the widest legal layout along each operand's contiguous axis.
void fit_load_layouts(const ir::Gemm& problem, lower::GemmParams& p);

}  // namespace isaac::tune
