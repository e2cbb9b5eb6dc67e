// isaac-tune: the tuner's model on the CPU (issue 6, "Model"). Trains the MLP performance model on
// a measured GEMM dataset, evaluates a model file against a dataset, and reproduces the paper's
// cross-validation table (Table 2: MSE per architecture) and learning curve (Figure 5: MSE against
// dataset size).
//
//   isaac-tune train --data bench/results/gemm-sweep-all.csv.xz --hidden 64,64 --epochs 200 --out model.json
//   isaac-tune eval  --data bench/results/gemm-sweep-all.csv.xz --model model.json
//   isaac-tune cv    --data ... --architectures "32;64;64,64;128,128;256,128,64" --folds 5 [--split jobs]
//   isaac-tune cv    --data ... --architectures "64,64" --sizes 250,500,1000,2000,4000,7000
#include "collect.hpp"
#include "dataset.hpp"
#include "export.hpp"
#include "cache.hpp"
#include "extend.hpp"
#include "files.hpp"
#include "focus.hpp"
#include "search.hpp"

#include <isaac/error.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/ensemble.hpp>
#include <isaac/tune/mlp.hpp>
#include <isaac/tune/model_file.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

using namespace isaac;
using namespace isaac::tune::cli;

namespace {

struct TrainFlags {
  std::string hidden = "64,64";
  int epochs = 200;
  int batch_size = 64;
  double learning_rate = 1e-3;
  double lr_decay = 0.99;
  std::uint64_t seed = 1;
  int sm_count = 132;
};

void add_train_flags(CLI::App* app, TrainFlags& f) {
  app->add_option("--epochs", f.epochs, "passes over the training rows")->capture_default_str();
  app->add_option("--batch", f.batch_size, "mini-batch size")->capture_default_str();
  app->add_option("--lr", f.learning_rate, "Adam learning rate")->capture_default_str();
  app->add_option("--lr-decay", f.lr_decay, "learning rate factor after each epoch")->capture_default_str();
  app->add_option("--seed", f.seed, "weights and shuffling")->capture_default_str();
  app->add_option("--sm-count", f.sm_count,
                  "SMs of the GPU the data was measured on: GEMM rows whose set this version would run at another TMA "
                  "pipeline depth there (fit_gemm_pipeline_depth) are left out, and the features count waves of "
                  "blocks on that many sm_90 SMs")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
}

// The training options as tune::train takes them, checked before any data is read.
void check_train_flags(const TrainFlags& f) {
  if (!(f.learning_rate > 0) || !std::isfinite(f.learning_rate))
    throw InvalidArgument(fmt::format("--lr {}: the learning rate must be a finite number above 0, e.g. 1e-3",
                                      f.learning_rate));
  if (!(f.lr_decay > 0 && f.lr_decay <= 1))
    throw InvalidArgument(fmt::format("--lr-decay {}: the factor must be above 0 and at most 1 (1: no decay)",
                                      f.lr_decay));
  if (f.epochs < 0) throw InvalidArgument(fmt::format("--epochs {}: 0 or more", f.epochs));
  if (f.batch_size < 1) throw InvalidArgument(fmt::format("--batch {}: at least 1", f.batch_size));
}

// What every model loader accepts (lib/tune/model_file.cpp): at most 1024 networks in an ensemble, and
// merged layers of at most 2^20 units. Beyond that, a network's hidden layer is kept to 4096 units and
// the written model to 2^27 weights (1 GiB as doubles), so that a typo is refused here rather than
// ending in an allocation failure, or in a file that no loader takes.
constexpr int max_ensemble = 1024;
constexpr long max_merged_units = 1L << 20;
constexpr int max_hidden_units = 4096;
constexpr double max_model_weights = double(1L << 27);

// The hidden layers of `option` (--hidden, or one architecture of --architectures) for an ensemble of
// `members` networks.
std::vector<int> parse_architecture(const std::string& text, const char* option, int members) {
  std::vector<int> hidden;
  try {
    hidden = tune::parse_hidden(text);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("{}: {}", option, e.what()));
  }
  for (int units : hidden) {
    if (units > max_hidden_units)
      throw InvalidArgument(fmt::format("{} \"{}\": a hidden layer of {} units; at most {} per layer", option, text,
                                        units, max_hidden_units));
    if (long(units) * members > max_merged_units)
      throw InvalidArgument(fmt::format("{} \"{}\" with --ensemble {}: the merged layer of {} units exceeds the {} "
                                        "that model files hold; use fewer units or networks",
                                        option, text, members, long(units) * members, max_merged_units));
  }
  return hidden;
}

