#pragma once
// The rules the GEMM and CONV legality functions share: bounds on the parameters, and the tensor-core
// (TC=1 and TC=2) rules on a tiling. The two name the same fields differently (GEMM's MS is CONV's PS).
#include "lower/gemm_layout.hpp"

#include <isaac/lower/gemm.hpp>

#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace isaac::lower {

// The searches check a million sets per problem: with Explain = false a refusal formats no reason.
template <bool Explain, class... Args>
Legality no(fmt::format_string<Args...> format, Args&&... args) {
  if constexpr (Explain) return {false, fmt::format(format, std::forward<Args>(args)...)};
  else return {false, {}};
}

// Each parameter below its bound, before any arithmetic on them: far past what a kernel can use, the
// products the later checks form (threads, tile bytes, a wave's blocks) would overflow 32 bits.
struct Bound {
  const char* key;
  int value, most;
};
template <bool Explain>
Legality check_bounds(std::initializer_list<Bound> bounds) {
  for (const Bound& b : bounds)
    if (b.value > b.most)
      return no<Explain>("{}={} is larger than any kernel takes: {} must be at most {}", b.key, b.value, b.key, b.most);
  return {};
}

// The keys of a template's text form for the GemmParams fields that the rules mention.
struct TilingKeys {
  const char *ml, *nl, *ms, *ns, *ks, *kl, *reduction, *va, *vb, *la, *lb;
};
inline constexpr TilingKeys gemm_keys{"ML", "NL", "MS", "NS", "KS", "KL", "K", "VA", "VB", "LA", "LB"};
inline constexpr TilingKeys conv_keys{"PL", "KL", "PS", "KS", "CS", "CL", "C*R*S", "VI", "VF", "LI", "LF"};

// TC=2: wgmma.mma_async. A warp group's accumulators are MS/8 m64nNk16 (f32: m64nNk8) tiles
// stacked along M, N = 16 NS; the tensor cores read its operands from swizzled shared memory, which
// the copies fill 16 bytes at a time (VA = VB = 8, f32: 4). f32 (GEMM only) multiplies three TF32
// products per term, as TC=1 does, from split copies of each stage (docs/tensor-cores.md).
template <bool Explain>
Legality check_warp_group_tiling(ir::DType dtype, const GemmParams& p, const DeviceLimits& device,
                                 const TilingKeys& key) {
  const bool f32 = dtype == ir::DType::f32;
  const bool gemm = key.ml == gemm_keys.ml;
  if (!ir::is_16_bit(dtype) && !(f32 && gemm))
    return no<Explain>("TC=2 (wgmma) is implemented for f16, bf16 and, in GEMM, f32; not {} here: use TC=0 or 1",
                       ir::name(dtype));
  if (f32 && !device.f32_tensor_cores)
    return no<Explain>("TC=2 for f32 (three TF32 products per term, a larger rounding error than FMA) is off: "
                       "TuningOptions::f32_tensor_cores turns it on");
  if (f32 && p.tma) return no<Explain>("TC=2 for f32 copies its stages with cp.async: TMA must be 0");
  if (device.sm != 90)
    return no<Explain>("TC=2 needs wgmma.mma_async, which only sm_90 (compiled as sm_90a) has, not sm_{}", device.sm);
  if (!p.acc32) return no<Explain>("TC=2 accumulates its products in f32: ACC must be 32");
  if (p.ks != 1 || p.kl != 1)
    return no<Explain>("TC=2: a warp group multiplies the whole U of a stage: {}={} and {}={} must be 1", key.ks, p.ks,
                       key.kl, p.kl);
  if (p.ms != 8 && p.ms != 16)
    return no<Explain>("TC=2 gives each warp group {}/8 tiles of 64 rows: {}={} must be 8 or 16", key.ms, key.ms, p.ms);
  if ((p.ml / p.ms) % 8 || (p.nl / p.ns) % 16)
    return no<Explain>("TC=2 lays a warp group's 128 threads out 8 by 16: {}/{}={} must be a multiple of 8 and "
                       "{}/{}={} a multiple of 16",
                       key.ml, key.ms, p.ml / p.ms, key.nl, key.ns, p.nl / p.ns);
  const int depth = f32 ? 8 : 16, vector = f32 ? 4 : 8;
  if (p.u % depth)
    return no<Explain>("TC=2 consumes {} {} at a time: U={} must be a multiple of {}", key.reduction, depth, p.u, depth);
  // f32: wgmma reads TF32 operands K-major only, in rows of at most 128 bytes (its widest swizzle).
  if (f32 && p.u > 32)
    return no<Explain>("TC=2 for f32 keeps a stage's K in one 128-byte row: U={} must be at most 32", p.u);
  if (p.va != vector || p.vb != vector)
    return no<Explain>("TC=2 copies its tiles 16 bytes ({} elements) at a time: {}={} and {}={} must be {}", vector,
                       key.va, p.va, key.vb, p.vb, vector);
  // Eight consecutive threads copy one 16-byte column of eight consecutive rows (with TMA=1 no thread
  // copies, and LA and LB are not used).
  if (p.tma) return {};
  for (auto [name, along] : {std::pair{key.la, p.la}, {key.lb, p.lb}})
    if (along <= 0 || p.threads() % (8 * along))
      return no<Explain>("TC=2: 8 x {}={} must divide the {} threads (eight threads copy eight rows)", name,
                         along, p.threads());
  return {};
}

