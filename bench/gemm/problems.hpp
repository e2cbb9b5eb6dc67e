#pragma once
// The benchmark's problems (bench/problems/gemm_problems.csv, compiled in) and the dtypes it runs them in.
#include <isaac/ir/gemm.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace isaac::bench {

// A failure of the benchmark itself (cuBLAS, cudart, a file, a bad option): the message says what.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One row of gemm_problems.csv: BLAS column-major, at=1 means A is stored KxM, bt=1 means B is stored NxK.
struct Problem {
  std::string suite;
  std::int64_t m = 0, n = 0, k = 0;
  bool at = false, bt = false;

  std::string layout() const { return std::string{at ? 'T' : 'N', bt ? 'T' : 'N'}; }
  std::string shape() const;  // "2560x16x2560"
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  bool same_shape(const Problem& o) const { return m == o.m && n == o.n && k == o.k && at == o.at && bt == o.bt; }
};

// "f32/DeepBench-F/2560x16x2560/NN": names benchmarks, log lines and sweep jobs.
std::string problem_name(ir::DType dtype, const Problem& p);

// The dense GEMM of `p` in `dtype` (minimal leading dimensions, 16-byte aligned operands).
ir::Gemm to_gemm(const Problem& p, ir::DType dtype);

// Minimal bytes through device memory: A and B read once, C written once (beta = 0 reads no C).
double minimal_bytes(const Problem& p, ir::DType dtype);

// Parses the problems CSV (suite,m,n,k,at,bt; '#' lines are comments). An empty `path` means the copy
// compiled into the executable. Throws BenchError naming the file and line of a malformed row.
std::vector<Problem> load_problems(const std::string& path);

// "f32,f16,f64" (also "fp32", "half", "float", "double"); throws BenchError naming what is allowed.
std::vector<ir::DType> parse_dtypes(const std::string& text);
ir::DType parse_one_dtype(const std::string& text);

}  // namespace isaac::bench
