#include <isaac/error.hpp>
#include <isaac/tune/mlp.hpp>

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

namespace isaac::tune {

namespace {

using Matrix = Eigen::MatrixXd;  // column-major: one column per sample for activations
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The network as Eigen matrices: W[l] is outputs x inputs, b[l] outputs.
struct Net {
  std::vector<Matrix> w;
  std::vector<Eigen::VectorXd> b;

  static Net zeros_like(const Net& other) {
    Net net;
    for (size_t l = 0; l < other.w.size(); ++l) {
      net.w.push_back(Matrix::Zero(other.w[l].rows(), other.w[l].cols()));
      net.b.push_back(Eigen::VectorXd::Zero(other.b[l].size()));
    }
    return net;
  }
};

Net to_net(const std::vector<Layer>& layers) {
  Net net;
  for (const Layer& layer : layers) {
    net.w.push_back(Eigen::Map<const RowMajor>(layer.weights.data(), layer.outputs, layer.inputs));
    net.b.push_back(Eigen::Map<const Eigen::VectorXd>(layer.bias.data(), layer.outputs));
  }
  return net;
}

void from_net(const Net& net, std::vector<Layer>& layers) {
  for (size_t l = 0; l < layers.size(); ++l) {
    Eigen::Map<RowMajor>(layers[l].weights.data(), layers[l].outputs, layers[l].inputs) = net.w[l];
    Eigen::Map<Eigen::VectorXd>(layers[l].bias.data(), layers[l].outputs) = net.b[l];
  }
}

// The output row (1 x samples) for normalised inputs a0 (inputs x samples).
Eigen::RowVectorXd forward(const Net& net, const Matrix& a0) {
  Matrix a = a0;
  for (size_t l = 0; l < net.w.size(); ++l) {
    Matrix z = net.w[l] * a;
    z.colwise() += net.b[l];
    if (l + 1 < net.w.size()) z = z.cwiseMax(0.0);
    a = std::move(z);
  }
  return a.row(0);
}

// Mean squared error against normalised targets y and, when grad is given, its gradient.
double loss_and_gradient(const Net& net, const Matrix& a0, const Eigen::RowVectorXd& y, Net* grad) {
  const size_t layers = net.w.size();
  std::vector<Matrix> acts{a0};  // inputs of each layer
  acts.reserve(layers + 1);
  for (size_t l = 0; l < layers; ++l) {
    Matrix z = net.w[l] * acts.back();
    z.colwise() += net.b[l];
    if (l + 1 < layers) z = z.cwiseMax(0.0);
    acts.push_back(std::move(z));
  }
  const double n = static_cast<double>(y.size());
  const Eigen::RowVectorXd err = acts.back().row(0) - y;
  const double loss = err.squaredNorm() / n;
  if (!grad) return loss;
  Matrix delta = (2.0 / n) * err;  // d loss / d z of the current layer
  for (size_t l = layers; l-- > 0;) {
    grad->w[l].noalias() = delta * acts[l].transpose();
    grad->b[l] = delta.rowwise().sum();
    if (l == 0) break;
    Matrix back = net.w[l].transpose() * delta;
    delta = back.cwiseProduct((acts[l].array() > 0.0).cast<double>().matrix());  // ReLU'
  }
  return loss;
}

// Whether every row has the first row's value of input f.
bool unvaried(const Samples& data, std::size_t f) {
  const std::size_t in = data.features;
  for (std::size_t r = 1; r < data.rows(); ++r)
    if (data.x[r * in + f] != data.x[f]) return false;
  return true;
}

// Normalised inputs (inputs x rows) and targets of the samples.
Matrix normalised_inputs(const Mlp& mlp, const double* x, size_t rows) {
  const int in = mlp.inputs();
  Matrix a0 = Eigen::Map<const Matrix>(x, in, static_cast<Eigen::Index>(rows));  // row-major rows = columns
  const Eigen::Map<const Eigen::VectorXd> mean(mlp.feature_mean.data(), in), scale(mlp.feature_scale.data(), in);
  a0.colwise() -= mean;
  a0.array().colwise() /= scale.array();
  return a0;
}

Eigen::RowVectorXd normalised_targets(const Mlp& mlp, const Samples& data) {
  Eigen::RowVectorXd y = Eigen::Map<const Eigen::RowVectorXd>(data.y.data(), data.rows());
  return (y.array() - mlp.target_mean) / mlp.target_scale;
}

void check_samples(const Mlp& mlp, const Samples& data) {
  if (data.features != mlp.inputs())
    throw InvalidArgument(fmt::format("samples have {} features, the model takes {}", data.features, mlp.inputs()));
  if (data.x.size() != data.rows() * static_cast<size_t>(data.features))
    throw InvalidArgument(fmt::format("samples: {} feature values for {} rows of {} features", data.x.size(),
                                      data.rows(), data.features));
}

}  // namespace

Samples Samples::subset(const std::vector<std::size_t>& indices) const {
  Samples out;
  out.features = features;
  out.x.reserve(indices.size() * features);
  out.y.reserve(indices.size());
  for (size_t i : indices) {
    out.x.insert(out.x.end(), x.begin() + i * features, x.begin() + (i + 1) * features);
    out.y.push_back(y[i]);
  }
  return out;
}

Mlp::Mlp(int inputs, const std::vector<int>& hidden, std::uint64_t seed) {
  if (inputs <= 0) throw InvalidArgument(fmt::format("an MLP needs at least one input, got {}", inputs));
  std::mt19937_64 rng(seed);
  int previous = inputs;
  auto sizes = hidden;
  sizes.push_back(1);
  for (int out : sizes) {
    if (out <= 0) throw InvalidArgument(fmt::format("layer sizes must be positive, got {}", out));
    Layer layer{previous, out, std::vector<double>(size_t(out) * previous), std::vector<double>(out, 0.0)};
    // He initialisation; a plain Box-Muller over the engine's raw output keeps it identical on every
    // standard library (std::normal_distribution is implementation-defined).
    const double sigma = std::sqrt(2.0 / previous);
    for (size_t i = 0; i < layer.weights.size(); i += 2) {
      const double u1 = (double(rng() >> 11) + 1.0) * 0x1.0p-53, u2 = double(rng() >> 11) * 0x1.0p-53;
      const double r = std::sqrt(-2.0 * std::log(u1));
      layer.weights[i] = sigma * r * std::cos(2 * M_PI * u2);
      if (i + 1 < layer.weights.size()) layer.weights[i + 1] = sigma * r * std::sin(2 * M_PI * u2);
    }
    layers_.push_back(std::move(layer));
    previous = out;
  }
  feature_mean.assign(inputs, 0.0);
  feature_scale.assign(inputs, 1.0);
}

std::vector<int> Mlp::sizes() const {
  std::vector<int> out;
  if (layers_.empty()) return out;
  out.push_back(layers_.front().inputs);
  for (const Layer& layer : layers_) out.push_back(layer.outputs);
  return out;
}

void Mlp::fit_normalisation(const Samples& data) {
  check_samples(*this, data);
  const size_t rows = data.rows(), in = data.features;
  if (rows == 0) throw InvalidArgument("cannot normalise on an empty data set");
  feature_mean.assign(in, 0.0);
  feature_scale.assign(in, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t f = 0; f < in; ++f) feature_mean[f] += data.x[r * in + f] / double(rows);
  for (size_t r = 0; r < rows; ++r)
    for (size_t f = 0; f < in; ++f) feature_scale[f] += std::pow(data.x[r * in + f] - feature_mean[f], 2) / double(rows);
  // A constant feature gets its value as mean and scale 1. Its mean summed over many rows is off by
  // rounding, and dividing by that rounding noise as a scale blows up the float weights into which the
  // search folds the normalisation.
  for (size_t f = 0; f < in; ++f) {
    const bool constant = unvaried(data, f);
    if (constant) feature_mean[f] = data.x[f];
    feature_scale[f] = !constant && feature_scale[f] > 1e-24 ? std::sqrt(feature_scale[f]) : 1.0;
  }
  target_mean = std::accumulate(data.y.begin(), data.y.end(), 0.0) / double(rows);
  double var = 0;
  for (double v : data.y) var += (v - target_mean) * (v - target_mean) / double(rows);
  target_scale = var > 1e-24 ? std::sqrt(var) : 1.0;
}

std::vector<double> Mlp::predict(const double* x, std::size_t rows) const {
  if (layers_.empty()) throw InvalidArgument("predict on an empty model");
  if (rows == 0) return {};
  Eigen::RowVectorXd out = forward(to_net(layers_), normalised_inputs(*this, x, rows));
  std::vector<double> result(rows);
  for (size_t i = 0; i < rows; ++i) result[i] = out[i] * target_scale + target_mean;
  return result;
}

std::size_t Mlp::parameter_count() const {
  size_t n = 0;
  for (const Layer& layer : layers_) n += layer.weights.size() + layer.bias.size();
  return n;
}

std::vector<double> Mlp::parameters() const {
  std::vector<double> out;
  out.reserve(parameter_count());
  for (const Layer& layer : layers_) {
    out.insert(out.end(), layer.weights.begin(), layer.weights.end());
    out.insert(out.end(), layer.bias.begin(), layer.bias.end());
  }
  return out;
}

void Mlp::set_parameters(const std::vector<double>& values) {
  if (values.size() != parameter_count())
    throw InvalidArgument(fmt::format("{} parameters given, the model has {}", values.size(), parameter_count()));
  auto it = values.begin();
  for (Layer& layer : layers_) {
    std::copy_n(it, layer.weights.size(), layer.weights.begin());
    it += layer.weights.size();
    std::copy_n(it, layer.bias.size(), layer.bias.begin());
    it += layer.bias.size();
  }
}

double Mlp::loss(const Samples& data) const {
  check_samples(*this, data);
  return loss_and_gradient(to_net(layers_), normalised_inputs(*this, data.x.data(), data.rows()),
                           normalised_targets(*this, data), nullptr);
}

double Mlp::gradient(const Samples& data, std::vector<double>& grad) const {
  check_samples(*this, data);
  const Net net = to_net(layers_);
  Net g = Net::zeros_like(net);
  const double loss =
      loss_and_gradient(net, normalised_inputs(*this, data.x.data(), data.rows()), normalised_targets(*this, data), &g);
  Mlp shaped = *this;
  from_net(g, shaped.layers_);
  grad = shaped.parameters();
  return loss;
}

void Mlp::validate() const {
  if (layers_.empty()) throw InvalidArgument("model has no layers");
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    if (layer.inputs <= 0 || layer.outputs <= 0)
      throw InvalidArgument(fmt::format("layer {} has size {} x {}", l, layer.outputs, layer.inputs));
    if (l > 0 && layer.inputs != layers_[l - 1].outputs)
      throw InvalidArgument(fmt::format("layer {} takes {} inputs but layer {} gives {}", l, layer.inputs, l - 1,
                                        layers_[l - 1].outputs));
    if (layer.weights.size() != size_t(layer.inputs) * layer.outputs)
      throw InvalidArgument(fmt::format("layer {} ({} x {}) has {} weights, expected {}", l, layer.outputs,
                                        layer.inputs, layer.weights.size(), size_t(layer.inputs) * layer.outputs));
    if (layer.bias.size() != size_t(layer.outputs))
      throw InvalidArgument(
          fmt::format("layer {} has {} biases, expected {}", l, layer.bias.size(), layer.outputs));
    for (double v : layer.weights)
      if (!std::isfinite(v)) throw InvalidArgument(fmt::format("layer {} has a non-finite weight", l));
    for (double v : layer.bias)
      if (!std::isfinite(v)) throw InvalidArgument(fmt::format("layer {} has a non-finite bias", l));
  }
  if (layers_.back().outputs != 1)
    throw InvalidArgument(fmt::format("the last layer must have 1 output, it has {}", layers_.back().outputs));
  const size_t in = layers_.front().inputs;
  if (feature_mean.size() != in || feature_scale.size() != in)
    throw InvalidArgument(fmt::format("normalisation has {} means and {} scales for {} inputs", feature_mean.size(),
                                      feature_scale.size(), in));
  for (size_t f = 0; f < in; ++f)
    if (!std::isfinite(feature_mean[f]) || !std::isfinite(feature_scale[f]) || feature_scale[f] <= 0)
      throw InvalidArgument(fmt::format("normalisation of input {} is invalid (mean {}, scale {})", f,
                                        feature_mean[f], feature_scale[f]));
  if (!std::isfinite(target_mean) || !std::isfinite(target_scale) || target_scale <= 0)
    throw InvalidArgument(fmt::format("target normalisation is invalid (mean {}, scale {})", target_mean, target_scale));
}

