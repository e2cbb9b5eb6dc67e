#pragma once
// The sweep's winners CSV (bench/results/gemm-sweep-winners.csv), cached in the repository:
//   dtype,suite,m,n,k,at,bt,params,median_ms,tflops,candidates,failures
// `candidates` counts the parameter sets tried, `failures` those that failed to compile, to run or to
// pass the correctness check (their reasons are in the sweep's --all CSV and its log).
#include "problems.hpp"

#include <isaac/ir/dtype.hpp>

#include <string>
#include <vector>

namespace isaac::bench {

struct Winner {
  ir::DType dtype = ir::DType::f32;
  Problem problem;
  std::string params;  // GemmParams::str()
  double median_ms = 0;
  double tflops = 0;
  int candidates = 0;
  int failures = 0;
};

inline constexpr const char* winners_header = "dtype,suite,m,n,k,at,bt,params,median_ms,tflops,candidates,failures\n";

std::vector<Winner> read_winners(const std::string& path);
std::string format_winners(const std::vector<Winner>& winners);  // header and rows

}  // namespace isaac::bench
