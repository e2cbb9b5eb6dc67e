#pragma once
// Winograd's minimal filtering F(m, r) (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks"): m outputs of an r-tap correlation from alpha = m + r - 1 products,
//   y = At [ (G g) . (Bt d) ],
// and in two dimensions, for an m x m output tile of an R x S filter, Y = At [ (G g Gt) . (Bt d B) ] A
// with one set of matrices per axis. The matrices come from Cook-Toom interpolation at the points
// 0, -1, 1, 1/2, -2, 2, -1/2 (as many as needed) and infinity, built here in double precision: the
// CONV template's Winograd kernels carry them as immediates.
#include <vector>

namespace isaac::lower {

struct WinogradMatrices {
  int m = 2;      // outputs
  int r = 3;      // filter taps
  int alpha = 4;  // input tile: m + r - 1
  std::vector<double> at;  // m x alpha, row-major: the output transform
  std::vector<double> g;   // alpha x r: the filter transform
  std::vector<double> bt;  // alpha x alpha: the input transform
};

// The matrices of F(m, r) for m = 2 or 4 and 2 <= r <= 5; throws InvalidArgument otherwise.
WinogradMatrices winograd_matrices(int m, int r);

}  // namespace isaac::lower
