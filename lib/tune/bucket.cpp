#include <isaac/error.hpp>
#include <isaac/tune/bucket.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace isaac::tune {

std::int64_t round_up_power_of_two(std::int64_t v) {
  if (v < 1) throw InvalidArgument(fmt::format("cannot bucket the size {}: sizes are at least 1", v));
  std::int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

namespace {

std::string dimension(const char* name, std::int64_t v, bool round) {
  return round ? fmt::format("{}<={}", name, round_up_power_of_two(v)) : fmt::format("{}={}", name, v);
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
      v.dilation_w, tile_flag(rules.tile, {v.n * v.p * v.q, v.k}));
}

}  // namespace isaac::tune
