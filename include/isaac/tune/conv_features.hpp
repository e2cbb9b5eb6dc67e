#pragma once
// The model's feature vector of one (CONV problem, parameters) pair, in the spirit of the GEMM
// features: log2 of the sizes (N, C, H, W, K, P, Q, R, S, stride, pad + 1, dilation) and of the
// implicit GEMM they make (N*P*Q x K x C*R*S), the two layout flags the template cares about, a
// one-hot dtype, log2 of every power-of-two parameter, DB, and log2 of the threads per block, the
// blocks launched and the reduction iterations per block; for the Winograd kernels, WG (1 or 2),
// and for WG=1 log2 of the planes each thread group accumulates, its blocks and iterations counted
// over 2 x 2 output tiles and C; for WG=2 log2 of all the planes, and the batched GEMM's blocks (over
// every plane) and iterations over C; for the direct kernels, whether TMA copies (lower::conv_tma: not a
// parameter, so the sets alone do not say it), log2 of the blocks an SM holds at once and how full
// their waves keep the device (tune/occupancy.hpp; 0, 0 and 1 for the Winograd kernels), and log2 of
// the stages of a TMA kernel's ring (4, 3 with DB=0, or up to 16 where lower::conv_pipeline_stages
// deepens it; 0 without TMA). Names are
// stable and recorded in models. `device`: the GPU whose SMs the occupancy is counted on (the data's
// GPU when training, the one searched for when ranking; the H100 by default).
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>

#include <span>
#include <string>
#include <vector>

namespace isaac::tune {

const std::vector<std::string>& conv_feature_names();
// The first features are the problem's own, the same for every parameter set (as for GEMM: the
// search folds their part of the first layer into its bias once).
inline constexpr int conv_problem_features = 21;

// Many parameter sets for one problem, row-major (one row per set).
std::vector<double> conv_features(const ir::Conv& problem, std::span<const lower::ConvParams> params,
                                  const lower::DeviceLimits& device = {});
std::vector<double> conv_features(const ir::Conv& problem, const lower::ConvParams& params,
                                  const lower::DeviceLimits& device = {});

}  // namespace isaac::tune
