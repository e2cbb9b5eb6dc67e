#pragma once
// How many blocks of a kernel a multiprocessor holds at once, and how full the grid's last wave of
// blocks leaves the GPU. The analytic pruning (tune/prune.hpp) ranks sets by them, and the CONV
// model reads them as features (tune/conv_features.hpp): a 16% faster f16 set on the H200 differed
// from the model's choice only in holding 7 blocks per SM instead of 5, which made its 789 blocks
// one wave instead of two (docs/tuning.md, round 41).
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
// and 48 warps, sm_70 96 KB, sm_90 228 KB).
Multiprocessors multiprocessors(const lower::DeviceLimits& device);

// Blocks of `threads` threads, `registers` registers each (allocated per warp in units of 256) and
// `shared_bytes` of shared memory (plus the 1 KB a block reserves) that fit on one multiprocessor; 0
// when one does not.
int resident_blocks(int threads, int registers, int shared_bytes, const Multiprocessors& sms);

// How full a grid of `blocks` keeps the GPU over its waves of count x resident blocks: blocks /
// (waves x slots per wave). 1 for whole waves; just over 0.5 for a wave and one block more.
double wave_fill(double blocks, int resident, const Multiprocessors& sms);

}  // namespace isaac::tune
