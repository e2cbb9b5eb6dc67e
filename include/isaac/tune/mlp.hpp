#pragma once
// The tuner's performance model (paper §5): a multi-layer perceptron on log-features, ReLU hidden
// layers and one linear output, trained on the mean squared error with Adam over mini-batches.
// Inputs and the target are normalised to zero mean and unit variance with statistics taken from
// the training data and kept in the model, so that predict() takes raw features and returns the
// target in its own units. Everything is in double precision and deterministic for a given seed.
//
// The interface has no Eigen type in it (Eigen is a private dependency of the library); matrices
// are row-major std::vector<double>: one row per sample.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace isaac::tune {

// Samples for training or evaluation: x is rows() x features, row-major; y has one target per row.
struct Samples {
  int features = 0;
  std::vector<double> x;
  std::vector<double> y;
  std::size_t rows() const { return y.size(); }
  // The rows at these indices, in this order.
  Samples subset(const std::vector<std::size_t>& indices) const;
};

struct Layer {
  int inputs = 0, outputs = 0;
  std::vector<double> weights;  // outputs x inputs, row-major
  std::vector<double> bias;     // outputs
};

class Mlp {
 public:
  Mlp() = default;
  // Random weights (He initialisation, biases zero), identity normalisation.
  Mlp(int inputs, const std::vector<int>& hidden, std::uint64_t seed = 0);

  // inputs, hidden..., 1
  std::vector<int> sizes() const;
  int inputs() const { return layers_.empty() ? 0 : layers_.front().inputs; }
  const std::vector<Layer>& layers() const { return layers_; }
  std::vector<Layer>& layers() { return layers_; }

  // Normalisation: a feature x is fed to the network as (x - mean) / scale; the network's output o
  // is returned as o * target_scale + target_mean.
  std::vector<double> feature_mean, feature_scale;
  double target_mean = 0, target_scale = 1;
  // Sets the normalisation from these samples (a constant feature gets scale 1).
  void fit_normalisation(const Samples& data);

  // Predictions in target units for rows x inputs() raw features (row-major): one matrix product
  // per layer for all rows at once.
  std::vector<double> predict(const double* x, std::size_t rows) const;
  std::vector<double> predict(const Samples& data) const { return predict(data.x.data(), data.rows()); }

  // All weights and biases in one vector (layer by layer, weights then bias), for optimisers and
  // gradient checks.
  std::size_t parameter_count() const;
  std::vector<double> parameters() const;
  void set_parameters(const std::vector<double>& values);

  // The training loss: the mean squared error in normalised target units. gradient() also returns
  // d loss / d parameters in parameters()'s order.
  double loss(const Samples& data) const;
  double gradient(const Samples& data, std::vector<double>& grad) const;

  // Throws InvalidArgument naming what is inconsistent (layer shapes, normalisation sizes,
  // non-finite numbers).
  void validate() const;

 private:
  std::vector<Layer> layers_;
};

// Mean squared error of the model's predictions in target units.
double mse(const Mlp& model, const Samples& data);

struct TrainOptions {
  int epochs = 200;
  int batch_size = 64;
  double learning_rate = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double lr_decay = 1.0;  // the learning rate is multiplied by this after every epoch
  std::uint64_t seed = 0;  // shuffling of the mini-batches
  // Called after every epoch with the epoch (from 1) and the mean training loss of that epoch in
  // target units; return false to stop early.
  std::function<bool(int epoch, double train_mse)> on_epoch;
};

struct TrainReport {
  std::vector<double> epoch_mse;  // mean mini-batch loss of each epoch, in target units
  double train_mse = 0;           // over the whole training set after the last epoch
  double seconds = 0;
};

// Sets the model's normalisation from the data, then runs Adam over shuffled mini-batches.
// The model keeps its architecture and starting weights (construct it with the seed you want), but
// for the inputs of zero_unvaried_inputs.
TrainReport train(Mlp& model, const Samples& data, const TrainOptions& options);

// Zeroes the first layer's weights of every input that no row of the data varies (a kind of kernel,
// a batch count the data never had), and returns their indices. Training leaves such weights at
// their random start, which then moves the prediction of any input that has another value there by
// a guess; with none, it is predicted as the same input with the data's value. Predictions of inputs
// with the data's value do not change.
std::vector<std::size_t> zero_unvaried_inputs(Mlp& model, const Samples& data);

// "64,64" -> {64, 64}; "" or "0" -> {} (a linear model). Throws InvalidArgument otherwise.
std::vector<int> parse_hidden(const std::string& text);
std::string hidden_to_string(const std::vector<int>& hidden);

}  // namespace isaac::tune
