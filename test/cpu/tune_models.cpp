// Which model the runtime picks (issue 6): a user model in the cache directory first, then a shipped
// model of the same device, then the shipped model of the nearest compute capability with a warning.
#include <isaac/error.hpp>
#include <isaac/tune/conv_features.hpp>
#include <isaac/tune/features.hpp>
#include <isaac/tune/models.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
}
