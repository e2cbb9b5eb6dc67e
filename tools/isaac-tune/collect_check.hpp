#pragma once
// The spot check of `isaac-tune collect`, host side: a small problem with awkward sizes that a
// parameter set is legal for, random operands with their float64 images, the error bound, and the
// comparison of the GPU's C with the float64 reference (ir::reference_gemm).
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace isaac::tune::cli {

// A problem of `like`'s dtype and layout, dense, with sizes among 1, small primes, tile + 1 and
// 2 x tile + odd (K: also enough tiles for KG, with a partial last tile), rounded up only where the
// vector widths demand it, and legal for `p` (lower::gemm_legal). `variant` picks among them. None
// when no candidate is legal.
std::optional<ir::Gemm> awkward_gemm(const ir::Gemm& like, const lower::GemmParams& p, const lower::DeviceLimits& device,
                                     std::uint64_t variant);

// The largest relative Frobenius error ||C - C_ref|| / ||C_ref|| a correct kernel may have, for
// operands uniform in [-1, 1]: see the derivation in collect_check.cpp.
double check_tolerance(ir::DType dtype, std::int64_t k, bool acc32, int output_roundings);

// `count` random non-zero values (magnitude in [1/2, 1), random sign) rounded to `dtype`: the bytes
// to upload and their exact float64 values.
struct HostArray {
  std::vector<unsigned char> bytes;
  std::vector<double> values;
};
HostArray random_host_array(ir::DType dtype, std::size_t count, std::mt19937_64& rng);

// Compares the GPU's C (bytes of the problem's dtype, ldc-strided) with the reference; empty when
// it passes, else the reason on one line.
std::string compare_c(const ir::Gemm& g, const std::vector<unsigned char>& c_bytes, const std::vector<double>& ref,
                      double tolerance);

}  // namespace isaac::tune::cli
