#pragma once
// Winograd's minimal filtering F(2, r) (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks"): two outputs of an r-tap correlation from alpha = r + 1 products,
//   y = At [ (G g) . (Bt d) ],
// and in two dimensions, for a 2 x 2 output tile of an R x S filter, Y = At [ (G g Gt) . (Bt d B) ] A
// with one set of matrices per axis. The matrices come from Cook-Toom interpolation at the points
// 0, -1, 1, 1/2, -2 (as many as needed) and infinity, built here in double precision: the CONV
// template's WG=1 kernels carry them as immediates.
#include <vector>

namespace isaac::lower {

struct WinogradMatrices {
  int r = 3;      // filter taps
  int alpha = 4;  // input tile: r + 1
  std::vector<double> at;  // 2 x alpha, row-major: the output transform
  std::vector<double> g;   // alpha x r: the filter transform
  std::vector<double> bt;  // alpha x alpha: the input transform
};

// The matrices of F(2, r) for 2 <= r <= 5; throws InvalidArgument otherwise.
WinogradMatrices winograd_matrices(int r);

}  // namespace isaac::lower
