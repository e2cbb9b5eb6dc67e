// An HPC-style program over a header that isaac exported ahead of time: it needs no isaac, no LLVM
// and no CUDA toolkit, only a C++17 compiler, and the NVIDIA driver at run time.
//
// It solves a dense, diagonally dominant system A x = b (n = 2048 unless given, f64, column-major) by
// blocked Gaussian elimination without pivoting. Each step eliminates a block column of width 32 with
// two GEMMs of K = 32 on the GPU, on the augmented matrix [A b] (n x (n + 1), leading dimension n):
//   W = inv(A11) [A12 b1]          row_solve     M = 32,          N = n + 1 - s - 32, K = 32
//   [A22 b2] -= A21 W              schur_update  M = n - s - 32,  N = n + 1 - s - 32, K = 32
// The host inverts each 32 x 32 diagonal block (diagonal dominance makes that stable without
// pivoting), back-substitutes with the eliminated block rows, and checks x against the solution
// that b was made from.
//
//   isaac-tune export block_lu.spec --out lu_kernels.hpp --namespace lu
//   c++ -std=c++17 -O2 -I. block_lu.cpp -o block_lu -ldl
//   ./block_lu [n]     exit 0: solved and checked; 1: a failure; 77: no CUDA driver or no GPU
#include "lu_kernels.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int block = 32;

const lu::driver_api* cu = nullptr;

void check(lu::cuda_result result, const char* what) {
  if (result == 0) return;
  const char* name = nullptr;
  cu->get_error_name(result, &name);
  std::fprintf(stderr, "block_lu: %s failed: %s\n", what, name ? name : "unknown CUDA error");
  std::exit(1);
}

void check(lu::status s, const char* what) {
  if (s == lu::status::success) return;
  std::fprintf(stderr, "block_lu: %s: %s: %s\n", what, lu::to_string(s), lu::last_error());
  std::exit(1);
}

