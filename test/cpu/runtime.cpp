// The runtime loads on any machine: without a driver every entry point reports one clear error.
#include <doctest/doctest.h>
#include <isaac/lower/smoke.hpp>
#include <isaac/error.hpp>
#include <isaac/runtime/runtime.hpp>
#include <isaac/runtime/tensor_map.hpp>
#include <isaac/version.hpp>

#include <array>
#include <cstdint>
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

// The rules are checked before the driver is asked, so these errors come on any machine.
TEST_CASE("tensor maps: what TMA cannot describe is refused with the rule, before the driver is asked") {
  const runtime::DevicePtr base = 0x10000;
  const std::array<std::uint64_t, 4> dims{64, 17, 19, 3};
  const std::array<std::uint64_t, 3> strides{128, 17 * 128, 19 * 17 * 128};
  const std::array<int, 2> lower{-1, -2}, upper{-3, -2};
  const std::array<std::uint32_t, 4> steps{1, 1, 2, 1};
  auto im2col = [&](runtime::DevicePtr at, std::array<int, 2> low, std::uint32_t channels,
                    std::array<std::uint32_t, 4> step) {
    return runtime::encode_im2col_tensor_map(at, 2, dims, strides, low, upper, channels, 64, step,
                                             runtime::TensorSwizzle::bytes128);
  };
  CHECK_THROWS_WITH_AS(im2col(base + 8, lower, 64, steps), doctest::Contains("is not 16-byte aligned"), InvalidArgument);
  CHECK_THROWS_WITH_AS(im2col(base, {-129, 0}, 64, steps),
                       doctest::Contains("a 4-dimensional tensor's corners lie within [-128, 127]"), InvalidArgument);
  CHECK_THROWS_WITH_AS(im2col(base, lower, 128, steps), doctest::Contains("exceeds the 128-byte swizzle"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(im2col(base, lower, 64, {1, 9, 1, 1}), doctest::Contains("element strides are 1 to 8"),
                       InvalidArgument);
  const std::array<std::uint64_t, 2> image2d{64, 17};
  const std::array<std::uint64_t, 1> stride2d{128};
  CHECK_THROWS_WITH_AS(runtime::encode_im2col_tensor_map(base, 2, image2d, stride2d, {}, {}, 64, 64, steps,
                                                         runtime::TensorSwizzle::bytes128),
                       doctest::Contains("an image has 3 to 5 dimensions"), InvalidArgument);
  const std::array<std::uint32_t, 4> box{64, 1, 1, 300};
  CHECK_THROWS_WITH_AS(runtime::encode_tensor_map(base, 2, dims, strides, box, runtime::TensorSwizzle::bytes128),
                       doctest::Contains("a box side is 1 to 256 elements"), InvalidArgument);
  const std::array<std::uint32_t, 3> short_box{64, 1, 1};
  CHECK_THROWS_WITH_AS(runtime::encode_tensor_map(base, 2, dims, strides, short_box, runtime::TensorSwizzle::bytes128),
                       doctest::Contains("the box needs a side per dimension"), InvalidArgument);
  const std::array<std::uint64_t, 3> odd_strides{100, 17 * 128, 19 * 17 * 128};
  CHECK_THROWS_WITH_AS(runtime::encode_tensor_map(base, 2, dims, odd_strides, std::array<std::uint32_t, 4>{64, 1, 1, 64},
                                                  runtime::TensorSwizzle::bytes128),
                       doctest::Contains("a stride must be a multiple of 16 bytes"), InvalidArgument);
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