// Weights of `members` networks of `hidden` layers on `inputs` features, merged into one (each merged
// layer is dense: tune/ensemble.hpp); refused above max_model_weights.
void check_model_size(int inputs, const std::vector<int>& hidden, int members, const char* option) {
  double weights = 0, width = inputs;
  for (int units : hidden) {
    weights += width * units * members;
    width = double(units) * members;
  }
  weights += width;
  if (weights > max_model_weights)
    throw InvalidArgument(fmt::format("{} {}{}: {:.0f} weights on {} features; a model holds at most {:.0f}", option,
                                      tune::hidden_to_string(hidden),
                                      members > 1 ? fmt::format(" x {} networks", members) : std::string{}, weights,
                                      inputs, max_model_weights));
}

tune::TrainOptions options_of(const TrainFlags& f, int epochs) {
  tune::TrainOptions o;
  o.epochs = epochs;
  o.batch_size = f.batch_size;
  o.learning_rate = f.learning_rate;
  o.lr_decay = f.lr_decay;
  o.seed = f.seed;
  return o;
}

// Progress on stderr, rewritten in place: epoch, loss, elapsed and time left.
std::function<bool(int, double)> progress(const std::string& label, int epochs) {
  auto start = std::chrono::steady_clock::now();
  return [=](int epoch, double loss) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (epoch == epochs || epoch % 5 == 0)
      fmt::print(stderr, "\r{} epoch {}/{}  train MSE {:.4f}  {:.0f} s, {:.0f} s left   ", label, epoch, epochs, loss, s,
                 s / epoch * (epochs - epoch));
    if (epoch == epochs) fmt::print(stderr, "\n");
    return true;
  };
}

tune::Mlp fit(const std::vector<int>& hidden, const tune::Samples& data, const TrainFlags& f, int epochs,
              const std::string& label, bool show) {
  tune::Mlp mlp(data.features, hidden, f.seed);
  auto opts = options_of(f, epochs);
  if (show) opts.on_epoch = progress(label, epochs);
  tune::train(mlp, data, opts);
  return mlp;
}

// How well predictions rank each job's measured parameter sets: the measured TFLOP/s of the set the
// model puts first (and the best of its first ten, and of ten spread over tilings as the search
// picks them) over the job's best measured TFLOP/s.
struct Ranking {
  std::string job;
  size_t sets = 0;
  double best = 0, top1 = 0, top10 = 0, spread10 = 0;
};

std::vector<Ranking> rank_jobs(const Dataset& data, const std::vector<size_t>& rows, const std::vector<double>& pred) {
  std::map<std::string, std::vector<size_t>> by_job;  // job -> positions in rows
  for (size_t i = 0; i < rows.size(); ++i) by_job[data.rows[rows[i]].job].push_back(i);
  std::vector<Ranking> out;
  for (auto& [job, pos] : by_job) {
    Ranking r{job, pos.size()};
    std::sort(pos.begin(), pos.end(), [&](size_t a, size_t b) { return pred[a] > pred[b]; });
    for (size_t j = 0; j < pos.size(); ++j) {
      const double t = data.rows[rows[pos[j]]].tflops;
      r.best = std::max(r.best, t);
      if (j == 0) r.top1 = t;
      if (j < 10) r.top10 = std::max(r.top10, t);
    }
    std::vector<tune::Tiling> tilings;
    for (size_t j : pos) tilings.push_back(data.rows[rows[j]].tiling);
    for (size_t j : tune::spread_over_tilings(tilings, 10))
      r.spread10 = std::max(r.spread10, data.rows[rows[pos[j]]].tflops);
    out.push_back(r);
  }
  return out;
}

