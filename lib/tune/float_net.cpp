#include "tune/float_net.hpp"

#include <isaac/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace isaac::tune {

namespace {

// Eight floats: GCC's vector extension, 256-bit registers in the AVX2 clones below, pairs of
// 128-bit ones in the default clones.
typedef float Lanes __attribute__((vector_size(32)));

Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

FloatNet float_net(const Mlp& mlp) {
  FloatNet net;
  const Layer& l0 = mlp.layers().front();
  Eigen::MatrixXd w(l0.outputs, l0.inputs);
  for (int r = 0; r < l0.outputs; ++r)
    for (int c = 0; c < l0.inputs; ++c) w(r, c) = l0.weights[size_t(r) * l0.inputs + c] / mlp.feature_scale[c];
  Eigen::VectorXd mean = Eigen::Map<const Eigen::VectorXd>(mlp.feature_mean.data(), l0.inputs);
  Eigen::VectorXd bias = Eigen::Map<const Eigen::VectorXd>(l0.bias.data(), l0.outputs) - w * mean;
  net.first = w.cast<float>();
  net.first_bias = bias.cast<float>();
  for (size_t i = 1; i < mlp.layers().size(); ++i) {
    const Layer& l = mlp.layers()[i];
    net.weights.push_back(
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(l.weights.data(),
                                                                                                  l.outputs, l.inputs)
            .cast<float>());
    net.biases.push_back(Eigen::Map<const Eigen::VectorXd>(l.bias.data(), l.outputs).cast<float>());
  }
  return net;
}

MatrixF first_layer(const FloatNet& net, const std::vector<double>& rows, Eigen::Index inputs) {
  const Eigen::Index n = Eigen::Index(rows.size()) / inputs;
  MatrixF x = Eigen::Map<const Eigen::MatrixXd>(rows.data(), inputs, n).cast<float>();
  MatrixF h = net.first * x;
  h.colwise() += net.first_bias;
  return h;
}

Eigen::RowVectorXf rest_of_network(const FloatNet& net, MatrixF& z) {
  z = z.cwiseMax(0.0f);
  if (net.weights.empty()) throw InvalidArgument("the model has no output layer");
  for (size_t i = 0; i < net.weights.size(); ++i) {
    MatrixF next = net.weights[i] * z;
    next.colwise() += net.biases[i];
    if (i + 1 < net.weights.size()) next = next.cwiseMax(0.0f);
    z = std::move(next);
  }
  return z.row(0);
}

double predicted_tflops(const Mlp& mlp, float score) {
  return std::exp(double(score) * mlp.target_scale + mlp.target_mean);
}

Eigen::RowVectorXf float_scores(const FloatNet& net, const std::vector<double>& rows, Eigen::Index inputs) {
  MatrixF h = first_layer(net, rows, inputs);
  return rest_of_network(net, h);
}

// With hidden % 16 == 0 (else the scalar loop), sixteen hidden units stay in registers while the
// inputs stream past.
VectorF bias_with_constant_inputs(const FloatNet& net, const double* row, int count) {
  const Eigen::VectorXf x = Eigen::Map<const Eigen::VectorXd>(row, count).cast<float>();
  return net.first_bias + net.first.leftCols(count) * x;
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) void affine_rows(const double* x, size_t rows, int stride,
                                                                             int inputs, const float* w,
                                                                             const float* bias, int hidden,
                                                                             float* out) {
  for (size_t r = 0; r < rows; ++r) {
    const double* xr = x + r * size_t(stride);
    float* o = out + r * size_t(hidden);
    if (hidden % 16 == 0) {
      for (int j = 0; j < hidden; j += 16) {
        Lanes a0 = load(bias + j), a1 = load(bias + j + 8);
        for (int f = 0; f < inputs; ++f) {
          const float* column = w + size_t(f) * size_t(hidden) + size_t(j);
          const float v = float(xr[f]);
          a0 += v * load(column);
          a1 += v * load(column + 8);
        }
        std::memcpy(o + j, &a0, sizeof a0);
        std::memcpy(o + j + 8, &a1, sizeof a1);
      }
      continue;
    }
    for (int j = 0; j < hidden; ++j) {
      float acc = bias[j];
      for (int f = 0; f < inputs; ++f) acc += float(xr[f]) * w[size_t(f) * size_t(hidden) + size_t(j)];
      o[j] = acc;
    }
  }
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) float hidden_score(const float* a, const float* b, float t,
                                                                               const float* c, const float* w, int n,
                                                                               float bias) {
  Lanes sum = {};
  const Lanes zero = {};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const Lanes h = load(a + i) + load(b + i) + t * load(c + i);
    sum += load(w + i) * (h > zero ? h : zero);
  }
  float total = bias;
  for (int k = 0; k < 8; ++k) total += sum[k];
  for (; i < n; ++i) total += w[i] * std::max(a[i] + b[i] + t * c[i], 0.0f);
  return total;
}

}  // namespace isaac::tune
