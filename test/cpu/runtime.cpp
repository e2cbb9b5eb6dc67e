// The runtime loads on any machine: without a driver every entry point reports one clear error.
#include <doctest/doctest.h>
#include <isaac/lower/smoke.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/version.hpp>

#include <cstdlib>
#include <string>

using namespace isaac;

TEST_CASE("the library loads and has a version") { CHECK(version().find('.') != std::string::npos); }

TEST_CASE("a missing driver is reported with one clear error, and no crash") {
  std::string why;
  if (runtime::driver_available(&why)) {
    MESSAGE("a CUDA driver is present here; the no-driver path is exercised on machines without one");
    CHECK(why.empty());
    CHECK(runtime::device_count() >= 0);
    return;
  }
  CHECK(why.find("no CUDA driver found") != std::string::npos);
  CHECK_THROWS_WITH_AS(runtime::device_count(), doctest::Contains("no CUDA driver found"), DriverError);
  CHECK_THROWS_WITH_AS(runtime::device_info(0), doctest::Contains("no CUDA driver found"), DriverError);
  CHECK_THROWS_WITH_AS(runtime::Buffer(64), doctest::Contains("no CUDA driver found"), DriverError);
  CHECK_THROWS_WITH_AS(runtime::Module::from_ptx(".version 7.8"), doctest::Contains("no CUDA driver found"),
                       DriverError);
}

TEST_CASE("the smoke kernel is emitted as PTX for every supported target") {
  for (const char* sm : {"sm_70", "sm_80", "sm_90", "sm_90a"}) {
    std::string ptx = lower::emit_axpy_ptx(lower::parse_target(sm));
    CAPTURE(sm);
    CHECK(ptx.find(".entry isaac_axpy_f32") != std::string::npos);
    CHECK(ptx.find(std::string(".target ") + sm) != std::string::npos);
    CHECK(ptx.find("fma.rn.f32") != std::string::npos);
  }
}

TEST_CASE("targets are parsed strictly") {
  CHECK(lower::parse_target("90a").name() == "sm_90a");
  CHECK(lower::parse_target("sm_80").sm == 80);
  CHECK_THROWS_WITH_AS(lower::parse_target("sm_91"), doctest::Contains("expected sm_70"), InvalidArgument);
  CHECK_THROWS_AS(lower::parse_target("sm_80a"), InvalidArgument);
  CHECK(lower::target_for_compute_capability(90).name() == "sm_90");
  CHECK(lower::target_for_compute_capability(120).name() == "sm_90");
  CHECK(lower::target_for_compute_capability(86).name() == "sm_86");
}
