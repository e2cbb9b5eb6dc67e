#include <isaac/error.hpp>
#include <isaac/tune/occupancy.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace isaac;
using namespace isaac::tune;

TEST_CASE("resident blocks: the scarcest of warps, registers and shared memory decides") {
  const Multiprocessors h100;
  CHECK(resident_blocks(1024, 32, 0, h100) == 2);        // 32 warps of 64
  CHECK(resident_blocks(256, 128, 0, h100) == 2);        // 8 warps x 32 x 128 registers of 65536
  CHECK(resident_blocks(32, 65, 0, h100) == 28);         // 65 registers take 72: 28 warps, not 31
  CHECK(resident_blocks(64, 32, 0, h100) == 32);         // the most blocks an SM holds
  // The H200's f16 Conv2 winner against the model's choice: 30 KB and 40 KB of tiles, 1 KB reserved each.
  CHECK(resident_blocks(128, 64, 30 * 1024, h100) == 7);
  CHECK(resident_blocks(128, 64, 40 * 1024, h100) == 5);
  CHECK(resident_blocks(128, 64, 228 * 1024, h100) == 0);  // does not fit
}

TEST_CASE("wave fill: blocks over whole waves of slots") {
  const Multiprocessors h100;
  CHECK(wave_fill(789, 7, h100) == doctest::Approx(789.0 / 924));
  CHECK(wave_fill(789, 5, h100) == doctest::Approx(789.0 / 1320));  // two waves of 660
  CHECK(wave_fill(660, 5, h100) == 1);
  CHECK(wave_fill(661, 5, h100) == doctest::Approx(661.0 / 1320));
  CHECK(wave_fill(1, 0, h100) == doctest::Approx(1.0 / 132));  // a set that does not fit counts one slot
  CHECK(sm_balance(256, h100) == doctest::Approx(256.0 / 264));  // two blocks on 124 SMs, one on 8
  CHECK(sm_balance(132, h100) == 1);
  CHECK(sm_balance(133, h100) == doctest::Approx(133.0 / 264));
}

TEST_CASE("multiprocessors of the search's device limits: the SM count given, the rest by compute capability") {
  lower::DeviceLimits device;
  device.sm_count = 108;
  device.sm = 80;
  Multiprocessors sms = multiprocessors(device);
  CHECK(sms.count == 108);
  CHECK(sms.shared_bytes == 164 * 1024);
  CHECK(sms.max_warps == 64);
  device.sm = 89;
  sms = multiprocessors(device);
  CHECK(sms.shared_bytes == 100 * 1024);
  CHECK(sms.max_warps == 48);
  CHECK(sms.max_blocks == 16);
  device.sm = 90;
  sms = multiprocessors(device);
  CHECK(sms.shared_bytes == 228 * 1024);
  CHECK(sms.max_blocks == 32);
  device.sm_count = 0;  // e.g. isaac-tune train --sm-count 0: the features would be NaN
  std::string what;
  try {
    multiprocessors(device);
  } catch (const InvalidArgument& e) {
    what = e.what();
  }
  CHECK(what.find("SM count is 0; it must be at least 1") != std::string::npos);
}
