#pragma once
// The operands of one GEMM on the device, every matrix of its batch: A and B drawn at random (uniform in
// [-1, 1), rounded to the dtype; never zeros), C, and the float64 reference of C computed by cuBLAS's
// DGEMM (strided batched for a batch) on exactly the same values. check_c compares what C holds with it:
// ||C - ref|| / ||ref|| (Frobenius) of each matrix of the batch, the worst of them, and counts non-finite
// elements (C is poisoned with NaN before a checked run, so an unwritten element shows).
#include "cublas.hpp"

#include <isaac/gemm.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/runtime/runtime.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace isaac::bench {

struct CheckResult {
  double rel_error = 0;  // ||C - ref||_F / ||ref||_F, of the batch's worst matrix
  std::int64_t worst_entry = 0;  // that matrix's index in the batch
  std::int64_t batch = 1;
  double max_abs_error = 0;
  std::int64_t nonfinite = 0;  // NaN or infinite elements of C
  double tolerance = 0;
  bool ok = false;
  std::string str() const;  // "rel. error 1.2e-06 (tolerance 3.4e-05)" or what went wrong
};

// The relative error a correct kernel stays under: accumulation rounding growing with sqrt(K), plus the
// rounding of the output (f16). `acc32` is the f16 accumulation parameter (ignored for f32 and f64).
// `output_roundings`: how often partial results are rounded to the output type and added there; KG
// with atomics does it KG times (f16 atomics add in f16), everything else once.
double tolerance_for(ir::DType dtype, std::int64_t k, bool acc32, int output_roundings = 1);
// The output_roundings of a parameter set in a split mode.
int output_roundings(int kg, bool atomic);

class Operands {
 public:
  // `g` must be dense (batched or not). Synchronizes `stream`. Without `reference` (timing only), check_c
  // cannot be called.
  Operands(const ir::Gemm& g, std::uint64_t seed, Cublas& cublas, const runtime::Stream& stream, bool reference = true);

  const ir::Gemm& gemm() const { return g_; }
  runtime::DevicePtr a() const { return a_.ptr(); }
  runtime::DevicePtr b() const { return b_.ptr(); }
  runtime::DevicePtr c() const { return c_.ptr(); }
  std::size_t device_bytes() const { return a_.bytes() + b_.bytes() + c_.bytes(); }

  // Fills C with 0xFF bytes (NaN in f16, f32 and f64) on `stream`.
  void poison_c(const runtime::Stream& stream);
  // Waits for `stream`, downloads C and compares it with the reference.
  CheckResult check_c(double tolerance, const runtime::Stream& stream) const;

 private:
  ir::Gemm g_;
  runtime::Buffer a_, b_, c_;
  std::vector<double> ref_;        // as C is stored: column-major m x n, ldc = m, one matrix after the other
  std::vector<double> ref_norms_;  // ||ref||_F of each matrix of the batch
};

// Runs `kernel` once on the operands (C poisoned first), checks C against the reference with the
// tolerance of its parameters, then returns its median time in ms over `repeats` runs with L2 flushed.
// Throws BenchError on a wrong result.
double checked_median_ms(const CompiledGemm& kernel, Operands& operands, const runtime::Stream& stream,
                         lower::SplitMode mode, int repeats);

// A stable 64-bit hash of a string (for per-problem seeds).
std::uint64_t hash_name(const std::string& text, std::uint64_t seed);

}  // namespace isaac::bench
