#pragma once
// Quantities derived from a GEMM parameter set, shared by the legality check and the emitter so
// that both see the same tile shapes, load layouts and shared-memory footprint.
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>

#include <algorithm>
#include <cstdint>

namespace isaac::lower {

struct GemmLayout {
  int elem = 4;          // bytes of an A/B/C element
  int acc_elem = 4;      // bytes of an accumulator element
  int threads = 0;  // the threads that compute (a TMA=1 block may launch a producer warp besides: tma_producer_warp)
  int fvm = 1, fvn = 1;  // vector width of the shared-memory fragment loads along M and N
  int pad_a = 0, pad_b = 0;  // elements added to a shared-memory row where tiles are transposed
  int pitch_a = 0, pitch_b = 0;  // shared-memory row lengths (elements)
  int stage_a = 0, stage_b = 0;  // elements of one stage
  int stages = 2;
  // TC=2 f32: two buffers after the stages (elements from the start of shared memory, and each
  // buffer's size), each holding one stage split for the tensor cores as A hi, A lo, B hi, B lo,
  // K-contiguous (TiledKernelBuilder::split_stage); the split of one stage is written while the
  // tensor cores still read the other.
  int split_region = 0, split_size = 0;
  // Whether a shared-memory tile's rows run along K (elements along M or N); always so without TC.
  bool a_rows_k = true, b_rows_k = true;
  // Tile extents along the contiguous (c) and the other (o) global axis, and the loads per thread.
  int ca = 0, oa = 0, cb = 0, ob = 0;
  int loads_a = 0, loads_b = 0;

  GemmLayout(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p) {
    elem = static_cast<int>(ir::size_of(dtype));
    acc_elem = dtype == ir::DType::f64 ? 8 : (dtype == ir::DType::f16 && !p.acc32 ? 2 : 4);
    threads = p.threads();
    // Tensor-core fragments come from ldmatrix, not from per-thread vector reads.
    fvm = p.tc ? 1 : std::max(1, std::min(p.ms, 16 / elem));
    fvn = p.tc ? 1 : std::max(1, std::min(p.ns, 16 / elem));
    if (p.tc == 2) {
      // wgmma's swizzled layouts (TiledKernelBuilder::wgmma_offset) are dense: a stage of A holds
      // ML x U elements, of B NL x U, with no pad. One stage more than TC=1: the wgmma of the
      // previous stage may still read its buffer. TMA=1 may run deeper (ST).
      pitch_a = p.ml;
      pitch_b = p.nl;
      stage_a = p.u * p.ml;
      stage_b = p.u * p.nl;
      stages = p.tma && p.st ? p.st : p.db ? 4 : 3;
      if (elem == 4) {
        // f32: the tensor cores read the split buffers alone, so a stage's buffer is free again once
        // it is split, as with TC=1.
        stages = p.db ? 3 : 2;
        split_region = stages * (stage_a + stage_b);
        split_size = 2 * (stage_a + stage_b);
      }
    } else if (p.tc) {
      // cp.async copies global rows as they are: a tile whose global contiguous axis is K is kept
      // with rows along M (or N) and read by ldmatrix without .trans. ldmatrix reads 8 rows of 16
      // bytes at once: a 16-byte pad puts them in distinct banks. DB=1 is a three-stage pipeline.
      a_rows_k = !a_trans;
      b_rows_k = b_trans;
      // f64 (DMMA) fragments are single 8-byte loads: lane 4 g + q reads (k = q, m or n = g), and
      // a warp's 8-byte loads reach shared memory as two half-warps, lanes 0-15 (g < 4) and 16-31.
      // A row length of 4 (mod 16) elements puts a half-warp's 16 elements (q * 4 + g in a K-row
      // tile, g * 4 + q in an M- or N-row one) on 16 distinct 8-byte bank pairs: two wavefronts
      // per warp, the least 256 bytes need. 8 (mod 16) put rows 0 and 2 on the same banks (four
      // wavefronts, measured by Nsight Compute), and so did the 16-byte pad. Rows stay 16-byte
      // aligned for cp.async: the lengths are even.
      // f32 (TF32) fragments are single 4-byte loads, lane 4 g + q reading (k = q, m or n = g): a
      // row length of 8 (mod 32) elements in a K-row tile (q * 8 + g) and of 4 (mod 32) in an M- or
      // N-row one (g * 4 + q) puts the 32 lanes on 32 distinct banks.
      auto pad_to = [](int length, int residue, int modulus) { return ((residue - length) % modulus + modulus) % modulus; };
      auto pad = [&](bool rows_k, int length) {
        if (elem == 8) return pad_to(length, 4, 16);
        if (elem == 4) return pad_to(length, rows_k ? 8 : 4, 32);
        return 16 / elem;
      };
      pad_a = pad(a_rows_k, a_rows_k ? p.ml : p.u);
      pad_b = pad(b_rows_k, b_rows_k ? p.nl : p.u);
      pitch_a = (a_rows_k ? p.ml : p.u) + pad_a;
      pitch_b = (b_rows_k ? p.nl : p.u) + pad_b;
      stage_a = (a_rows_k ? p.u : p.ml) * pitch_a;
      stage_b = (b_rows_k ? p.u : p.nl) * pitch_b;
      stages = p.db ? 3 : 2;
    } else {
      // A transposed tile is written one element per row: a 16-byte pad spreads those rows over banks.
      pad_a = a_trans ? 16 / elem : 0;
      pad_b = b_trans ? 0 : 16 / elem;
      pitch_a = p.ml + pad_a;
      pitch_b = p.nl + pad_b;
      stage_a = p.u * pitch_a;
      stage_b = p.u * pitch_b;
      stages = p.db ? 2 : 1;
    }
    ca = a_trans ? p.u : p.ml;
    oa = a_trans ? p.ml : p.u;
    cb = b_trans ? p.nl : p.u;
    ob = b_trans ? p.u : p.nl;
    if (!p.tma && p.la > 0 && p.lb > 0 && p.va > 0 && p.vb > 0 && threads > 0) {  // TMA=1: no thread loads
      loads_a = (ca / std::max(1, p.la * p.va)) * (oa / std::max(1, threads / p.la));
      loads_b = (cb / std::max(1, p.lb * p.vb)) * (ob / std::max(1, threads / p.lb));
    }
  }

