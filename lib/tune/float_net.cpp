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
  if (net.weights.size() != 1 || net.weights[0].rows() != 1) {
    MatrixF h = first_layer(net, rows, inputs);
    return rest_of_network(net, h);
  }
  // One hidden layer (the shipped models, ensembles included): the loops of the whole-space pass,
  // which this library builds for AVX2 where Eigen's products get SSE2, a few rows at a time.
  const size_t n = rows.size() / size_t(inputs);
  const int hidden = int(net.first.rows());
  const VectorF zero = VectorF::Zero(hidden);
  const Eigen::VectorXf out = net.weights[0].row(0).transpose();
  constexpr size_t chunk = 64;
  std::vector<float> h(chunk * size_t(hidden));
  Eigen::RowVectorXf scores = Eigen::RowVectorXf::Zero(Eigen::Index(n));
  for (size_t from = 0; from < n; from += chunk) {
    const size_t count = std::min(chunk, n - from);
    affine_rows(rows.data() + from * size_t(inputs), count, int(inputs), int(inputs), net.first.data(),
                net.first_bias.data(), hidden, h.data());
    for (size_t r = 0; r < count; ++r)
      split_scores(h.data() + r * size_t(hidden), zero.data(), hidden, 1, out.data(), net.biases[0][0],
                   &scores[Eigen::Index(from + r)]);
  }
  return scores;
}

VectorF bias_with_constant_inputs(const FloatNet& net, const double* row, int count) {
  const Eigen::VectorXf x = Eigen::Map<const Eigen::VectorXd>(row, count).cast<float>();
  return net.first_bias + net.first.leftCols(count) * x;
}

// Sixty-four hidden units at a time stay in registers while the inputs stream past, eight each in
// a chain of its own: with fewer chains each row waits on the adder's latency (four times as long
// with two). Each unit adds its terms in the inputs' order whatever the width.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void affine_rows(const double* x, size_t rows, int stride,
                                                                             int inputs, const float* w,
                                                                             const float* bias, int hidden,
                                                                             float* out) {
  constexpr int chains = 8;
  for (size_t r = 0; r < rows; ++r) {
    const double* xr = x + r * size_t(stride);
    float* o = out + r * size_t(hidden);
    int j = 0;
    for (; j + 8 * chains <= hidden; j += 8 * chains) {
      Lanes acc[chains];
      for (int q = 0; q < chains; ++q) acc[q] = load(bias + j + 8 * q);
      for (int f = 0; f < inputs; ++f) {
        const float* column = w + size_t(f) * size_t(hidden) + size_t(j);
        const float v = float(xr[f]);
        for (int q = 0; q < chains; ++q) acc[q] += v * load(column + 8 * q);
      }
      std::memcpy(o + j, acc, sizeof acc);
    }
    for (; j + 8 <= hidden; j += 8) {
      Lanes acc = load(bias + j);
      for (int f = 0; f < inputs; ++f) acc += float(xr[f]) * load(w + size_t(f) * size_t(hidden) + size_t(j));
      std::memcpy(o + j, &acc, sizeof acc);
    }
    for (; j < hidden; ++j) {
      float acc = bias[j];
      for (int f = 0; f < inputs; ++f) acc += float(xr[f]) * w[size_t(f) * size_t(hidden) + size_t(j)];
      o[j] = acc;
    }
  }
}

// Four splits at a time: each score is a chain of dependent additions, so one at a time waits on the
// adder's latency; four chains keep it busy. Each score adds the same terms in the same order as one
// at a time would.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void split_scores(const float* a, const float* columns,
                                                                              int n, int count, const float* w,
                                                                              float bias, float* out) {
  constexpr int group = 4;
  const Lanes zero = {};
  for (int k0 = 0; k0 < count; k0 += group) {
    const float* b[group];
    Lanes sum[group];
    for (int q = 0; q < group; ++q) {
      const int k = std::min(k0 + q, count - 1);  // past the end: the last split again, not stored
      b[q] = columns + size_t(k) * size_t(n);
      sum[q] = zero;
    }
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      const Lanes av = load(a + i), wv = load(w + i);
      for (int q = 0; q < group; ++q) {
        const Lanes h = av + load(b[q] + i);
        sum[q] += wv * (h > zero ? h : zero);
      }
    }
    for (int q = 0; q < group && k0 + q < count; ++q) {
      float total = bias;
      for (int j = 0; j < 8; ++j) total += sum[q][j];
      for (int r = i; r < n; ++r) total += w[r] * std::max(a[r] + b[q][r], 0.0f);
      out[k0 + q] = total;
    }
  }
}

}  // namespace isaac::tune
