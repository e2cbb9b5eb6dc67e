#pragma once
// The tensor-core (TC=1) rules on a tiling, shared by the GEMM and CONV legality functions, which
// name the same fields differently (GEMM's MS is CONV's PS).
#include "lower/gemm_layout.hpp"

#include <isaac/lower/gemm.hpp>

#include <fmt/format.h>

#include <string>
#include <utility>

namespace isaac::lower {

// The searches check a million sets per problem: with Explain = false a refusal formats no reason.
template <bool Explain, class... Args>
Legality no(fmt::format_string<Args...> format, Args&&... args) {
  if constexpr (Explain) return {false, fmt::format(format, std::forward<Args>(args)...)};
  else return {false, {}};
}

// The keys of a template's text form for the GemmParams fields that the rules mention.
struct TilingKeys {
  const char *ml, *nl, *ms, *ns, *ks, *kl, *reduction;
};
inline constexpr TilingKeys gemm_keys{"ML", "NL", "MS", "NS", "KS", "KL", "K"};
inline constexpr TilingKeys conv_keys{"PL", "KL", "PS", "KS", "CS", "CL", "C*R*S"};

template <bool Explain>
Legality check_tensor_core_tiling(ir::DType dtype, const GemmParams& p, const DeviceLimits& device,
                                  const TilingKeys& key) {
  if (p.tc != 0 && p.tc != 1) return no<Explain>("TC={} must be 0 or 1", p.tc);
  if (!p.tc) return {};
  const bool f64 = dtype == ir::DType::f64;
  if (dtype != ir::DType::f16 && !f64)
    return no<Explain>("TC=1 (tensor cores) is implemented for f16 and f64, not {}", ir::name(dtype));
  if (device.sm < 80)
    return no<Explain>("TC=1 needs mma.sync ({}), sm_80 or newer, not sm_{}", f64 ? "m8n8k4.f64" : "m16n8k16", device.sm);
  if (!p.acc32) return no<Explain>("TC=1 accumulates f16 products in f32: ACC must be 32");
  const int depth = f64 ? 4 : 16;  // K of one mma
  if (p.ks != 1)
    return no<Explain>("TC=1 reads fragments one {}-deep step at a time: {}={} must be 1", depth, key.ks, p.ks);
  if (f64 && p.ns % 2)
    return no<Explain>("TC=1 gives each warp an (8 {}) x (4 {}) tile of 8x8 mma tiles: {}={} must be even", key.ms,
                       key.ns, key.ns, p.ns);
  if (!f64 && (p.ms % 2 || p.ns % 4))
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