void print_ranking_summary(const std::vector<Ranking>& ranks, const std::string& what) {
  std::vector<double> r1, r10, s10;
  for (auto& r : ranks) {
    r1.push_back(r.top1 / r.best);
    r10.push_back(r.top10 / r.best);
    s10.push_back(r.spread10 / r.best);
  }
  auto summary = [&](std::vector<double> v, const char* name, double threshold) {
    std::sort(v.begin(), v.end());
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    const auto reach = std::count_if(v.begin(), v.end(), [&](double x) { return x >= threshold; });
    fmt::print("{} {}: min {:.3f}, median {:.3f}, mean {:.3f}; {}/{} jobs reach {:.0f}% of the best\n", what, name,
               v.front(), v[v.size() / 2], mean, reach, v.size(), threshold * 100);
  };
  summary(r1, "top-1 / best", 0.85);
  summary(r10, "best of top-10 / best", 0.95);
  summary(s10, "best of 10 spread over tilings / best", 0.95);
}

void print_ranking_table(const std::vector<Ranking>& ranks) {
  fmt::print("| job (dtype suite M N K AT BT) | sets | best TFLOP/s | top-1 TFLOP/s | top-1/best | best of top-10/best "
             "| best of 10 spread/best |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|\n");
  for (auto& r : ranks)
    fmt::print("| {} | {} | {:.2f} | {:.2f} | {:.3f} | {:.3f} | {:.3f} |\n", r.job, r.sets, r.best, r.top1,
               r.top1 / r.best, r.top10 / r.best, r.spread10 / r.best);
}

void print_loaded(const std::string& data_path, const Dataset& data) {
  fmt::print(stderr, "{}: {} measured rows, {} jobs", data_path, data.rows.size(), data.jobs().size());
  if (data.other_depth)
    fmt::print(stderr, "; {} rows left out: timed at a TMA pipeline depth this version no longer runs their set at",
               data.other_depth);
  fmt::print(stderr, "\n");
}

// With an ensemble of N, N networks with seeds seed, seed + 1, ... are trained on the same rows and
// written as one (tune/ensemble.hpp).
int cmd_train(const std::string& data_path, const std::string& hidden_text, const TrainFlags& f, int ensemble,
              const std::string& out, const std::string& device, int compute_capability, const std::string& dtype) {
  if (ensemble < 1 || ensemble > max_ensemble)
    throw InvalidArgument(fmt::format("--ensemble {}: from 1 to {} networks", ensemble, max_ensemble));
  if (compute_capability < 0)
    throw InvalidArgument(fmt::format("--compute-capability {}: 0 (unknown) or the GPU's, e.g. 90", compute_capability));
  check_train_flags(f);
  check_output_path(out);
  const auto hidden = parse_architecture(hidden_text, "--hidden", ensemble);
  if (ensemble > 1 && hidden.empty()) throw InvalidArgument("--ensemble needs hidden layers (--hidden)");
  const Dataset data = load_dataset(data_path, dtype, f.sm_count);
  print_loaded(data_path, data);
  check_model_size(data.samples.features, hidden, ensemble, "--hidden");
  tune::Model model;
  model.device = device;
  model.compute_capability = compute_capability;
  model.dtype = dtype;
  model.template_name = data.template_name;
  model.features = data.template_name == "conv" ? tune::conv_feature_names() : tune::gemm_feature_names();
  std::vector<tune::Mlp> members;
  double seconds = 0;
  for (int m = 0; m < ensemble; ++m) {
    TrainFlags member_flags = f;
    member_flags.seed = f.seed + std::uint64_t(m);
    members.emplace_back(data.samples.features, hidden, member_flags.seed);
    auto opts = options_of(member_flags, f.epochs);
    const std::string label = ensemble > 1 ? fmt::format("train {} ({} of {})", tune::hidden_to_string(hidden), m + 1,
                                                         ensemble)
                                           : "train " + tune::hidden_to_string(hidden);
    opts.on_epoch = progress(label, f.epochs);
    seconds += tune::train(members.back(), data.samples, opts).seconds;
  }
  model.mlp = tune::merge_ensemble(members);
  model.ensemble = ensemble;
  const double train_mse = tune::mse(model.mlp, data.samples);
  model.training = {train_mse, data.rows.size(), f.epochs, f.batch_size, f.learning_rate, f.seed, data_path};
  tune::save_model(model, out);
  fmt::print("trained {}{} on {} rows in {:.1f} s: training MSE {:.4f} (log TFLOP/s); wrote {}\n",
             tune::hidden_to_string(hidden), ensemble > 1 ? fmt::format(" x {} seeds", ensemble) : "",
             data.rows.size(), seconds, train_mse, out);
  return 0;
}

