#pragma once
// Which parameter sets the sweep tries for a problem: a sample of gemm_space drawn with a fixed seed and
// biased toward sets that make sense on the device:
// - "sensible" sets only (64..512 threads per block, thread tiles MS x NS of at least 4, block tiles
//   ML x NL no larger than M x N rounded up to powers of two), unless none is;
// - three groups, interleaved so that any prefix of the sample keeps their proportions (the sweep may
//   stop early): KG = 1; KG > 1 with blocks = tiles x KG within [0.4 SMs, 4 SMs]; other KG > 1.
//   Problems with few output tiles (fewer than two waves of 64x64 tiles) give half the sample to the
//   middle group; within each group, every other set has a thread tile MS x NS >= 16 (where any has);
// - first, up to `anchors` classic sets (64/128 block tiles, 8x4 or 8x8 thread tiles, U=8, 16-byte
//   loads, DB=1, KG=1), which large problems want and which let the pruning of slow ones start early;
// - SW > 1 only where the grid has more than one tile both ways (elsewhere it changes nothing);
// - f16 and f64: a share of the sample (tc_fraction) drawn the same way from the tensor-core (TC=1) sets,
//   interleaved with the others; a share of the other sets (acc16_fraction) switched to f16
//   accumulation (ACC=16) where legal, the rest accumulate in f32 (ACC=32).
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace isaac::bench {

struct SampleOptions {
  int count = 200;
  std::uint64_t seed = 1;
  int sm_count = 132;
  double acc16_fraction = 0.25;
  double tc_fraction = 0.5;  // f16 and f64 on sm_80+: of the sample, from the tensor-core (TC > 0) sets
  int only_tc = -1;          // >= 0: sample only the sets with this TC
  int min_threads = 64, max_threads = 512;
  int min_thread_tile = 4;
  int anchors = 8;  // classic register-blocked sets tried first (see draw_sample)
};

struct Sample {
  std::vector<lower::GemmParams> params;  // in the order to try them
  std::size_t space = 0;                  // legal sets in gemm_space
  std::size_t sensible = 0;               // of which pass the filter above (after the SW rule)
  bool few_tiles = false;
  double space_seconds = 0;     // time gemm_space took
  std::string summary() const;  // "space 81234, sensible 20311, sample 200: KG=1 80, ..."
};

// Draws from gemm_space(g, limits); sets whose str() is in `exclude` are never drawn.
Sample draw_sample(const ir::Gemm& g, const lower::DeviceLimits& limits, const SampleOptions& options,
                   const std::set<std::string>& exclude = {});

std::int64_t output_tiles(const ir::Gemm& g, const lower::GemmParams& p);

}  // namespace isaac::bench