template <bool Explain>
Legality check_tensor_core_tiling(ir::DType dtype, const GemmParams& p, const DeviceLimits& device,
                                  const TilingKeys& key) {
  if (p.tc < 0 || p.tc > 2) return no<Explain>("TC={} must be 0, 1 or 2", p.tc);
  if (!p.tc) return {};
  if (p.tc == 2) return check_warp_group_tiling<Explain>(dtype, p, device, key);
  const bool f64 = dtype == ir::DType::f64, f32 = dtype == ir::DType::f32;
  if (!ir::is_16_bit(dtype) && !f64 && !f32)
    return no<Explain>("TC=1 (tensor cores) is implemented for f16, bf16, f32 and f64, not {}", ir::name(dtype));
  if (f32 && !device.f32_tensor_cores)
    return no<Explain>("TC=1 for f32 (three TF32 products per term, a larger rounding error than FMA) is off: "
                       "TuningOptions::f32_tensor_cores turns it on");
  if (device.sm < 80)
    return no<Explain>("TC=1 needs mma.sync ({}), sm_80 or newer, not sm_{}",
                       f64 ? "m8n8k4.f64" : f32 ? "m16n8k8.tf32" : "m16n8k16", device.sm);
  if (!p.acc32) return no<Explain>("TC=1 accumulates its products in f32 (f64 in f64): ACC must be 32");
  const int depth = f64 ? 4 : f32 ? 8 : 16;  // K of one mma
  if (p.ks != 1)
    return no<Explain>("TC=1 reads fragments one {}-deep step at a time: {}={} must be 1", depth, key.ks, p.ks);
  if (f64 && p.ns % 2)
    return no<Explain>("TC=1 gives each warp an (8 {}) x (4 {}) tile of 8x8 mma tiles: {}={} must be even", key.ms,
                       key.ns, key.ns, p.ns);
  if (f32 && (p.ms % 2 || p.ns % 2))
    return no<Explain>("TC=1 gives each warp an (8 {0}) x (4 {1}) tile of 16x8 mma tiles: {0}={2} and {1}={3} must "
                       "be even",
                       key.ms, key.ns, p.ms, p.ns);
  if (ir::is_16_bit(dtype) && (p.ms % 2 || p.ns % 4))
    return no<Explain>("TC=1 gives each warp an (8 {0}) x (4 {1}) tile of 16x8 mma tiles, read in 16-wide pairs "
                       "along {1}: {0}={2} must be even and {1}={3} a multiple of 4",
                       key.ms, key.ns, p.ms, p.ns);
  if ((p.ml / p.ms) % 8 || (p.nl / p.ns) % 4)
    return no<Explain>("TC=1 lays a warp's threads out 8 by 4: {}/{}={} must be a multiple of 8 and {}/{}={} a "
                       "multiple of 4",
                       key.ml, key.ms, p.ml / p.ms, key.nl, key.ns, p.nl / p.ns);
  if ((p.u / p.kl) % depth)
    return no<Explain>("TC=1 consumes {} {} at a time: U/{}={}/{} must be a multiple of {}", key.reduction, depth,
                       key.kl, p.u, p.kl, depth);
  return {};
}

}  // namespace isaac::lower
