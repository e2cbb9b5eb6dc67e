// WG=2: Winograd F(4x4, RxS) with the planes multiplied by a batched GEMM. Where the planes lie in
// the workspace, the GEMM that multiplies them, and the parameter sets of the search space.
#include "lower/conv_layout.hpp"
#include "lower/winograd_layout.hpp"

#include <isaac/lower/conv.hpp>

namespace isaac::lower {

namespace {

// Each region starts on 256 bytes, so that every vector width is aligned.
std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

WinogradProduct winograd_product(const ir::Conv& v, const ConvParams& p) {
  const WinogradShape shape = winograd_shape(v, p);
  const std::size_t elem = ir::size_of(v.dtype);
  WinogradProduct out;
  ir::Gemm& g = out.gemm;
  g.dtype = v.dtype;
  // Per plane e: M_e (tiles x K) = V_e (tiles x C) U_e (C x K). V_e and M_e are column-major with the
  // tiles contiguous; U_e holds each channel's K filters contiguously, so B is "transposed".
  g.m = shape.tiles, g.n = v.k, g.k = v.c, g.batch = shape.planes;
  g.a_trans = false, g.b_trans = true;
  g.lda = shape.padded_tiles, g.ldb = shape.padded_k, g.ldc = shape.padded_tiles;
  g.stride_a = shape.padded_tiles * v.c, g.stride_b = shape.padded_k * v.c, g.stride_c = shape.padded_tiles * v.k;
  g.align_a = g.align_b = g.align_c = 16;
  out.params = conv_as_gemm(p);
  out.filter_offset = 0;
  out.input_offset = aligned(static_cast<std::size_t>(g.stride_b * g.batch) * elem);
  out.product_offset = out.input_offset + aligned(static_cast<std::size_t>(g.stride_a * g.batch) * elem);
  out.workspace_bytes = out.product_offset + aligned(static_cast<std::size_t>(g.stride_c * g.batch) * elem);
  return out;
}

std::vector<ConvParams> winograd_product_space(const ir::Conv& problem, const ConvEpilogue& epilogue,
                                               const DeviceLimits& device) {
  std::vector<ConvParams> out;
  if (problem.dtype != ir::DType::f32 && problem.dtype != ir::DType::f64) return out;
  if (problem.stride_h != 1 || problem.stride_w != 1 || problem.dilation_h != 1 || problem.dilation_w != 1 ||
      problem.r < 2 || problem.r > 5 || problem.s < 2 || problem.s > 5)
    return out;
  ConvParams probe;
  probe.wg = 2;
  // GEMM's space for the product without splits: KG = 1 and SW = 1 are the only values the mapping has.
  for (const GemmParams& g : gemm_space_levels(winograd_product(problem, probe).gemm, device).bases) {
    if (g.tc == 2) continue;  // f32 wgmma products: the CONV models have timed none
    ConvParams p;
    p.pl = g.ml, p.kl = g.nl, p.ps = g.ms, p.ks = g.ns, p.u = g.u, p.cs = g.ks, p.cl = g.kl, p.cg = 1;
    p.vi = g.va, p.vf = g.vb, p.li = g.la, p.lf = g.lb, p.db = g.db, p.tc = g.tc, p.wg = 2;
    if (conv_legal(problem, p, epilogue, device)) out.push_back(p);
  }
  return out;
}

}  // namespace isaac::lower
