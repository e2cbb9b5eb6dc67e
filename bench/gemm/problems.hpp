#pragma once
// The benchmark's problems (bench/problems/gemm_problems.csv and gemm_batched_problems.csv, compiled in)
// and the dtypes it runs them in.
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

// One row of a problems CSV: BLAS column-major, at=1 means A is stored KxM, bt=1 means B is stored NxK;
// `batch` GEMMs of that shape, their matrices stored one after the other.
struct Problem {
  std::string suite;
  std::int64_t batch = 1;
  std::int64_t m = 0, n = 0, k = 0;
  bool at = false, bt = false;

  std::string layout() const { return std::string{at ? 'T' : 'N', bt ? 'T' : 'N'}; }
  std::string shape() const;  // "2560x16x2560"; batched, the batch first: "128x512x512x64"
  double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
  bool same_shape(const Problem& o) const {
    return batch == o.batch && m == o.m && n == o.n && k == o.k && at == o.at && bt == o.bt;
  }
};

// "f32/DeepBench-F/2560x16x2560/NN", "f32/Attention/128x512x512x64/TN": names benchmarks, log lines and
// sweep jobs.
std::string problem_name(ir::DType dtype, const Problem& p);

// The dense GEMM of `p` in `dtype` (minimal leading dimensions and batch strides, 16-byte aligned operands).
ir::Gemm to_gemm(const Problem& p, ir::DType dtype);

// Minimal bytes through device memory: every A and B read once, every C written once (beta = 0 reads no C).
double minimal_bytes(const Problem& p, ir::DType dtype);

// The problem lists compiled into the executable: bench/problems/gemm_problems.csv (the paper's) and
// gemm_batched_problems.csv.
enum class CompiledInProblems { paper, batched };

// Parses a problems CSV (suite,m,n,k,at,bt and optionally batch, 1 where absent; '#' lines are
// comments). An empty `path` means the list `compiled_in`, which also names what the mode runs: the
// paper's modes run single GEMMs, so they refuse a batched row rather than run it as one GEMM. Throws
// BenchError naming the file and line of a malformed or refused row.
std::vector<Problem> load_problems(const std::string& path,
                                   CompiledInProblems compiled_in = CompiledInProblems::paper);

// "f32,f16,f64" (also "fp32", "half", "float", "double"); throws BenchError naming what is allowed.
std::vector<ir::DType> parse_dtypes(const std::string& text);
ir::DType parse_one_dtype(const std::string& text);

}  // namespace isaac::bench
