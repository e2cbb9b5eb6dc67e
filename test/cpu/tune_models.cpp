// Which model the runtime picks (issue 6): a user model in the cache directory first, then a shipped
// model of the same device, then the shipped model of the nearest compute capability with a warning.
#include <isaac/error.hpp>
#include <isaac/tune/bucket.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/models.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace isaac;
using namespace isaac::tune;

namespace {

// Points the cache at a fresh folder for the duration of a test.
struct TempCache {
  std::string dir;
  TempCache() {
    dir = (std::filesystem::temp_directory_path() / ("isaac-models-" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir + "/models");
    ::setenv("ISAAC_CACHE_DIR", dir.c_str(), 1);
  }
  ~TempCache() {
    std::filesystem::remove_all(dir);
    ::unsetenv("ISAAC_CACHE_DIR");
  }
};

Model small_model(const std::string& device, ir::DType dtype) {
  Model m;
  m.device = device;
  m.compute_capability = 80;
  m.dtype = std::string(ir::name(dtype));
  m.features = gemm_feature_names();
  m.mlp = Mlp(int(m.features.size()), {4}, 1);
  return m;
}

}  // namespace

TEST_CASE("the cache directory follows ISAAC_CACHE_DIR, then XDG_CACHE_HOME, then HOME") {
  ::setenv("ISAAC_CACHE_DIR", "/tmp/a", 1);
  CHECK(cache_directory() == "/tmp/a");
  CHECK(user_model_path("gemm", ir::DType::f16) == "/tmp/a/models/gemm-f16.json");
  ::unsetenv("ISAAC_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/tmp/b", 1);
  CHECK(cache_directory() == "/tmp/b/isaac");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(cache_directory() == std::string(std::getenv("HOME")) + "/.cache/isaac");
}

TEST_CASE("every shipped model loads and is found for its own device without a warning") {
  for (const std::string& line : shipped_models()) MESSAGE(line);
  TempCache cache;  // no user models
  for (const char* template_name : {"gemm", "conv"})
    for (ir::DType dtype : {ir::DType::f16, ir::DType::f32, ir::DType::f64}) {
      CAPTURE(template_name);
      CAPTURE(ir::name(dtype));
      auto other = find_model(template_name, dtype, "Some Future GPU", 120);
      if (!other) continue;
      CHECK(other->warning.find("Some Future GPU") != std::string::npos);
      CHECK(other->warning.find("isaac-tune") != std::string::npos);
      auto own = find_model(template_name, dtype, other->model.device, other->model.compute_capability);
      REQUIRE(own);
      CHECK(own->warning.empty());
      CHECK((own->model.dtype.empty() || own->model.dtype == ir::name(dtype)));
      CHECK(own->model.features == (template_name == std::string("gemm") ? gemm_feature_names() : conv_feature_names()));
    }
  // A model of the dtype comes before one of all dtypes: on the H100, GEMM has one per dtype, CONV
  // one for f16 and one for f32, and CONV f64 takes the one of all dtypes.
  for (const char* template_name : {"conv", "gemm"})
    for (ir::DType dtype : {ir::DType::f16, ir::DType::f32, ir::DType::f64}) {
      auto own = find_model(template_name, dtype, "NVIDIA H100 80GB HBM3", 90);
      REQUIRE(own);
      if (template_name == std::string("conv") && dtype == ir::DType::f64) {
        CHECK(own->model.dtype.empty());
        CHECK(own->source == "shipped model conv-h100");
        continue;
      }
      CHECK(own->model.dtype == ir::name(dtype));
      CHECK(own->source == fmt::format("shipped model {}-h100-{}", template_name, ir::name(dtype)));
    }
  // bf16 GEMM kernels are f16's with other instruction types: the f16 model ranks them, and says so.
  auto bf16 = find_model("gemm", ir::DType::bf16, "NVIDIA H100 80GB HBM3", 90);
  REQUIRE(bf16);
  CHECK(bf16->model.dtype == "f16");
  CHECK(bf16->warning.empty());
  CHECK(bf16->source == "shipped model gemm-h100-f16 (the f16 model, standing in for bf16)");
  auto bf16_conv = find_model("conv", ir::DType::bf16, "NVIDIA H100 80GB HBM3", 90);
  REQUIRE(bf16_conv);
  CHECK(bf16_conv->source == "shipped model conv-h100-f16 (the f16 model, standing in for bf16)");
}

// No shipped model was trained on bf16: that input must move no prediction by the random start of
// weights that training never updated (tune::zero_unvaried_inputs; `isaac-tune extend --unvaried`
// cleared them in the models trained before 0.1.30). The GEMM models were trained on batched GEMMs
// since 0.1.31 (round 47): their batch count carries weight.
TEST_CASE("the shipped models give no weight to inputs their data never varied, and GEMM's weigh the batch") {
  TempCache cache;
  for (const char* template_name : {"gemm", "conv"})
    for (ir::DType dtype : {ir::DType::f16, ir::DType::f32, ir::DType::f64}) {
      auto own = find_model(template_name, dtype, "NVIDIA H100 80GB HBM3", 90);
      REQUIRE(own);
      CAPTURE(own->source);
      const Model& model = own->model;
      const Layer& first = model.mlp.layers().front();
      const auto weights_of = [&](const std::string& feature) {
        const auto at = std::ranges::find(model.features, feature);
        REQUIRE(at != model.features.end());
        const std::size_t f = std::size_t(at - model.features.begin());
        std::vector<double> out;
        for (int o = 0; o < first.outputs; ++o) out.push_back(first.weights[std::size_t(o) * std::size_t(first.inputs) + f]);
        return out;
      };
      for (double w : weights_of("bf16")) REQUIRE(w == 0.0);
      if (template_name == std::string("gemm"))
        CHECK(std::ranges::any_of(weights_of("log2_batch"), [](double w) { return w != 0.0; }));
    }
}

TEST_CASE("a user model in the cache directory takes precedence, and a damaged one is an error") {
  TempCache cache;
  save_model(small_model("My GPU", ir::DType::f64), user_model_path("gemm", ir::DType::f64));
  auto choice = find_model("gemm", ir::DType::f64, "My GPU (user test)", 80);
  REQUIRE(choice);
  CHECK(choice->source.find("user model") != std::string::npos);
  CHECK(choice->model.device == "My GPU");

  std::ofstream(user_model_path("gemm", ir::DType::f16)) << "{\"format\": \"isaac-model\", \"version\": 1";
  CHECK_THROWS_WITH_AS(find_model("gemm", ir::DType::f16, "My GPU (damaged test)", 80),
                       doctest::Contains("not valid JSON"), InvalidArgument);

  // A model of another dtype under this dtype's name would rank the space for the wrong kernels.
  save_model(small_model("My GPU", ir::DType::f64), user_model_path("gemm", ir::DType::f32));
  CHECK_THROWS_WITH_AS(find_model("gemm", ir::DType::f32, "My GPU (renamed test)", 80),
                       doctest::Contains("is a gemm model for f64, but its name says gemm for f32"), InvalidArgument);
}

namespace {

// The message of the InvalidArgument that loading this text throws ("" when it loads); any other
// exception fails the test.
std::string load_error(const std::string& text) {
  try {
    model_from_json(text, "user.json");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

// `text` with the first `from` replaced by `to`.
std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("a damaged model file is an InvalidArgument naming the file, whatever JSON holds") {
  const std::string good = model_to_json(small_model("My GPU", ir::DType::f32));
  REQUIRE(load_error(good) == "");
  // Before: nlohmann's own exceptions, without the file's name.
  CHECK(load_error(replace(good, "\"bias\": [", "\"bias\": [1e999,"))
            .starts_with("user.json: not valid JSON ([json.exception.out_of_range.406] number overflow"));
  CHECK(load_error(replace(good, "\"epochs\": 0", "\"epochs\": \"many\"")) ==
        "user.json: \"training\" \"epochs\" must be an integer from 0 to 2147483647, got \"many\"");
  CHECK(load_error(replace(good, "\"seed\": 0", "\"seed\": \"abc\""))
            .find("\"training\" \"seed\" must be an integer") != std::string::npos);
  CHECK(load_error(replace(good, "\"rows\": 0", "\"rows\": -5")).find("\"rows\" must be an integer from 0") !=
        std::string::npos);
  CHECK(load_error(replace(good, "\"mse\": 0.0", "\"mse\": [1]")).find("\"training\" \"mse\" must be a number") !=
        std::string::npos);
  CHECK(load_error(replace(good, "\"data\": \"\"", "\"data\": 7")).find("\"training\" \"data\" must be a string") !=
        std::string::npos);
  CHECK(load_error(replace(good, "\"training\": {", "\"training\": 3, \"unread\": {"))
            .find("\"training\" must be a JSON object, got number") != std::string::npos);
  // Writing, too: a name that is not UTF-8 made nlohmann throw its own type_error.
  CHECK_THROWS_WITH_AS(model_to_json(small_model("GPU \xff", ir::DType::f32)),
                       doctest::Contains("cannot write the model as JSON"), InvalidArgument);
}

TEST_CASE("a model file's layer sizes must agree with its layers before anything is allocated") {
  // 158 bytes that asked for 2^40 weights (std::bad_alloc) before "layers" was looked at.
  CHECK(load_error(R"({"format": "isaac-model", "version": 1, "template": "gemm", "device": "x", )"
                   R"("target": "log_tflops", "features": ["a"], "layer_sizes": [1, 1048576, 1048576, 1]})") ==
        "user.json: the file has no \"layers\"");
  CHECK(load_error(R"({"format": "isaac-model", "version": 1, "template": "gemm", "device": "x", )"
                   R"("target": "log_tflops", "features": ["a"], "layer_sizes": [1, 1048576, 1048576, 1], )"
                   R"("layers": [{"weights": [[1]], "bias": [0]}, {}, {}]})")
            .find("layer 0 weights must be 1048576 rows of 1") != std::string::npos);
  CHECK(load_error(R"({"format": "isaac-model", "version": 1, "template": "gemm", "device": "x", )"
                   R"("target": "log_tflops", "features": ["a"], "layer_sizes": [1, 2, 1], )"
                   R"("layers": [{"weights": [[1], [2, 3]], "bias": [0, 0]}, {"weights": [[1, 1]], "bias": [0]}]})")
            .find("layer 0 weights row 1 must hold 1 values (layer_sizes [1,2,1]), found 2") != std::string::npos);
  CHECK(load_error(R"({"format": "isaac-model", "version": 1, "template": "gemm", "device": "x", )"
                   R"("target": "log_tflops", "features": ["a"], "layer_sizes": [1, 2097152, 1]})")
            .find("holds 2097152, not a positive layer size (at most 1048576)") != std::string::npos);
}

TEST_CASE("a model file's target, dtype and compute capability are what this build uses") {
  const std::string good = model_to_json(small_model("My GPU", ir::DType::f32));
  CHECK(load_error(replace(good, "\"log_tflops\"", "\"ms\"")) ==
        "user.json: \"target\" is \"ms\": this build's models predict \"log_tflops\" (the natural log of TFLOP/s)");
  CHECK(load_error(replace(good, "\"dtype\": \"f32\"", "\"dtype\": \"f33\""))
            .find("user.json: \"dtype\": unknown dtype 'f33'") != std::string::npos);
  CHECK(load_error(replace(good, "\"dtype\": \"f32\"", "\"dtype\": \"\"")) == "");  // a model of every dtype
  // 2^40 was truncated to 0 by the conversion to int.
  CHECK(load_error(replace(good, "\"compute_capability\": 80", "\"compute_capability\": 1099511627776")) ==
        "user.json: \"compute_capability\" must be an integer from 0 to 999 such as 90, got 1099511627776");
}

TEST_CASE("bucketed keys: K = 0 has a bucket, and rounding stops at 2^62 instead of looping") {
  CHECK(gemm_bucket(ir::dense_gemm(ir::DType::f32, 64, 64, 0, false, false)) ==
        "gemm M<=64 N<=64 K=0 batch<=1 tile64=yes");
  CHECK(gemm_bucket(ir::dense_gemm(ir::DType::f32, 64, 64, 1, false, false)) ==
        "gemm M<=64 N<=64 K<=1 batch<=1 tile64=no");
  CHECK(round_up_power_of_two(1) == 1);
  CHECK(round_up_power_of_two(1000) == 1024);
  CHECK(round_up_power_of_two(std::int64_t{1} << 62) == std::int64_t{1} << 62);
  CHECK(round_up_power_of_two((std::int64_t{1} << 40) + 1) == std::int64_t{1} << 41);
  CHECK_THROWS_WITH_AS(round_up_power_of_two((std::int64_t{1} << 62) + 1),
                       doctest::Contains("cannot bucket the size 4611686018427387905: sizes from 1 to 2^62 = "
                                         "4611686018427387904 round up to a power of two"),
                       InvalidArgument);
  CHECK_THROWS_AS(round_up_power_of_two(-1), InvalidArgument);
}