// One line per measured row: its job, the tiling of its set (tune/spread.hpp; split = KG or CG), and
// the measured and predicted TFLOP/s, for studying where the model errs.
void write_predictions(const std::string& path, const Dataset& data, const std::vector<double>& pred) {
  std::string text = "job,tile_m,tile_n,thread_m,thread_n,u,split,tc,measured_tflops,predicted_tflops\n";
  for (size_t i = 0; i < data.rows.size(); ++i) {
    const Row& r = data.rows[i];
    const tune::Tiling& t = r.tiling;
    text += fmt::format("\"{}\",{},{},{},{},{},{},{},{:.4f},{:.4f}\n", r.job, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
                        r.tflops, std::exp(pred[i]));
  }
  write_file_atomically(path, text);
}

int cmd_eval(const std::string& data_path, const std::string& model_path, bool table, const std::string& predictions) {
  if (!predictions.empty()) check_output_path(predictions);
  const tune::Model model = tune::load_model(model_path);
  const Dataset data = load_dataset(data_path, model.dtype);
  if (model.template_name != data.template_name)
    throw InvalidArgument(fmt::format("{} is a {} model and {} holds {} data", model_path, model.template_name,
                                      data_path, data.template_name));
  if (model.features != (data.template_name == "conv" ? tune::conv_feature_names() : tune::gemm_feature_names()))
    throw InvalidArgument(fmt::format("{} was trained on other features than this build computes; retrain it", model_path));
  const auto pred = model.mlp.predict(data.samples);
  double mse = 0;
  for (size_t i = 0; i < pred.size(); ++i) mse += std::pow(pred[i] - data.samples.y[i], 2) / double(pred.size());
  fmt::print("{} ({} for {}, trained on {}) on {}: {} rows, MSE {:.4f} (log TFLOP/s; training MSE {:.4f})\n", model_path,
             model.template_name, model.device, model.training.data, data_path, data.rows.size(), mse, model.training.mse);
  std::vector<size_t> all(data.rows.size());
  std::iota(all.begin(), all.end(), 0);
  const auto ranks = rank_jobs(data, all, pred);
  print_ranking_summary(ranks, "ranking of each job's measured sets");
  if (table) print_ranking_table(ranks);
  if (!predictions.empty()) write_predictions(predictions, data, pred);
  return 0;
}

std::vector<std::vector<int>> parse_architectures(const std::string& text) {
  std::vector<std::vector<int>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t semi = std::min(text.find(';', pos), text.size());
    out.push_back(parse_architecture(text.substr(pos, semi - pos), "--architectures", 1));
    pos = semi + 1;
  }
  return out;
}

// --sizes: training set sizes, e.g. 250,500,1000.
std::vector<size_t> parse_sizes(const std::string& text) {
  std::vector<size_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    size_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || value == 0)
      throw InvalidArgument(fmt::format("--sizes \"{}\": \"{}\" is not a positive number of training rows (write e.g. "
                                        "250,500,1000)",
                                        text, item));
    out.push_back(value);
    pos = comma + 1;
  }
  return out;
}

