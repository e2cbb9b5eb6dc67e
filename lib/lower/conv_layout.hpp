#pragma once
// The CONV template is the GEMM template's tiling with the input (pixels x reduction) as A and the
// filter (reduction x filters) as B: the same shared-memory layout, load slots and thread tile, so
// that legality and the emitter see the same shapes.
#include "lower/gemm_layout.hpp"

#include <isaac/lower/conv.hpp>

#include <algorithm>

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

// The tiling the direct kernel runs: conv_as_gemm, with TMA=1 where conv_tma holds, and that many
// stages (conv_pipeline_stages).
inline GemmParams conv_kernel_tiling(const ir::Conv& v, const ConvParams& p) {
  GemmParams g = conv_as_gemm(p);
  g.tma = conv_tma(v, p) ? 1 : 0;
  g.st = conv_pipeline_stages(v, p);
  return g;
}

// The staged stores' rows (conv_staged_stores) of `element_bytes`-byte elements (f32 sums, or the
// output's 16-bit values): [pixel][filter] rows of KL where the output's contiguous axis is K (NHWC),
// else [filter][pixel] rows of PL, each padded by 16 bytes so that a warp's writes spread over the banks.
inline bool conv_stages_along_filters(const ir::Conv& v) { return v.output_strides[1] == 1; }
inline int conv_staging_pitch(const ir::Conv& v, const ConvParams& p, int element_bytes) {
  return (conv_stages_along_filters(v) ? p.kl : p.pl) + 16 / element_bytes;
}

// The direct kernel's dynamic shared memory under tiling g: the tiles (or the warp groups' reduction)
// and the staging of the stores, sharing their memory, then with TMA the stages' mbarriers (filled,
// emptied), 8-byte aligned. A tile loop (conv_tile_loop) stages each tile's stores while the ring fills
// with the next tile's operands: its staging lies after the mbarriers, 16-byte aligned (1024 where TMA
// stores it: conv_loop_staging_offset).
inline int conv_barriers_offset(const ir::Conv& v, const ConvParams& p, const GemmParams& g, bool tile_loop) {
  const GemmLayout l(v.dtype, conv_input_reduction_contiguous(v), conv_filter_k_contiguous(v), g);
  return (std::max(l.shared_bytes(g), tile_loop ? 0 : conv_staging_bytes(v, p)) + 7) / 8 * 8;
}
// conv_stores_by_tma: the mbarrier on which TMA's copy of O's tile completes (beta != 0), after the
// stages'; a loop's staging then starts on 1024 bytes, where TMA's 128-byte swizzle repeats.
inline int conv_output_barrier_offset(const ir::Conv& v, const ConvParams& p, const GemmParams& g, bool tile_loop) {
  const GemmLayout l(v.dtype, conv_input_reduction_contiguous(v), conv_filter_k_contiguous(v), g);
  return conv_barriers_offset(v, p, g, tile_loop) + 16 * l.stages;
}
inline int conv_barriers_end(const ir::Conv& v, const ConvParams& p, const GemmParams& g, bool tile_loop) {
  return conv_output_barrier_offset(v, p, g, tile_loop) + (conv_stores_by_tma(v, p) ? 8 : 0);
}
inline int conv_loop_staging_offset(const ir::Conv& v, const ConvParams& p, const GemmParams& g) {
  const int align = conv_stores_by_tma(v, p) ? 1024 : 16;
  return (conv_barriers_end(v, p, g, true) + align - 1) / align * align;
}
inline int conv_tiling_shared_bytes(const ir::Conv& v, const ConvParams& p, const GemmParams& g, bool tile_loop) {
  const GemmLayout l(v.dtype, conv_input_reduction_contiguous(v), conv_filter_k_contiguous(v), g);
  if (tile_loop) return conv_loop_staging_offset(v, p, g) + conv_staging_bytes(v, p);
  if (g.tma) return conv_barriers_end(v, p, g, false);
  return std::max(l.shared_bytes(g), conv_staging_bytes(v, p));
}

}  // namespace isaac::lower