// Device memory holding f64 elements; the exported functions take typed device pointers.
struct DeviceArray {
  lu::device_ptr ptr = 0;
  explicit DeviceArray(std::size_t elements) { check(cu->mem_alloc(&ptr, elements * sizeof(double)), "cuMemAlloc"); }
  ~DeviceArray() { cu->mem_free(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  double* at(std::size_t element) const { return reinterpret_cast<double*>(static_cast<std::uintptr_t>(ptr)) + element; }
  lu::device_ptr address(std::size_t element) const { return ptr + element * sizeof(double); }
};

// Gauss-Jordan inversion of a column-major block x block matrix, without pivoting.
std::vector<double> invert(std::vector<double> a) {
  std::vector<double> inv(block * block, 0.0);
  for (int i = 0; i < block; ++i) inv[i + i * block] = 1.0;
  for (int p = 0; p < block; ++p) {
    const double pivot = a[p + p * block];
    for (int c = 0; c < block; ++c) a[p + c * block] /= pivot, inv[p + c * block] /= pivot;
    for (int r = 0; r < block; ++r) {
      if (r == p) continue;
      const double f = a[r + p * block];
      for (int c = 0; c < block; ++c) a[r + c * block] -= f * a[p + c * block], inv[r + c * block] -= f * inv[p + c * block];
    }
  }
  return inv;
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 2048;
  if (n < 2 * block || n % block) {
    std::fprintf(stderr, "usage: block_lu [n]: n must be a multiple of %d, at least %d\n", block, 2 * block);
    return 1;
  }
  cu = lu::driver();
  if (!cu) {
    std::printf("SKIPPED: no CUDA driver: %s\n", lu::last_error());
    return 77;
  }
  int devices = 0;
  check(cu->device_get_count(&devices), "cuDeviceGetCount");
  if (devices == 0) {
    std::printf("SKIPPED: the CUDA driver sees no GPU\n");
    return 77;
  }
  lu::device_t device = 0;
  lu::context_t context = nullptr;
  char name[256] = "";
  check(cu->device_get(&device, 0), "cuDeviceGet");
  check(cu->device_get_name(name, sizeof name, device), "cuDeviceGetName");
  check(cu->primary_ctx_retain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cu->ctx_set_current(context), "cuCtxSetCurrent");
  std::printf("block_lu: n = %ld on %s, kernels exported for %s\n", n, name, lu::target_arch);

  // A diagonally dominant A, a known x, and b = A x; [A b] is column-major with leading dimension n.
  const std::size_t ld = static_cast<std::size_t>(n), columns = ld + 1;
  std::vector<double> augmented(ld * columns), x_true(ld);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (std::size_t c = 0; c < ld; ++c)
    for (std::size_t r = 0; r < ld; ++r) augmented[r + c * ld] = uniform(rng) + (r == c ? double(n) : 0.0);
  for (double& v : x_true) v = uniform(rng);
  for (std::size_t c = 0; c < ld; ++c)
    for (std::size_t r = 0; r < ld; ++r) augmented[r + ld * ld] += augmented[r + c * ld] * x_true[c];
  const std::vector<double> original = augmented;

  {
    DeviceArray m(ld * columns), w(block * columns), inverse(block * block);
    check(cu->memcpy_htod(m.ptr, augmented.data(), augmented.size() * sizeof(double)), "cuMemcpyHtoD");
    std::vector<std::vector<double>> inverses;  // of each step's A11, for the back substitution
    std::map<std::string, int> kernel_use;      // which exported kernel ran the updates, and how often
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t s = 0; s < ld; s += block) {
      // Copies are ordered after the GEMMs: both run on the legacy default stream (nullptr).
      std::vector<double> a11(block * block);
      for (int c = 0; c < block; ++c)
        check(cu->memcpy_dtoh(&a11[c * block], m.address(s + (s + c) * ld), block * sizeof(double)), "cuMemcpyDtoH");
      inverses.push_back(invert(a11));
      const std::size_t rest = ld - s - block;  // rows below the block
      if (rest == 0) break;                     // the last block row needs no elimination
      const std::int64_t right = static_cast<std::int64_t>(rest + 1);  // columns right of it, b included
      check(cu->memcpy_htod(inverse.ptr, inverses.back().data(), block * block * sizeof(double)), "cuMemcpyHtoD");
      check(lu::row_solve(nullptr, block, right, block, 1.0, inverse.at(0), block, m.at(s + (s + block) * ld),
                          static_cast<std::int64_t>(ld), 0.0, w.at(0), block),
            "row_solve");
      const std::int64_t rows = static_cast<std::int64_t>(rest);
      const double* a21 = m.at(s + block + s * ld);
      check(lu::schur_update(nullptr, rows, right, block, -1.0, a21, static_cast<std::int64_t>(ld), w.at(0), block, 1.0,
                             m.at(s + block + (s + block) * ld), static_cast<std::int64_t>(ld)),
            "schur_update");
      if (const lu::kernel_info* k = lu::schur_update_select(rows, right, block, a21, static_cast<std::int64_t>(ld), w.at(0), block))
        ++kernel_use[k->params];
    }
    check(cu->ctx_synchronize(), "the elimination");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    check(cu->memcpy_dtoh(augmented.data(), m.ptr, augmented.size() * sizeof(double)), "cuMemcpyDtoH");
    std::printf("eliminated in %.3f s (host inversions and copies included); schur_update ran on:\n", seconds);
    for (const auto& [params, count] : kernel_use) std::printf("  %3d steps  %s\n", count, params.c_str());

    // Back substitution: block row j holds [A11 A12 b] as step j left them.
    std::vector<double> x(ld), rhs(block);
    for (std::size_t j = inverses.size(); j-- > 0;) {
      const std::size_t s = j * block;
      for (int r = 0; r < block; ++r) {
        double v = augmented[s + r + ld * ld];
        for (std::size_t c = s + block; c < ld; ++c) v -= augmented[s + r + c * ld] * x[c];
        rhs[r] = v;
      }
      for (int r = 0; r < block; ++r) {
        double v = 0;
        for (int c = 0; c < block; ++c) v += inverses[j][r + c * block] * rhs[c];
        x[s + r] = v;
      }
    }

    double error = 0, scale = 0, residual = 0, a_norm = 0, x_norm = 0;
    for (std::size_t i = 0; i < ld; ++i) {
      error = std::max(error, std::abs(x[i] - x_true[i]));
      scale = std::max(scale, std::abs(x_true[i]));
      x_norm = std::max(x_norm, std::abs(x[i]));
      double r = -original[i + ld * ld], row = 0;
      for (std::size_t c = 0; c < ld; ++c) r += original[i + c * ld] * x[c], row += std::abs(original[i + c * ld]);
      residual = std::max(residual, std::abs(r));
      a_norm = std::max(a_norm, row);
    }
    const double backward = residual / (a_norm * x_norm), forward = error / scale;
    std::printf("relative residual |Ax - b| / (|A| |x|) = %.2e, relative error |x - x_true| / |x_true| = %.2e\n",
                backward, forward);
    // Elimination of a diagonally dominant matrix does not grow its entries, and A is well
    // conditioned: both errors stay within a small multiple of n * eps (4.5e-13 for n = 2048).
    const double tolerance = 16.0 * double(n) * 2.2e-16;
    if (!(backward <= tolerance && forward <= tolerance)) {
      std::fprintf(stderr, "block_lu: FAILED: above the tolerance %.2e\n", tolerance);
      return 1;
    }
  }
  cu->primary_ctx_release(device);
  std::printf("block_lu: solved and checked\n");
  return 0;
}