  int tile_bytes() const { return (stages * (stage_a + stage_b) + 2 * split_size) * elem; }
  int reduction_bytes(const GemmParams& p) const { return (p.kl - 1) * p.ml * p.nl * acc_elem; }
  // f16 TC=1 with plain stores (KG = KL = 1) stages the block's accumulators in shared memory, column
  // by column (C's layout), each column padded by 16 bytes so that the fragments' writes hit distinct
  // banks. Not f64: its fragments already store 8 lanes x 8 bytes contiguous, and staging them made
  // the f64 LAPACK problems 5-9% slower on the H100.
  // Where TMA moves C (gemm_stores_c_by_tma), the tile is staged as f16 instead, in less.
  bool staged_stores(const GemmParams& p) const { return p.tc && elem == 2 && p.kg == 1 && p.kl == 1; }
  int staging_pitch(const GemmParams& p) const { return p.ml + 16 / acc_elem; }
  int staging_bytes(const GemmParams& p) const {
    return staged_stores(p) ? p.nl * staging_pitch(p) * acc_elem : 0;
  }
  // CONV's footprint; GEMM's adds the staging of its stores and, TMA=1, two 8-byte mbarriers per
  // stage (filled, emptied) after everything else (the staging reuses the tiles' memory once the main
  // loop is over), and without a split one more, on which TMA's copy of C completes (where it moves C).
  int shared_bytes(const GemmParams& p) const { return std::max(tile_bytes(), reduction_bytes(p)); }
  int barriers_offset(const GemmParams& p) const { return (std::max(shared_bytes(p), staging_bytes(p)) + 7) / 8 * 8; }
  int c_barrier_offset(const GemmParams& p) const { return barriers_offset(p) + 16 * stages; }
  int gemm_shared_bytes(const GemmParams& p) const {
    if (!p.tma) return std::max(shared_bytes(p), staging_bytes(p));
    return c_barrier_offset(p) + (staged_stores(p) ? 8 : 0);
  }
  // A tile loop (gemm_tile_loop) stages C's f16 tile in memory of its own after the rest, aligned
  // for TMA's 128-byte swizzle, while the producer fills the stages with the next tile's operands.
  // `groups` consumer warp groups (gemm_ping_pong: 2) each have a C mbarrier and a staging of their own.
  int tile_loop_staging_offset(const GemmParams& p, int groups = 1) const {
    return (c_barrier_offset(p) + 8 * groups + 1023) / 1024 * 1024;
  }
  int tile_loop_shared_bytes(const GemmParams& p, int groups = 1) const {
    return tile_loop_staging_offset(p, groups) + groups * p.ml * p.nl * elem;
  }
  // TC=2: the bytes of one row of an operand's swizzled shared-memory tile (32, 64 or 128: wgmma's
  // swizzle modes): 2U for a K-contiguous operand, else the M/N extent of one wgmma (up to 128).
  int wgmma_width(const GemmParams& p, bool k_contiguous, int mn_per_instruction) const {
    return std::min(128, (k_contiguous ? p.u : mn_per_instruction) * elem);
  }
};

// The block tiles of C (the main grid's x) and the K tiles that one block of a KG split reads.
inline std::int64_t gemm_block_tiles(const ir::Gemm& g, const GemmParams& p) {
  return ((g.m + p.ml - 1) / p.ml) * ((g.n + p.nl - 1) / p.nl);
}
inline std::int64_t gemm_k_tiles_per_block(const ir::Gemm& g, const GemmParams& p) {
  return ((g.k + p.u - 1) / p.u + p.kg - 1) / p.kg;
}

// TMA=1: whether a producer warp of its own, launched after the consumers, issues the copies
// (TiledKernelBuilder::main_loop_tma). Where it leaves the consumers their registers (a scheduler
// holds a quarter of the register file and every fourth warp: 288 threads leave 168 each, which the
// 128-accumulator tiles exceed) and a block runs at least tma_producer_min_stages stages: with fewer
// there is little to overlap, and the warp's registers cost blocks per SM (H100, docs/tensor-cores.md).
inline constexpr int tma_producer_min_stages = 8;
bool tma_producer_warp(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device = {});
// Whether one more warp leaves the consumers the registers legality gives them.
bool tma_producer_fits(const ir::Gemm& g, const GemmParams& p, const DeviceLimits& device);

}  // namespace isaac::lower
