// The tuner's MLP performance model (issue 6, "Model"): it learns, its gradients are right, it is
// deterministic, and model files round-trip and are refused with clear messages when damaged.
#include <isaac/error.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/occupancy.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/mlp.hpp>
#include <isaac/tune/model_file.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace isaac;
using namespace isaac::tune;

namespace {

// y = sin(2 x0) + x1 * x2 + 0.5 x0^2 over [-1.5, 1.5]^3, inputs shifted and scaled so that the
// model's normalisation has something to do.
Samples smooth(std::size_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  Samples s;
  s.features = 3;
  for (std::size_t i = 0; i < rows; ++i) {
    const double a = u(rng), b = u(rng), c = u(rng);
    s.x.insert(s.x.end(), {10 + 4 * a, b, 100 * c});
    s.y.push_back(std::sin(2 * a) + b * c + 0.5 * a * a);
  }
  return s;
}

double variance(const std::vector<double>& v) {
  double mean = 0, var = 0;
  for (double x : v) mean += x / double(v.size());
  for (double x : v) var += (x - mean) * (x - mean) / double(v.size());
  return var;
}

Model small_model() {
  Model model;
  model.device = "test device";
  model.features = {"a", "b", "c"};
  model.mlp = Mlp(3, {8, 4}, 7);
  TrainOptions opts;
  opts.epochs = 5;
  train(model.mlp, smooth(200, 3), opts);
  model.training.mse = 0.5;
  return model;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("isaac_tune_mlp_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string json_of(const Model& m) { return model_to_json(m); }

// The message of the InvalidArgument that loading this text throws ("" when it loads).
std::string load_error(const std::string& text) {
  try {
    model_from_json(text, "bad.json");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

}  // namespace

TEST_CASE("the MLP fits a smooth function of three inputs") {
  const Samples train_set = smooth(3000, 1), test_set = smooth(1000, 2);
  const double var = variance(test_set.y);
  Mlp mlp(3, {32, 32}, 42);
  TrainOptions opts;
  opts.epochs = 60;
  opts.batch_size = 32;
  opts.learning_rate = 3e-3;
  opts.lr_decay = 0.97;
  const auto report = train(mlp, train_set, opts);
  const double test = mse(mlp, test_set);
  MESSAGE("variance " << var << ", test MSE " << test << ", " << report.seconds << " s");
  CHECK(test < 0.01 * var);  // explains over 99% of the variance on unseen points
  CHECK(report.train_mse < 0.01 * var);

  // The threshold is one a model without hidden layers cannot meet.
  Mlp linear(3, {}, 42);
  train(linear, train_set, opts);
  CHECK(mse(linear, test_set) > 0.1 * var);
}

TEST_CASE("back-propagation agrees with finite differences") {
  Samples data = smooth(25, 5);
  Mlp mlp(3, {6, 5}, 11);
  mlp.fit_normalisation(data);  // non-trivial normalisation inside the loss
  // Biases away from zero so that the ReLUs are not all at their kink together.
  auto p = mlp.parameters();
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  for (double& v : p) v += u(rng);
  mlp.set_parameters(p);

  std::vector<double> grad;
  const double loss = mlp.gradient(data, grad);
  CHECK(loss == doctest::Approx(mlp.loss(data)).epsilon(1e-12));
  REQUIRE(grad.size() == mlp.parameter_count());
  double worst = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double h = 1e-6;
    auto q = p;
    q[i] = p[i] + h;
    mlp.set_parameters(q);
    const double up = mlp.loss(data);
    q[i] = p[i] - h;
    mlp.set_parameters(q);
    const double down = mlp.loss(data);
    const double numeric = (up - down) / (2 * h);
    worst = std::max(worst, std::abs(numeric - grad[i]) / std::max(1e-3, std::abs(numeric) + std::abs(grad[i])));
  }
  MESSAGE("worst relative gradient error " << worst);
  CHECK(worst < 1e-5);
}

TEST_CASE("Adam decreases the loss, and training is deterministic for a seed") {
  const Samples data = smooth(500, 9);
  Mlp a(3, {16}, 5), b(3, {16}, 5), c(3, {16}, 6);
  TrainOptions opts;
  opts.epochs = 20;
  opts.seed = 4;
  a.fit_normalisation(data);
  const double before = a.loss(data);
  const auto report = train(a, data, opts);
  const double after = a.loss(data);
  CHECK(after < 0.5 * before);
  REQUIRE(report.epoch_mse.size() == 20);
  CHECK(report.epoch_mse.back() < 0.5 * report.epoch_mse.front());
  train(b, data, opts);
  train(c, data, opts);
  CHECK(a.parameters() == b.parameters());
  CHECK(a.parameters() != c.parameters());
}

TEST_CASE("batched prediction equals row-by-row prediction") {
  const Model model = small_model();
  const Samples data = smooth(50, 8);
  const auto all = model.mlp.predict(data);
  REQUIRE(all.size() == 50);
  for (size_t i = 0; i < 50; ++i)
    CHECK(all[i] == doctest::Approx(model.mlp.predict(data.x.data() + 3 * i, 1)[0]).epsilon(1e-12));
}

TEST_CASE("model files round-trip exactly and are written atomically") {
  const Model model = small_model();
  const std::string path = temp_path("model.json");
  save_model(model, path);
  for (auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    CHECK(entry.path().string().find(path + ".tmp") == std::string::npos);
  const Model back = load_model(path);
  CHECK(back.device == "test device");
  CHECK(back.template_name == "gemm");
  CHECK(back.features == model.features);
  CHECK(back.mlp.sizes() == std::vector<int>{3, 8, 4, 1});
  CHECK(back.training.mse == 0.5);
  const Samples data = smooth(100, 4);
  CHECK(back.mlp.predict(data) == model.mlp.predict(data));  // bit for bit
  CHECK(back.mlp.parameters() == model.mlp.parameters());

  // A failed save leaves the previous model in place.
  Model broken = model;
  broken.features.pop_back();
  CHECK_THROWS_AS(save_model(broken, path), InvalidArgument);
  CHECK(load_model(path).mlp.parameters() == model.mlp.parameters());
  CHECK_THROWS_AS(save_model(model, temp_path("no/such/dir/model.json")), InvalidArgument);
  std::filesystem::remove(path);
  CHECK_THROWS_WITH_AS(load_model(path), doctest::Contains("cannot read model file"), InvalidArgument);
}

TEST_CASE("damaged model files are refused with what is wrong") {
  const std::string good = json_of(small_model());
  CHECK(load_error(good) == "");

  CHECK(load_error(good.substr(0, good.size() / 2)).find("bad.json: not valid JSON") == 0);
  CHECK(load_error("[1, 2]").find("not a model file") != std::string::npos);
  CHECK(load_error(replace(good, "\"isaac-model\"", "\"other\"")).find("not a model file") != std::string::npos);
  const auto version = load_error(replace(good, "\"version\": 1", "\"version\": 7"));
  CHECK(version.find("model format version 7 is not supported (this build reads version 1)") != std::string::npos);
  CHECK(load_error(replace(good, "\"version\": 1", "\"version\": \"1\"")).find("version \"1\" is not supported") !=
        std::string::npos);

  // Layer sizes that disagree with the weights, the features or the output.
  CHECK(load_error(replace(good, "\"layer_sizes\": [\n  3,\n  8,", "\"layer_sizes\": [\n  3,\n  9,"))
            .find("layer 0 weights must be 9 rows of 3") != std::string::npos);
  CHECK(load_error(replace(good, "\"layer_sizes\": [\n  3,", "\"layer_sizes\": [\n  4,"))
            .find("\"layer_sizes\" starts with 4 inputs but \"features\" names 3") != std::string::npos);
  CHECK(load_error(replace(good, "  4,\n  1\n ]", "  4,\n  2\n ]")).find("must end with 1 output, it ends with 2") !=
        std::string::npos);
  CHECK(load_error(replace(good, "\"layer_sizes\": [", "\"layer_sizes\": [\n  -3,"))
            .find("holds -3, not a positive layer size") != std::string::npos);

  // Missing or mistyped fields, and numbers that cannot be weights.
  CHECK(load_error(replace(good, "\"normalisation\"", "\"normalization\"")).find("the file has no \"normalisation\"") !=
        std::string::npos);
  CHECK(load_error(replace(good, "\"target_scale\": ", "\"target_scale\": -1e9 , \"x\": "))
            .find("target normalisation is invalid") != std::string::npos);
  CHECK(load_error(replace(good, "\"bias\": [", "\"bias\": [\"oops\",")).find("bias has 9 values, expected 8") !=
        std::string::npos);
  CHECK(load_error(replace(good, "\"device\": \"test device\"", "\"device\": 3"))
            .find("\"device\" must be a string, got number") != std::string::npos);
}

TEST_CASE("GEMM features: names, log2 values, one row per parameter set") {
  const auto& names = gemm_feature_names();
  const auto g = ir::dense_gemm(ir::DType::f32, 512, 1024, 60000, false, true);
  const auto p = lower::parse_gemm_params("ML=64,NL=32,MS=4,NS=4,U=8,KS=1,KL=2,KG=4,VA=4,VB=4,LA=16,LB=8,DB=1,SW=8,ACC=32");
  const auto f = gemm_features(g, p);
  REQUIRE(f.size() == names.size());
  auto feature = [&](const std::vector<double>& row, const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return row[size_t(it - names.begin())];
  };
  auto value = [&](const std::string& name) { return feature(f, name); };
  CHECK(value("log2_m") == 9);
  CHECK(value("log2_n") == 10);
  CHECK(value("log2_k") == doctest::Approx(std::log2(60000.0)));
  CHECK(value("b_trans") == 1);
  CHECK(value("a_trans") == 0);
  CHECK(value("f32") == 1);
  CHECK(value("f16") == 0);
  CHECK(value("log2_kg") == 2);
  CHECK(value("log2_threads") == 8);                                  // 16 * 8 * 2
  CHECK(value("log2_blocks") == doctest::Approx(std::log2(8 * 32 * 4)));  // M/ML * N/NL * KG
  CHECK(value("log2_k_iterations") == doctest::Approx(std::log2(1875)));  // 60000 / 4 / 8
  CHECK(value("wgmma") == 0);
  CHECK(value("tma") == 0);
  const auto h = ir::dense_gemm(ir::DType::f16, 512, 1024, 4096, false, true);
  const auto w = gemm_features(h, lower::parse_gemm_params("ML=128,NL=128,MS=8,NS=8,U=64,VA=8,VB=8,TC=2,TMA=1"));
  CHECK(feature(w, "wgmma") == 1);
  CHECK(feature(w, "tma") == 1);
  // Occupancy: f64 2560x64x2560 on 40 tiles of 64 x 64, 3 blocks per SM (396 slots) by the
  // registers. Split 10 ways, 400 blocks run a wave and 4 blocks; 8 ways, 320 run in one (round 42).
  const auto thin = ir::dense_gemm(ir::DType::f64, 2560, 64, 2560, false, false);
  auto split = lower::parse_gemm_params("ML=64,NL=64,MS=4,NS=8,U=16,KG=10,VA=2,VB=1,LA=32,LB=16,DB=1,TC=1");
  CHECK(feature(gemm_features(thin, split), "log2_resident_blocks") == doctest::Approx(std::log2(3.0)));
  CHECK(feature(gemm_features(thin, split), "wave_fill") == doctest::Approx(400.0 / 792));
  split.kg = 8;
  CHECK(feature(gemm_features(thin, split), "wave_fill") == doctest::Approx(320.0 / 396));
  lower::DeviceLimits smaller;
  smaller.sm_count = 100;  // 300 slots: 320 blocks are a wave and 20
  CHECK(feature(gemm_features(thin, split, smaller), "wave_fill") == doctest::Approx(320.0 / 600));
  // The SM balance: 320 blocks on 132 SMs, 3 on the busiest (396 places one block deep); on 100 SMs, 4.
  CHECK(feature(gemm_features(thin, split), "sm_balance") == doctest::Approx(320.0 / 396));
  CHECK(feature(gemm_features(thin, split, smaller), "sm_balance") == doctest::Approx(320.0 / 400));
  // f64 1024^3 on 64 x 64 tiles, unsplit: 256 blocks, two on nearly every SM, which the wave fill of
  // three slots per SM rates 65% full; split 4 ways, 1,024 blocks, 8 on the busiest (round 65).
  const auto square = ir::dense_gemm(ir::DType::f64, 1024, 1024, 1024, false, true);
  auto unsplit = lower::parse_gemm_params("ML=64,NL=64,MS=4,NS=8,U=16,KG=1,VA=1,VB=2,LA=64,LB=32,DB=1,TC=1");
  CHECK(feature(gemm_features(square, unsplit), "wave_fill") == doctest::Approx(256.0 / 396));
  CHECK(feature(gemm_features(square, unsplit), "sm_balance") == doctest::Approx(256.0 / 264));
  unsplit.kg = 4;
  CHECK(feature(gemm_features(square, unsplit), "sm_balance") == doctest::Approx(1024.0 / 1056));
  // The problem's own features lead, the same for every set (the search folds them into its bias).
  CHECK(names[gemm_problem_features] == "log2_ml");
  const auto other = gemm_features(g, lower::GemmParams{});
  CHECK(std::equal(f.begin(), f.begin() + gemm_problem_features, other.begin()));
  const std::vector<lower::GemmParams> many{p, lower::GemmParams{}, p};
  const auto batch = gemm_features(g, std::span<const lower::GemmParams>(many));
  REQUIRE(batch.size() == 3 * names.size());
  CHECK(std::vector<double>(batch.begin(), batch.begin() + names.size()) == f);
  CHECK(std::vector<double>(batch.end() - names.size(), batch.end()) == f);
}

TEST_CASE("CONV features: the direct kernels count an implicit GEMM, the Winograd ones 2 x 2 tiles and planes") {
  const auto& names = conv_feature_names();
  // N=8, C=100, 30 x 29 -> P x Q = 28 x 27, K=70, 3 x 3.
  const ir::Conv v = ir::dense_conv(ir::DType::f32, 8, 100, 30, 29, 70, 3, 3, 1, 0, 1, ir::ImageLayout::nchw,
                                    ir::FilterLayout::kcrs);
  auto value = [&](const lower::ConvParams& p, const std::string& name) {
    const auto row = conv_features(v, p);
    REQUIRE(row.size() == names.size());
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return row[size_t(it - names.begin())];
  };
  const auto direct = lower::parse_conv_params("PL=64,KL=32,PS=4,KS=4,U=8,CS=1,CL=2,CG=3,VI=1,VF=1,LI=16,LF=8,DB=0");
  CHECK(value(direct, "wg") == 0);
  CHECK(value(direct, "log2_group_planes") == 0);
  CHECK(value(direct, "log2_threads") == 8);  // 16 * 8 * 2
  // ceil(8*28*27 / 64) * ceil(70 / 32) * 3 blocks, ceil(ceil(900 / 3) / 8) iterations.
  CHECK(value(direct, "log2_blocks") == doctest::Approx(std::log2(95.0 * 3 * 3)));
  CHECK(value(direct, "log2_reduction_iterations") == doctest::Approx(std::log2(38.0)));
  const auto winograd = lower::parse_conv_params("PL=32,KL=16,PS=4,KS=8,U=4,CL=4,LI=0,LF=0,DB=0,WG=1");
  CHECK(value(winograd, "wg") == 1);
  CHECK(value(winograd, "log2_group_planes") == 2);  // 16 planes in 4 groups
  CHECK(value(winograd, "log2_cl") == 2);
  // 8 x 14 x 14 tiles: ceil(1568 / 32) * ceil(70 / 16) blocks, ceil(100 / 4) iterations.
  CHECK(value(winograd, "log2_blocks") == doctest::Approx(std::log2(49.0 * 5)));
  CHECK(value(winograd, "log2_reduction_iterations") == doctest::Approx(std::log2(25.0)));
  CHECK(value(winograd, "tma") == 0);
  // The problem's own features lead, the same for every set (the search folds them into its bias).
  CHECK(names[conv_problem_features] == "log2_pl");
  const auto a = conv_features(v, direct), b = conv_features(v, winograd);
  CHECK(std::equal(a.begin(), a.begin() + conv_problem_features, b.begin()));
  CHECK(value(winograd, "log2_resident_blocks") == 0);
  CHECK(value(winograd, "wave_fill") == 1);
  // A direct set's occupancy: its 95 * 3 * 3 blocks over waves of what an SM holds by its estimated
  // registers and shared memory, on the device given (132 SMs by default).
  const Multiprocessors h100;
  const int resident = resident_blocks(
      direct.threads(), lower::estimate_conv_registers(v, direct),
      lower::conv_shared_bytes(v.dtype, lower::conv_input_reduction_contiguous(v), lower::conv_filter_k_contiguous(v),
                               direct),
      h100);
  REQUIRE(resident > 1);
  CHECK(value(direct, "tma") == 0);
  CHECK(value(direct, "log2_resident_blocks") == doctest::Approx(std::log2(double(resident))));
  CHECK(value(direct, "wave_fill") == doctest::Approx(wave_fill(855, resident, h100)));
  lower::DeviceLimits small;
  small.sm_count = 7;
  const auto on_small = conv_features(v, direct, small);
  const auto fill = std::find(names.begin(), names.end(), "wave_fill") - names.begin();
  CHECK(on_small[size_t(fill)] == doctest::Approx(855.0 / (std::ceil(855.0 / (7 * resident)) * 7 * resident)));
}

TEST_CASE("CONV features: a TMA set says so, and its producer warp counts in its occupancy") {
  const auto& names = conv_feature_names();
  auto at = [&](const std::string& name) { return size_t(std::find(names.begin(), names.end(), name) - names.begin()); };
  // f16 NHWC/KRSC with C a multiple of U: TMA copies (lower::conv_tma); with C = 40 the same set cannot.
  const ir::Conv v = ir::dense_conv(ir::DType::f16, 16, 64, 42, 175, 32, 5, 10, 1, 0, 1, ir::ImageLayout::nhwc,
                                    ir::FilterLayout::krsc);
  const ir::Conv odd = ir::dense_conv(ir::DType::f16, 16, 40, 42, 175, 32, 5, 10, 1, 0, 1, ir::ImageLayout::nhwc,
                                      ir::FilterLayout::krsc);
  const auto p = lower::parse_conv_params("PL=128,KL=32,PS=16,KS=2,U=32,CS=1,CL=1,CG=1,VI=8,VF=8,LI=4,LF=4,DB=0,TC=2");
  REQUIRE(lower::conv_legal(v, p));
  REQUIRE(lower::conv_legal(odd, p));
  REQUIRE(lower::conv_tma(v, p));
  REQUIRE_FALSE(lower::conv_tma(odd, p));
  CHECK(conv_features(v, p)[at("tma")] == 1);
  CHECK(conv_features(odd, p)[at("tma")] == 0);
  // 160 threads with the producer warp; 32 accumulators, so 58 registers (ptxas's count on sm_90):
  // 6 blocks by registers, 7 by the 30 KB of three stages (DB=0) and 5 by the 40 KB of four (DB=1).
  REQUIRE(lower::conv_tma_producer_warp(v, p));
  CHECK(conv_features(v, p)[at("log2_resident_blocks")] == doctest::Approx(std::log2(6.0)));
  auto deeper = p;
  deeper.db = 1;
  REQUIRE(lower::conv_legal(v, deeper));
  CHECK(conv_features(v, deeper)[at("log2_resident_blocks")] == doctest::Approx(std::log2(5.0)));
  // 16 x 38 x 166 pixels in 789 blocks of 128: one wave of 6 x 132 slots, or two of 5 x 132.
  CHECK(conv_features(v, p)[at("wave_fill")] == doctest::Approx(789.0 / 792));
  CHECK(conv_features(v, deeper)[at("wave_fill")] == doctest::Approx(789.0 / 1320));
}

TEST_CASE("CONV features: the stages of a TMA kernel's ring, deep where its grid fits on the SMs") {
  const auto& names = conv_feature_names();
  auto at = [&](const std::string& name) { return size_t(std::find(names.begin(), names.end(), name) - names.begin()); };
  REQUIRE(at("log2_tma_stages") < names.size());
  // DeepBench's Conv13 (784 pixels x 512 filters): 104 blocks of 64 x 64 run a ring of 12 stages,
  // 208 of 64 x 32 one of four (three with DB=0); a CHWN input copies with cp.async, and has no ring.
  const ir::Conv v = ir::dense_conv(ir::DType::f16, 16, 512, 9, 9, 512, 3, 3, 1, 0, 1, ir::ImageLayout::nhwc,
                                    ir::FilterLayout::krsc);
  const ir::Conv chwn = ir::dense_conv(ir::DType::f16, 16, 512, 9, 9, 512, 3, 3, 1, 0, 1, ir::ImageLayout::chwn,
                                       ir::FilterLayout::krsc);
  auto fitted = [&](const ir::Conv& c, const char* text) {
    auto p = lower::parse_conv_params(text);
    lower::fit_conv_load_layouts(c, p);
    REQUIRE(lower::conv_legal(c, p));
    return p;
  };
  const auto deep = fitted(v, "PL=64,KL=64,PS=8,KS=4,U=64,VI=8,VF=8,TC=2");
  const auto four = fitted(v, "PL=64,KL=32,PS=8,KS=2,U=64,VI=8,VF=8,TC=2");
  REQUIRE(lower::conv_pipeline_stages(v, deep) == 12);
  CHECK(conv_features(v, deep)[at("log2_tma_stages")] == doctest::Approx(std::log2(12.0)));
  CHECK(conv_features(v, four)[at("log2_tma_stages")] == 2);
  auto three = four;  // one stage fewer with DB=0
  three.db = 0;
  REQUIRE(lower::conv_legal(v, three));
  CHECK(conv_features(v, three)[at("log2_tma_stages")] == doctest::Approx(std::log2(3.0)));
  CHECK(conv_features(chwn, fitted(chwn, "PL=64,KL=64,PS=8,KS=4,U=64,VI=8,VF=8,TC=2"))[at("log2_tma_stages")] == 0);
}

TEST_CASE("hidden layer lists") {
  CHECK(parse_hidden("64,64") == std::vector<int>{64, 64});
  CHECK(parse_hidden("0").empty());
  CHECK(hidden_to_string({256, 128, 64}) == "256,128,64");
  CHECK_THROWS_WITH_AS(parse_hidden("64,x"), doctest::Contains("\"x\" is not a positive layer size"), InvalidArgument);
  CHECK_THROWS_AS(parse_hidden("64,-1"), InvalidArgument);
  CHECK_THROWS_AS(parse_hidden("64,"), InvalidArgument);
}

TEST_CASE("a constant feature is normalised by its value and scale 1, however many rows sum its mean") {
  Samples s;
  s.features = 2;
  for (int r = 0; r < 300000; ++r) s.x.push_back(8.228818690495881), s.x.push_back(r % 7), s.y.push_back(r % 3);
  Mlp mlp(2, {4}, 1);
  mlp.fit_normalisation(s);
  CHECK(mlp.feature_mean[0] == 8.228818690495881);
  CHECK(mlp.feature_scale[0] == 1.0);
  CHECK(mlp.feature_scale[1] == doctest::Approx(2.0).epsilon(1e-3));
}

TEST_CASE("a feature that no training row varies carries no weight, so a new value of it changes nothing") {
  Samples s = smooth(500, 3);
  // A fourth input, always 0 in the training rows (a kind of kernel the data never ran).
  Samples wide;
  wide.features = 4;
  wide.y = s.y;
  for (std::size_t r = 0; r < s.rows(); ++r) wide.x.insert(wide.x.end(), {s.x[3 * r], s.x[3 * r + 1], s.x[3 * r + 2], 0.0});
  Mlp mlp(4, {16}, 7);
  TrainOptions opts;
  opts.epochs = 5;
  train(mlp, wide, opts);
  const std::vector<double> without = {10.5, 0.3, -20.0, 0.0}, with = {10.5, 0.3, -20.0, 1.0};
  CHECK(mlp.predict(with.data(), 1)[0] == mlp.predict(without.data(), 1)[0]);
  // A feature that varies keeps its weights: the third input moves the prediction.
  const std::vector<double> other = {10.5, 0.3, 60.0, 0.0};
  CHECK(mlp.predict(other.data(), 1)[0] != mlp.predict(without.data(), 1)[0]);
}
