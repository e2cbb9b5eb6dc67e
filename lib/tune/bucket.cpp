#include <isaac/error.hpp>
#include <isaac/tune/bucket.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>

namespace isaac::tune {

std::int64_t round_up_power_of_two(std::int64_t v) {
  constexpr std::int64_t largest = std::int64_t{1} << 62;  // the largest power of two in int64
  if (v < 1 || v > largest)
    throw InvalidArgument(fmt::format("cannot bucket the size {}: sizes from 1 to 2^62 = {} round up to a power of two",
                                      v, largest));
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(v)));
}

namespace {

// A size of 0 (K = 0 is a legal GEMM: C = beta * C) rounds to no power of two: it is its own bucket.
std::string dimension(const char* name, std::int64_t v, bool round) {
  return round && v != 0 ? fmt::format("{}<={}", name, round_up_power_of_two(v)) : fmt::format("{}={}", name, v);
}

std::string capped(const char* name, std::int64_t v, int cap) {
  v = round_up_power_of_two(v);
  return cap > 0 && v >= cap ? fmt::format("{}>={}", name, cap) : fmt::format("{}<={}", name, v);
}

std::string tile_flag(int tile, std::initializer_list<std::int64_t> sizes) {
  if (tile <= 0) return "";
  const bool divides = std::all_of(sizes.begin(), sizes.end(), [&](std::int64_t v) { return v % tile == 0; });
  return fmt::format(" tile{}={}", tile, divides ? "yes" : "no");
}

}  // namespace

std::string gemm_bucket(const ir::Gemm& g, const GemmBuckets& rules) {
  return fmt::format("gemm {} {} {} {}{}", dimension("M", g.m, rules.round_m), dimension("N", g.n, rules.round_n),
                     dimension("K", g.k, rules.round_k), capped("batch", g.batch, rules.batch_cap),
                     tile_flag(rules.tile, {g.m, g.n, g.k}));
}

std::string conv_bucket(const ir::Conv& v, const ConvBuckets& rules) {
  return fmt::format(
      "conv {} {} {} {} {} R={} S={} stride={}x{} pad={}x{} dilation={}x{}{}", capped("N", v.n, rules.batch_cap),
      dimension("P", v.p, rules.round_pq), dimension("Q", v.q, rules.round_pq), dimension("K", v.k, rules.round_k),
      dimension("C", v.c, rules.round_c), v.r, v.s, v.stride_h, v.stride_w, v.pad_h, v.pad_w, v.dilation_h,
      v.dilation_w, tile_flag(rules.tile, {ir::implicit_gemm(v).m, v.k}));
}

}  // namespace isaac::tune
