#pragma once
// The CONV template is the GEMM template's tiling with the input (pixels x reduction) as A and the
// filter (reduction x filters) as B: the same shared-memory layout, load slots and thread tile, so
// that legality and the emitter see the same shapes.
#include "lower/gemm_layout.hpp"

#include <isaac/lower/conv.hpp>

namespace isaac::lower {

inline GemmParams conv_as_gemm(const ConvParams& p) {
  GemmParams g;
  g.ml = p.pl, g.nl = p.kl, g.ms = p.ps, g.ns = p.ks, g.u = p.u, g.ks = p.cs, g.kl = p.cl, g.kg = p.cg;
  g.va = p.vi, g.vb = p.vf, g.la = p.li, g.lb = p.lf, g.db = p.db, g.sw = 1, g.acc32 = 1, g.tc = p.tc;
  return g;
}

// A is the input: "transposed" (reduction contiguous) for NHWC. B is the filter: "transposed"
// (filters contiguous) for CRSK.
inline GemmLayout conv_layout(ir::DType dtype, bool input_reduction_contiguous, bool filter_k_contiguous,
                              const ConvParams& p) {
  return GemmLayout(dtype, input_reduction_contiguous, filter_k_contiguous, conv_as_gemm(p));
}

// The tiling the direct kernel runs: conv_as_gemm, with TMA=1 where conv_tma holds.
inline GemmParams conv_kernel_tiling(const ir::Conv& v, const ConvParams& p) {
  GemmParams g = conv_as_gemm(p);
  g.tma = conv_tma(v, p) ? 1 : 0;
  return g;
}

// TMA=1: the stages' mbarriers (filled, emptied) lie after the tiles; CONV stages no epilogue in
// shared memory, so unlike GEMM's they need not clear its staging.
inline int conv_barriers_offset(const GemmLayout& l, const GemmParams& g) { return (l.shared_bytes(g) + 7) / 8 * 8; }

// The direct kernel's dynamic shared memory: the tiles (or the warp groups' reduction) and, with TMA,
// the mbarriers.
inline int conv_kernel_shared_bytes(const ir::Conv& v, const ConvParams& p) {
  const GemmParams g = conv_kernel_tiling(v, p);
  const GemmLayout l(v.dtype, conv_input_reduction_contiguous(v), conv_filter_k_contiguous(v), g);
  return g.tma ? conv_barriers_offset(l, g) + 16 * l.stages : l.shared_bytes(g);
}

}  // namespace isaac::lower
