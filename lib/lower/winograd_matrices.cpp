// Cook-Toom construction of F(m, r). A linear convolution s = u * g (u of m taps, g of r) is
// evaluation at alpha = m + r - 1 points, a product, and interpolation: s = V^-1 [(E_r g) . (E_m u)],
// where E_n evaluates a polynomial of n coefficients at the points (infinity: its leading coefficient)
// and V = E_alpha. Correlation is its transpose: y = E_m^T [(E_r g) . (V^-T d)], so At = E_m^T, G = E_r
// and Bt = V^-T. Each row of Bt is then divided by its smallest non-zero magnitude (and that row of G
// multiplied by it), which makes Bt's entries small integers or halves: exact in binary.
#include <isaac/error.hpp>
#include <isaac/lower/winograd.hpp>

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace isaac::lower {

namespace {

// The points, in the order that measured the smallest f32 error for F(2, 5) among {0, +-1, +-2},
// {0, +-1, +-1/2} and this mix; F(4, r) takes the next ones too, the smallest magnitudes left.
constexpr double finite_points[] = {0, -1, 1, 0.5, -2, 2, -0.5};

// Row i: the powers of point i (infinity: the last coefficient alone); alpha x n, row-major.
std::vector<double> evaluation(int alpha, int n) {
  std::vector<double> e(static_cast<std::size_t>(alpha * n), 0.0);
  for (int i = 0; i < alpha; ++i)
    for (int j = 0; j < n; ++j)
      e[i * n + j] = i + 1 == alpha ? (j + 1 == n ? 1.0 : 0.0) : std::pow(finite_points[i], j);
  return e;
}

// The inverse of an n x n matrix by Gauss-Jordan elimination with partial pivoting.
std::vector<double> inverse(std::vector<double> a, int n) {
  std::vector<double> inv(static_cast<std::size_t>(n * n), 0.0);
  for (int i = 0; i < n; ++i) inv[i * n + i] = 1.0;
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int row = col + 1; row < n; ++row)
      if (std::abs(a[row * n + col]) > std::abs(a[pivot * n + col])) pivot = row;
    for (int j = 0; j < n; ++j) std::swap(a[col * n + j], a[pivot * n + j]), std::swap(inv[col * n + j], inv[pivot * n + j]);
    double d = a[col * n + col];
    for (int j = 0; j < n; ++j) a[col * n + j] /= d, inv[col * n + j] /= d;
    for (int row = 0; row < n; ++row) {
      if (row == col) continue;
      double f = a[row * n + col];
      for (int j = 0; j < n; ++j) a[row * n + j] -= f * a[col * n + j], inv[row * n + j] -= f * inv[col * n + j];
    }
  }
  return inv;
}

}  // namespace

WinogradMatrices winograd_matrices(int outputs, int r) {
  if (outputs != 2 && outputs != 4)
    throw InvalidArgument(fmt::format("Winograd F(m, r) is built for m = 2 or 4 outputs, not {}", outputs));
  if (r < 2 || r > 5)
    throw InvalidArgument(fmt::format("Winograd F(m, r) is built for filters of 2 to 5 taps, not {}", r));
  WinogradMatrices m;
  m.m = outputs;
  m.r = r;
  m.alpha = outputs + r - 1;
  const int a = m.alpha;
  std::vector<double> em = evaluation(a, outputs), v_inv = inverse(evaluation(a, a), a);
  m.g = evaluation(a, r);
  m.at.assign(static_cast<std::size_t>(outputs * a), 0.0);
  for (int i = 0; i < outputs; ++i)
    for (int j = 0; j < a; ++j) m.at[i * a + j] = em[j * outputs + i];
  m.bt.assign(static_cast<std::size_t>(a * a), 0.0);
  for (int i = 0; i < a; ++i)
    for (int j = 0; j < a; ++j) m.bt[i * a + j] = v_inv[j * a + i];
  for (int i = 0; i < a; ++i) {
    std::optional<double> smallest;
    for (int j = 0; j < a; ++j) {
      double x = std::abs(m.bt[i * a + j]);
      if (x > 1e-12 && (!smallest || x < *smallest)) smallest = x;
    }
    for (int j = 0; j < a; ++j) {
      double& x = m.bt[i * a + j];
      x = std::abs(x) < 1e-12 ? 0.0 : x / *smallest;
      // Snap the inversion's rounding noise, so that the immediates are the exact values.
      if (double snapped = std::round(x * 1024.0) / 1024.0; std::abs(snapped - x) < 1e-9) x = snapped;
    }
    for (int j = 0; j < r; ++j) m.g[i * r + j] *= *smallest;
  }
  return m;
}

}  // namespace isaac::lower
