#pragma once
// How many blocks of a kernel a multiprocessor holds at once, and how full the grid's last wave of
// blocks leaves the GPU. The analytic pruning (tune/prune.hpp) ranks sets by them, and the CONV and
// GEMM models read them as features (tune/conv_features.hpp, tune/features.hpp): a 16% faster f16
// set on the H200 differed from the model's choice only in holding 7 blocks per SM instead of 5,
// which made its 789 blocks one wave instead of two (docs/tuning-history.md, round 41), and f64 2560x64x2560
// ran 12% slower split 10 or 12 ways, a wave and a bit, than 8 or 16 ways (round 42).
#include <isaac/lower/gemm.hpp>
#include <isaac/runtime/runtime.hpp>

namespace isaac::tune {

// What occupancy depends on, per multiprocessor; defaults are the H100's.
struct Multiprocessors {
  int count = 132;
  int max_warps = 64;
  int max_blocks = 32;
  int registers = 65536;
  int shared_bytes = 228 * 1024;
};
// From the driver's figures.
Multiprocessors multiprocessors(const runtime::DeviceInfo& info);
// From the limits the search works with: the SM count, and the rest by compute capability (the CUDA
// programming guide's table: sm_80 and sm_87 164 KB of shared memory per SM, sm_86 and sm_89 100 KB
// and 48 warps, sm_70 96 KB, sm_90 228 KB). InvalidArgument for fewer than one SM.
Multiprocessors multiprocessors(const lower::DeviceLimits& device);

// Blocks of `threads` threads, `registers` registers each (allocated per warp in units of 256) and
// `shared_bytes` of shared memory (plus the 1 KB a block reserves) that fit on one multiprocessor; 0
// when one does not.
int resident_blocks(int threads, int registers, int shared_bytes, const Multiprocessors& sms);

// How full a grid of `blocks` keeps the GPU over its waves of count x resident blocks: blocks /
// (waves x slots per wave). 1 for whole waves; just over 0.5 for a wave and one block more.
double wave_fill(double blocks, int resident, const Multiprocessors& sms);

// How evenly a grid of `blocks` spreads over the SMs: its mean blocks per SM over the most any SM
// runs, blocks / (count x ceil(blocks / count)). The wave fill counts the slots of SMs that each hold
// several blocks, and so rates 256 blocks on 132 SMs that hold 3 each 65% full; but where the SMs' pipes
// rather than their slots bound a block, two blocks on nearly every SM keep all of them busy, and
// 1024^3 f64 ran 1.2x as fast so (64 x 64 tiles, unsplit) as split 4 ways (docs/tuning-history.md,
// round 65).
double sm_balance(double blocks, const Multiprocessors& sms);

// The registers a wgmma (TC=2) thread holds besides its accumulators, for its occupancy: on sm_90,
// ptxas gave 50 of 53 random f16 CONV TMA sets their accumulators plus 26, and cp.async ones plus 26
// to 86 (50 on average); the GEMM CPU sweep's TMA sets took at least 26 too. The legality estimates,
// made to be safe, lie far above (CONV: 59 with TMA, 39 without; GEMM with TMA: 15 on average).
inline constexpr int wgmma_tma_registers = 26, wgmma_copy_registers = 50;

// The blocks of a GEMM set an SM holds. The registers are the legality estimate's, but for wgmma
// (TC=2) sets that copy with TMA: their accumulators and wgmma_tma_registers. A TMA set counts a
// producer warp. Shared memory is that of the set unsplit (KG = 1), in the standard
// pipeline or, where that set reads at most two K tiles, with one buffer per tile (ST=1 or 2): the
// deeper pipeline is only chosen where the grid fits on the SMs one block each
// (lower::fit_gemm_pipeline_depth), and a split changed no f16 set's count in four spaces of 84,163
// base sets, where it only ever frees the staging of the stores. So the count is one per base set,
// which keeps the model search's per-base first layer (tune/search.hpp).
int gemm_resident_blocks(const ir::Gemm& problem, const lower::GemmParams& params, const Multiprocessors& sms);

// The wave fill of a GEMM set with its split, `blocks` blocks in all: wave_fill's with `resident` (the
// base set's count, above), but a set that runs a deep pipeline (lower::gemm_runs_deep_pipeline) has
// one block on each of `blocks` of the SMs, since that pipeline is only chosen where the grid fits so.
// Counted with `resident`, f16 LINPACK 1024's 64 x 128 tile (128 blocks, 2 per SM in the standard
// pipeline) and ICA 256's 128 x 64 tile split 16 ways seemed to leave half the SMs idle, and the model
// ranked them below 128 x 128 tiles that ran 0.74x and 0.92x as fast (docs/tuning-history.md, round 54).
double gemm_wave_fill(const ir::Gemm& problem, const lower::GemmParams& params, std::int64_t blocks, int resident,
                      const Multiprocessors& sms, const lower::DeviceLimits& device);

}  // namespace isaac::tune