double mse(const Mlp& model, const Samples& data) {
  check_samples(model, data);
  if (data.rows() == 0) return 0;
  const auto pred = model.predict(data);
  double sum = 0;
  for (size_t i = 0; i < pred.size(); ++i) sum += (pred[i] - data.y[i]) * (pred[i] - data.y[i]);
  return sum / double(pred.size());
}

std::vector<std::size_t> zero_unvaried_inputs(Mlp& model, const Samples& data) {
  check_samples(model, data);
  std::vector<std::size_t> unvaried_inputs;
  if (model.layers().empty() || data.rows() == 0) return unvaried_inputs;
  const std::size_t in = data.features;
  Layer& first = model.layers().front();
  for (std::size_t f = 0; f < in; ++f) {
    if (!unvaried(data, f)) continue;
    unvaried_inputs.push_back(f);
    for (int o = 0; o < first.outputs; ++o) first.weights[std::size_t(o) * in + f] = 0.0;
  }
  return unvaried_inputs;
}

TrainReport train(Mlp& model, const Samples& data, const TrainOptions& options) {
  check_samples(model, data);
  if (data.rows() == 0) throw InvalidArgument("cannot train on an empty data set");
  if (options.batch_size <= 0 || options.epochs < 0)
    throw InvalidArgument(fmt::format("batch size {} and epochs {}: both must be positive", options.batch_size,
                                      options.epochs));
  const auto start = std::chrono::steady_clock::now();
  zero_unvaried_inputs(model, data);
  model.fit_normalisation(data);
  const Matrix x = normalised_inputs(model, data.x.data(), data.rows());
  const Eigen::RowVectorXd y = normalised_targets(model, data);
  const double to_target = model.target_scale * model.target_scale;

  Net net = to_net(model.layers()), grad = Net::zeros_like(net), m = Net::zeros_like(net), v = Net::zeros_like(net);
  std::mt19937_64 rng(options.seed);
  std::vector<Eigen::Index> order(data.rows());
  std::iota(order.begin(), order.end(), 0);
  double lr = options.learning_rate;
  long step = 0;
  TrainReport report;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);  // Fisher-Yates
    double sum = 0;
    for (size_t first = 0; first < order.size(); first += options.batch_size) {
      const size_t count = std::min<size_t>(options.batch_size, order.size() - first);
      std::vector<Eigen::Index> batch(order.begin() + first, order.begin() + first + count);
      const Matrix xb = x(Eigen::all, batch);
      const Eigen::RowVectorXd yb = y(batch);
      sum += loss_and_gradient(net, xb, yb, &grad) * double(count);
      ++step;
      const double c1 = 1 - std::pow(options.beta1, double(step)), c2 = 1 - std::pow(options.beta2, double(step));
      auto adam = [&](auto& param, auto& g, auto& mm, auto& vv) {
        mm = options.beta1 * mm + (1 - options.beta1) * g;
        vv = options.beta2 * vv + (1 - options.beta2) * g.cwiseAbs2();
        param.array() -= lr * (mm.array() / c1) / ((vv.array() / c2).sqrt() + options.epsilon);
      };
      for (size_t l = 0; l < net.w.size(); ++l) {
        adam(net.w[l], grad.w[l], m.w[l], v.w[l]);
        adam(net.b[l], grad.b[l], m.b[l], v.b[l]);
      }
    }
    lr *= options.lr_decay;
    report.epoch_mse.push_back(sum / double(order.size()) * to_target);
    if (options.on_epoch && !options.on_epoch(epoch, report.epoch_mse.back())) break;
  }
  from_net(net, model.layers());
  report.train_mse = loss_and_gradient(net, x, y, nullptr) * to_target;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::vector<int> parse_hidden(const std::string& text) {
  std::vector<int> out;
  if (text.empty() || text == "0") return out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    int value = 0;
    size_t used = 0;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value <= 0)
      throw InvalidArgument(fmt::format("hidden layers \"{}\": \"{}\" is not a positive layer size (write e.g. 64,64)",
                                        text, item));
    out.push_back(value);
    pos = comma + 1;
  }
  return out;
}

std::string hidden_to_string(const std::vector<int>& hidden) {
  return hidden.empty() ? std::string("linear") : fmt::format("{}", fmt::join(hidden, ","));
}

}  // namespace isaac::tune
