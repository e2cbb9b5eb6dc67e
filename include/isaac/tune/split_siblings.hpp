#pragma once
// Sets that differ from one GEMM set only in the grid split KG. The model's commonest error among
// the sets it ranks first is the split (docs/tuning-history.md, rounds 19-21): `isaac-tune focus
// --kg-siblings` times such sets beside the model's first, so that the next model sees what the
// split alone changes.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <vector>

namespace isaac::tune {

// Up to `count` sets legal for `problem` on `device` that equal `best` but for KG: KG = 1 first,
// then the space's splits nearest to best's on a log scale (for KG = 8: 10, 6, 12, 5, 4, 16, ...),
// each KG once.
std::vector<lower::GemmParams> grid_split_siblings(const ir::Gemm& problem, const lower::GemmParams& best,
                                                   const lower::DeviceLimits& device, int count);

}  // namespace isaac::tune
