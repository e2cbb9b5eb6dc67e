#pragma once
// What the WG=1 kernels' legality, grid and emitter share: the extents a problem and a parameter
// set give them (lib/lower/winograd_emitter.cpp describes the kernels).
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/target.hpp>

#include <algorithm>
#include <cstdint>

namespace isaac::lower {

struct WinogradShape {
  int m = 2;                               // output tile side: 2 for WG=1, 4 for WG=2
  int planes = 0;                          // (R+m-1)(S+m-1)
  std::int64_t tiles_p = 0, tiles_q = 0;   // m x m output tiles along P and Q
  std::int64_t tiles = 0;                  // N x tiles_p x tiles_q
  std::int64_t padded_tiles = 0;           // WG=2: the planes' leading dimension, tiles rounded up to 8
  std::int64_t filter_blocks = 0;          // blocks along K
  // The filter workspace's K and C: WG=1, whole KL and U tiles; WG=2, K rounded up to 8 (for vector
  // loads of any width) and C.
  std::int64_t padded_k = 0, padded_c = 0;
  int group_planes = 0;                    // planes each of the CL thread groups accumulates
  int stage_elements = 0;                  // one shared-memory stage: the planes of PL tiles and KL filters, U channels
  int reduction_elements = 0;              // CL > 1: every plane of the block's outputs, for the output transform
  int tile_slots = 0;                      // input tiles each thread loads per stage (the last may be partial)
  int shared_bytes(ir::DType dtype, const ConvParams& p) const {
    return std::max(stage_elements * (p.db ? 2 : 1), reduction_elements) * static_cast<int>(ir::size_of(dtype));
  }
};

inline WinogradShape winograd_shape(const ir::Conv& v, const ConvParams& p) {
  WinogradShape s;
  s.m = p.wg == 2 ? 4 : 2;
  s.planes = static_cast<int>((v.r + s.m - 1) * (v.s + s.m - 1));
  s.tiles_p = (v.p + s.m - 1) / s.m;
  s.tiles_q = (v.q + s.m - 1) / s.m;
  s.tiles = v.n * s.tiles_p * s.tiles_q;
  s.padded_tiles = (s.tiles + 7) / 8 * 8;
  s.filter_blocks = (v.k + p.kl - 1) / p.kl;
  s.padded_k = p.wg == 2 ? (v.k + 7) / 8 * 8 : s.filter_blocks * p.kl;
  s.padded_c = p.wg == 2 ? v.c : (v.c + p.u - 1) / p.u * p.u;
  s.group_planes = s.planes / p.cl;
  s.stage_elements = s.planes * p.u * (p.pl + p.kl);
  s.reduction_elements = p.cl > 1 ? s.planes * p.kl * p.pl : 0;
  s.tile_slots = (p.pl * p.u + p.threads() - 1) / p.threads();
  return s;
}

// Emits the kernels of a legal WG=1 or WG=2 set (emit_conv checks legality first).
ConvKernel emit_winograd_conv(const ir::Conv& problem, const ConvParams& p, const Target& target,
                              const ConvEpilogue& epilogue);

}  // namespace isaac::lower
