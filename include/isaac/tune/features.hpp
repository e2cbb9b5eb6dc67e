#pragma once
// The model's feature vector of one (problem, parameters) pair (paper §5: log-features). For GEMM:
// log2 of M, N, K and the batch, the layout flags, a one-hot dtype, log2 of the vector widths the
// operands allow (ir::input_features), log2 of every power-of-two template parameter, the DB and
// ACC flags, and three derived quantities the network would otherwise have to learn from few
// shapes: log2 of the threads per block, of the blocks launched and of the K iterations per block.
// Names are stable: a model file records them and a model is refused for other features.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <span>
#include <string>
#include <vector>

namespace isaac::tune {

const std::vector<std::string>& gemm_feature_names();

// Writes gemm_feature_names().size() values to out.
void gemm_features(const ir::Gemm& problem, const lower::GemmParams& params, double* out);
std::vector<double> gemm_features(const ir::Gemm& problem, const lower::GemmParams& params);
// Many parameter sets for one problem, row-major (one row per set): the batch predict() takes.
std::vector<double> gemm_features(const ir::Gemm& problem, std::span<const lower::GemmParams> params);

}  // namespace isaac::tune