// Rows split into folds: at random (rows), or by job so that a fold's shapes are never seen in
// training (jobs).
std::vector<int> assign_folds(const Dataset& data, int folds, const std::string& split, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> fold(data.rows.size());
  if (split == "rows") {
    std::vector<size_t> order(data.rows.size());
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    for (size_t i = 0; i < order.size(); ++i) fold[order[i]] = int(i % folds);
  } else if (split == "jobs") {
    auto jobs = data.jobs();
    for (size_t i = jobs.size(); i > 1; --i) std::swap(jobs[i - 1], jobs[rng() % i]);
    std::map<std::string, int> job_fold;
    for (size_t i = 0; i < jobs.size(); ++i) job_fold[jobs[i]] = int(i % folds);
    for (size_t i = 0; i < data.rows.size(); ++i) fold[i] = job_fold[data.rows[i].job];
  } else {
    throw InvalidArgument(fmt::format("--split {}: use rows or jobs", split));
  }
  return fold;
}

int cmd_cv(const std::string& data_path, const std::string& dtype, const std::string& arch_text, int folds,
           const std::string& split, const std::string& sizes_text, const TrainFlags& f, const std::string& csv_path,
           bool table) {
  if (folds < 2) throw InvalidArgument(fmt::format("--folds {}: at least 2", folds));
  if (split != "rows" && split != "jobs") throw InvalidArgument(fmt::format("--split {}: use rows or jobs", split));
  check_train_flags(f);
  const auto archs = parse_architectures(arch_text);
  const std::vector<size_t> sizes = sizes_text.empty() ? std::vector<size_t>{} : parse_sizes(sizes_text);
  if (!csv_path.empty()) check_output_path(csv_path);
  const Dataset data = load_dataset(data_path, dtype, f.sm_count);
  print_loaded(data_path, data);
  for (const auto& hidden : archs) check_model_size(data.samples.features, hidden, 1, "--architectures");
  // An empty fold would be averaged in as a test MSE of 0.
  const size_t units = split == "jobs" ? data.jobs().size() : data.rows.size();
  if (size_t(folds) > units)
    throw InvalidArgument(fmt::format("--folds {}: {} holds {} {}{} and each fold needs at least one: {}", folds,
                                      data_path, units, split == "jobs" ? "job" : "row", units == 1 ? "," : "s,",
                                      units < 2 ? "cross-validation needs more data"
                                                : fmt::format("give --folds {} or fewer", units)));
  const auto fold = assign_folds(data, folds, split, f.seed);
  // Rows are written as each fold ends, so that a long run leaves its results so far; each write is
  // checked, so that a full disk fails the run instead of leaving a short file behind.
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) throw Error(fmt::format("--csv {}: cannot write the file", csv_path));
  }
  auto write_csv = [&](const std::string& text) {
    if (!csv.is_open()) return;
    csv << text << std::flush;
    if (!csv) throw Error(fmt::format("--csv {}: writing failed (is the disk full?); the file is incomplete", csv_path));
  };
  auto rows_where = [&](auto pred) {
    std::vector<size_t> out;
    for (size_t i = 0; i < data.rows.size(); ++i)
      if (pred(i)) out.push_back(i);
    return out;
  };

  if (sizes_text.empty()) {  // Table 2: k-fold MSE per architecture
    write_csv("architecture,parameters,fold,train_rows,test_rows,train_mse,test_mse,seconds\n");
    fmt::print("{}-fold cross-validation ({} split), {} epochs, batch {}, lr {}: MSE of log(TFLOP/s)\n\n", folds, split,
               f.epochs, f.batch_size, f.learning_rate);
    fmt::print("| hidden layers | weights | train MSE | test MSE (mean ± sd over folds) | train time/fold |\n");
    fmt::print("|---|---:|---:|---:|---:|\n");
    for (const auto& hidden : archs) {
      std::vector<double> test_mse, train_mse;
      double seconds = 0;
      std::vector<size_t> all_test;
      std::vector<double> all_pred;
      size_t weights = 0;
      for (int k = 0; k < folds; ++k) {
        const auto tr = rows_where([&](size_t i) { return fold[i] != k; });
        const auto te = rows_where([&](size_t i) { return fold[i] == k; });
        const auto train_set = data.samples.subset(tr), test_set = data.samples.subset(te);
        const auto start = std::chrono::steady_clock::now();
        const auto label = fmt::format("{} fold {}/{}", tune::hidden_to_string(hidden), k + 1, folds);
        tune::Mlp mlp = fit(hidden, train_set, f, f.epochs, label, true);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        weights = mlp.parameter_count();
        seconds += s;
        train_mse.push_back(tune::mse(mlp, train_set));
        test_mse.push_back(tune::mse(mlp, test_set));
        const auto pred = mlp.predict(test_set);
        if (split == "jobs") {
          all_test.insert(all_test.end(), te.begin(), te.end());
          all_pred.insert(all_pred.end(), pred.begin(), pred.end());
        }
        write_csv(fmt::format("\"{}\",{},{},{},{},{:.6f},{:.6f},{:.2f}\n", tune::hidden_to_string(hidden), weights, k,
                              tr.size(), te.size(), train_mse.back(), test_mse.back(), s));
      }
      const double mean = std::accumulate(test_mse.begin(), test_mse.end(), 0.0) / folds;
      double var = 0;
      for (double v : test_mse) var += (v - mean) * (v - mean) / std::max(1, folds - 1);
      fmt::print("| {} | {} | {:.4f} | {:.4f} ± {:.4f} | {:.1f} s |\n", tune::hidden_to_string(hidden), weights,
                 std::accumulate(train_mse.begin(), train_mse.end(), 0.0) / folds, mean, std::sqrt(var),
                 seconds / folds);
      std::fflush(stdout);
      if (split == "jobs") {
        const auto ranks = rank_jobs(data, all_test, all_pred);
        print_ranking_summary(ranks, fmt::format("  {} on unseen shapes,", tune::hidden_to_string(hidden)));
        if (table) print_ranking_table(ranks);
      }
    }
    return 0;
  }

  // Figure 5: one fold held out, models trained on growing subsets of the others.
  const auto te = rows_where([&](size_t i) { return fold[i] == 0; });
  auto rest = rows_where([&](size_t i) { return fold[i] != 0; });
  std::mt19937_64 rng(f.seed + 1);
  for (size_t i = rest.size(); i > 1; --i) std::swap(rest[i - 1], rest[rng() % i]);
  const auto test_set = data.samples.subset(te);
  write_csv("architecture,train_rows,test_rows,epochs,train_mse,test_mse,seconds\n");
  fmt::print("MSE of log(TFLOP/s) on {} held-out rows ({} split) against training rows; the number of gradient steps is "
             "kept near that of {} epochs over all {} training rows (at most 20x the epochs)\n\n",
             te.size(), split, f.epochs, rest.size());
  fmt::print("| hidden layers | training rows | epochs | train MSE | test MSE |\n|---|---:|---:|---:|---:|\n");
  for (const auto& hidden : archs)
    for (size_t size : sizes) {
      size = std::min(size, rest.size());
      const std::vector<size_t> tr(rest.begin(), rest.begin() + size);
      const auto train_set = data.samples.subset(tr);
      const int epochs = int(std::min<double>(20.0 * f.epochs, std::ceil(double(f.epochs) * rest.size() / size)));
      const auto start = std::chrono::steady_clock::now();
      tune::Mlp mlp = fit(hidden, train_set, f, epochs, fmt::format("{} {} rows", tune::hidden_to_string(hidden), size), true);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double train = tune::mse(mlp, train_set), test = tune::mse(mlp, test_set);
      fmt::print("| {} | {} | {} | {:.4f} | {:.4f} |\n", tune::hidden_to_string(hidden), size, epochs, train, test);
      std::fflush(stdout);
      write_csv(fmt::format("\"{}\",{},{},{},{:.6f},{:.6f},{:.2f}\n", tune::hidden_to_string(hidden), size, te.size(),
                            epochs, train, test, s));
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"isaac-tune: the tuner's data, MLP performance model and search for GEMM"};
  app.require_subcommand(1);
  std::string data_path, hidden = "64,64", out, model_path, arch = "32;64;64,64;128,128;256,128,64", split = "rows",
                         sizes, csv_path, device = "unknown", dtype;
  int folds = 5, compute_capability = 0, ensemble = 1;
  bool table = false;
  TrainFlags flags;

  auto* train = app.add_subcommand("train", "train a model on a dataset and write the model file");
  train->add_option("--data", data_path, "dataset CSVs, comma-separated (.xz read through xz -dc)")->required();
  train->add_option("--hidden", hidden, "hidden layer sizes, e.g. 64,64 (0 for a linear model)")->capture_default_str();
  train->add_option("--out", out, "model file to write (JSON)")->required();
  train->add_option("--device", device, "the GPU the data was measured on, recorded in the model")->capture_default_str();
  train->add_option("--compute-capability", compute_capability, "of that GPU, e.g. 90 (models for other GPUs are "
                    "chosen by it)")->capture_default_str();
  train->add_option("--dtype", dtype, "train on this dtype's rows only (f16, f32, f64), recorded in the model");
  train->add_option("--ensemble", ensemble, "networks trained with seeds seed, seed+1, ... and kept as one whose "
                    "prediction is their mean")->capture_default_str();
  add_train_flags(train, flags);

  auto* eval = app.add_subcommand("eval", "MSE of a model on a dataset and how it ranks each job's parameter sets");
  eval->add_option("--data", data_path, "dataset CSV (.xz read through xz -dc)")->required();
  eval->add_option("--model", model_path, "model file")->required()->check(CLI::ExistingFile);
  eval->add_flag("--table", table, "print the per-job ranking table (markdown)");
  std::string predictions;
  eval->add_option("--predictions", predictions, "also write each row's measured and predicted TFLOP/s to this CSV");

  auto* cv = app.add_subcommand("cv", "k-fold cross-validation MSE per architecture, or MSE against dataset size");
  cv->add_option("--data", data_path, "dataset CSV (.xz read through xz -dc)")->required();
  cv->add_option("--dtype", dtype, "only this dtype's rows");
  cv->add_option("--architectures", arch, "hidden layers of each architecture, ';' between them")->capture_default_str();
  cv->add_option("--folds", folds, "number of folds")->capture_default_str();
  cv->add_option("--split", split, "rows: random rows per fold; jobs: whole (problem, dtype) jobs per fold")
      ->capture_default_str();
  cv->add_option("--sizes", sizes, "training set sizes, e.g. 250,500,1000: MSE on one held-out fold against size");
  cv->add_option("--csv", csv_path, "also write the results as CSV");
  cv->add_flag("--table", table, "with --split jobs: print the per-job ranking table");
  add_train_flags(cv, flags);

  int exit_code = 0;
  add_search_command(app, exit_code);
  add_export_command(app, exit_code);
  add_cache_command(app, exit_code);
  add_extend_command(app, exit_code);
  add_focus_command(app, exit_code);
  add_collect_command(app);
  add_sampler_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {  // isaac::Error, and whatever the standard library throws
    fmt::print(stderr, "isaac-tune: {}\n", e.what());
    return 1;
  }
  // The subcommands registered above ran in their callbacks; these three run here.
  if (!*train && !*eval && !*cv) return exit_code;
  try {
    flags.hidden = hidden;
    if (*train) return cmd_train(data_path, hidden, flags, ensemble, out, device, compute_capability, dtype);
    if (*eval) return cmd_eval(data_path, model_path, table, predictions);
    if (*cv) return cmd_cv(data_path, dtype, arch, folds, split, sizes, flags, csv_path, table);
  } catch (const std::exception& e) {  // isaac::Error, and whatever the standard library throws
    fmt::print(stderr, "isaac-tune: {}\n", e.what());
    return 1;
  }
  return 0;
}
