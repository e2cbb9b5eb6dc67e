#pragma once
// The model's feature vector of one (problem, parameters) pair (paper §5: log-features). For GEMM:
// log2 of M, N, K and the batch, the layout flags, a one-hot dtype, log2 of the vector widths the
// operands allow (ir::input_features), log2 of every power-of-two template parameter, the DB and
// ACC flags, and three derived quantities the network would otherwise have to learn from few
// shapes: log2 of the threads per block, of the blocks launched and of the K iterations per block;
// and the occupancy on the device (tune/occupancy.hpp): log2 of the blocks an SM holds, and how full
// the grid's waves keep the SMs (0.1.26). Names are stable: a model file records them and a model is refused for other features.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <span>
#include <string>
#include <vector>

namespace isaac::tune {

const std::vector<std::string>& gemm_feature_names();
// The first features are the problem's own (sizes, layouts, dtype, vector widths), the same for
// every parameter set: the search folds their part of the first layer into its bias once.
inline constexpr int gemm_problem_features = 13;

// Writes gemm_feature_names().size() values to out.
void gemm_features(const ir::Gemm& problem, const lower::GemmParams& params, double* out,
                   const lower::DeviceLimits& device = {});
std::vector<double> gemm_features(const ir::Gemm& problem, const lower::GemmParams& params,
                                  const lower::DeviceLimits& device = {});
// Many parameter sets for one problem, row-major (one row per set): the batch predict() takes.
std::vector<double> gemm_features(const ir::Gemm& problem, std::span<const lower::GemmParams> params,
                                  const lower::DeviceLimits& device = {});

}  // namespace isaac::tune
