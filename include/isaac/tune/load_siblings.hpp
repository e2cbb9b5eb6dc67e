#pragma once
// Sets that differ from one GEMM set only in the vector widths of its global loads (VA, VB, and the
// load layouts LA, LB that follow from them), or one CONV set only in VI, VF (LI, LF). The f64
// model rates some of them far from what they measure: on f64 DeepBench-F 2560x64 the brute force's
// winner loads A one element and B two at a time, which the model rates 26% below its first choice
// (two for A, one for B), the tiling and split otherwise alike (docs/tuning-history.md, round 36).
// `isaac-tune focus --load-siblings` times such sets beside the model's first, so that the next
// model sees what the widths alone change.
#include <isaac/ir/conv.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>

#include <vector>

namespace isaac::tune {

// Up to `count` sets legal for `problem` on `device` that equal `best` but for VA and VB (LA and LB
// fitted to them as the space fits them): the nearest widths first, by the sum of the steps of a
// factor of two in VA and VB, the narrower first on a tie. None for a TMA set, whose threads copy
// nothing.
std::vector<lower::GemmParams> load_width_siblings(const ir::Gemm& problem, const lower::GemmParams& best,
                                                   const lower::DeviceLimits& device, int count);

// The same for a direct CONV set: VI and VF, LI and LF fitted, each sibling in conv_space. The f16
// CONV model of 0.1.44 rated Conv3's winner (CHWN, VI=4) 15% below the same tiling with VI=8, which
// runs 3% slower (docs/tuning-history.md, round 62). None for a TMA or Winograd set, whose threads
// load no vectors of these widths.
std::vector<lower::ConvParams> load_width_siblings(const ir::Conv& problem, const lower::ConvParams& best,
                                                   const lower::DeviceLimits& device, int count);

}  // namespace isaac::tune
