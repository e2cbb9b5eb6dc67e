#pragma once
// The searches' form of a model: the network in float with the input normalisation folded into the
// first layer, and the loops that score millions of parameter sets on one core (gemm_search.cpp,
// conv_search.cpp).
#include <isaac/tune/mlp.hpp>
#include <isaac/tune/search.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace isaac::tune {

using MatrixF = Eigen::MatrixXf;
using VectorF = Eigen::VectorXf;

struct FloatNet {
  MatrixF first;  // hidden x inputs, applied to raw features; column-major: an input's weights are contiguous
  VectorF first_bias;
  std::vector<MatrixF> weights;  // the layers after the first
  std::vector<VectorF> biases;
};

FloatNet float_net(const Mlp& mlp);

// First-layer pre-activations of raw feature columns (inputs x n, from row-major rows).
MatrixF first_layer(const FloatNet& net, const std::vector<double>& rows, Eigen::Index inputs);

// The output (normalised log TFLOP/s) of first-layer pre-activations; z is overwritten.
Eigen::RowVectorXf rest_of_network(const FloatNet& net, MatrixF& z);

// TFLOP/s from an output of the network (normalised log TFLOP/s).
double predicted_tflops(const Mlp& mlp, float score);

// The outputs of the whole network for raw feature rows (row-major, `inputs` each).
Eigen::RowVectorXf float_scores(const FloatNet& net, const std::vector<double>& rows, Eigen::Index inputs);

// The `top` of `sets` that the whole network scores best, best first; `rows` are their raw features.
template <class Params>
std::vector<RankedSet<Params>> best_scored(const Mlp& mlp, const std::vector<Params>& sets,
                                           const std::vector<double>& rows, int top) {
  if (sets.empty()) return {};
  const Eigen::RowVectorXf score = float_scores(float_net(mlp), rows, mlp.inputs());
  std::vector<std::size_t> order(sets.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  const std::size_t kept = std::min(order.size(), std::size_t(std::max(top, 0)));
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(kept), order.end(),
                    [&](std::size_t a, std::size_t b) { return score[Eigen::Index(a)] > score[Eigen::Index(b)]; });
  std::vector<RankedSet<Params>> ranked;
  for (std::size_t i = 0; i < kept; ++i)
    ranked.push_back({sets[order[i]], predicted_tflops(mlp, score[Eigen::Index(order[i])])});
  return ranked;
}

// out[r] = w x[r] + bias for raw feature rows x (doubles, `stride` apart, of which the first `inputs`
// count): the first layer of many sets. w is stored by input (w + f * hidden is input f's column), out
// by row (hidden floats each).
void affine_rows(const double* x, std::size_t rows, int stride, int inputs, const float* w, const float* bias,
                 int hidden, float* out);

// The first layer's bias with the part of the first `count` inputs, whose values are the same for
// every row, folded in; affine_rows then takes the rows from input `count` on.
VectorF bias_with_constant_inputs(const FloatNet& net, const double* row, int count);

// out[k] = w . relu(a + columns[k]) + bias over n hidden units, for k < count: the GEMM search's inner
// loop over a base set's splits (its first layer a, and all each split adds to it, stored n floats
// apart).
void split_scores(const float* a, const float* columns, int n, int count, const float* w, float bias, float* out);

}  // namespace isaac::tune
