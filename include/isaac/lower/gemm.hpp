#pragma once
// The GEMM template (paper, Fig. 3): its parameters, its legality function, its emitter and its
// launch geometry. One parameter set compiles to a kernel that is valid for every problem with the
// same dtype and layout that passes the legality check (sizes and leading dimensions are arguments).
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/target.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace isaac::lower {

struct GemmParams {
  int ml = 64, nl = 64;  // block tile of C
  int ms = 4, ns = 4;    // thread tile of C
  int u = 8;             // K depth of one shared-memory stage
  int ks = 1;            // K steps whose shared-memory fragments a thread loads into registers at once
  int kl = 1;            // warp groups splitting each stage's K, reduced in shared memory at the end
  int kg = 1;            // blocks splitting K, reduced with atomics or a second kernel
  int va = 1, vb = 1;    // vector width (elements) of the global loads of A and B
  int la = 0, lb = 0;    // threads along the contiguous axis of the A and B tiles when loading them
  int db = 1;            // double-buffered shared memory (1) or one stage (0)
  int sw = 1;            // block swizzle: consecutive blocks walk SW tiles down M before moving in N
  int acc32 = 1;         // f16 only: accumulate in f32 (1) or in f16x2 (0)
  // Tensor cores. TC=1 (f16, f32 and f64, sm_80+): each warp multiplies its (8 MS) x (4 NS) tile with
  // mma.sync (f16: m16n8k16, fragments read by ldmatrix; f32: three m16n8k8 TF32 products; f64:
  // m8n8k4, on sm_90 m16n8k4) instead of one MS x NS outer product per thread. TC=2 (f16 and f32 GEMM, sm_90a): each
  // warp group of 128 threads multiplies its (8 MS) x (16 NS) tile with wgmma.mma_async m64nNk16
  // (N = 16 NS) straight from shared memory (f32: three m64nNk8 TF32 products from a split copy of
  // each stage).
  int tc = 0;
  // TMA=1 (TC=2 only): one thread copies each stage of A and B with the Tensor Memory Accelerator
  // (cp.async.bulk.tensor, zeros past the edges) and the warps wait on the stage's mbarrier, instead
  // of every thread copying 16-byte vectors with cp.async. The kernel then takes two tensor maps.
  // Written in the text form only when set.
  int tma = 0;
  // ST (TMA=1, DB=1): the stages of the pipeline, 5 to 16 (0: four). A deeper pipeline keeps more
  // copies in flight; its shared memory leaves fewer blocks per SM, so it pays where the grid is one
  // wave anyway (fit_gemm_pipeline_depth, docs/tensor-cores.md). ST=1 or 2 is no ring but one buffer
  // per K tile, all copied at once: only for a block that reads at most ST tiles. Written in the text
  // form only when set.
  int st = 0;

  int threads() const { return (ml / ms) * (nl / ns) * kl; }
  // "ML=64,NL=64,MS=4,NS=4,U=8,KS=1,KL=1,KG=1,VA=1,VB=1,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=0"
  std::string str() const;
  bool operator==(const GemmParams&) const = default;
};

// Parses str()'s form; keys may come in any order, missing keys keep their defaults.
// Throws InvalidArgument naming an unknown key or a malformed value.
GemmParams parse_gemm_params(std::string_view text);

// What legality needs to know about the device; defaults are the H100's.
struct DeviceLimits {
  int sm = 90;
  int max_threads_per_block = 1024;
  int max_shared_per_block = 227 * 1024;  // the opt-in limit
  int registers_per_block = 65536;
  int max_registers_per_thread = 255;
  int sm_count = 132;  // what fit_gemm_pipeline_depth compares the grid with
  int max_shared_per_sm = 228 * 1024;  // with sm_count, the blocks a tile loop's grid holds (gemm_tile_loop)
  // Whether f32 may take TC=1 (three TF32 products per term, docs/tensor-cores.md): faster, with a
  // larger rounding error than FMA. Legal by default here; the tuner takes it only where
  // TuningOptions::f32_tensor_cores asks for it.
  bool f32_tensor_cores = true;
};

struct Legality {
  bool legal = true;
  std::string reason;  // why not, naming the parameters and the limit
  explicit operator bool() const { return legal; }
};

// The one legality function, shared by the sampler, the search, the emitter and the tools.
// Checks the parameters alone, against the problem (sizes, alignment, leading dimensions) and
// against the device (threads, shared memory, estimated registers).
Legality check_gemm(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device = {});
// The part of check_gemm that no parameter set changes: the sizes, leading dimensions and batch strides,
// and the dtype on this device. Where it says no, no set is legal; the searches say why with it.
Legality check_gemm_problem(const ir::Gemm& problem, const DeviceLimits& device = {});
// check_gemm's verdict without the reason (what the searches call, a million times per problem).
bool gemm_legal(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device = {});
// The same without a problem: whether these parameters can compile at all for this layout/dtype.
Legality check_gemm_params(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p,
                           const DeviceLimits& device = {});

int estimate_gemm_registers(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p);
int gemm_shared_bytes(ir::DType dtype, bool a_trans, bool b_trans, const GemmParams& p);
// The threads a block of the main kernel launches: p.threads(), and for TMA=1 sets whose blocks run 8
// stages or more a producer warp (docs/tensor-cores.md).
int gemm_launch_threads(const ir::Gemm& problem, const GemmParams& p);
// The rows of one column of C that a thread of the prepare kernel scales: 16 bytes of them.
inline int gemm_prepare_chunk(ir::DType dtype) { return 16 / static_cast<int>(ir::size_of(dtype)); }

// KG > 1: atomics are faster but the order of the additions varies from run to run; deterministic
// writes each block's partial sums to a workspace reduced in a fixed order by a second kernel.
enum class SplitMode { atomic, deterministic };
std::string_view name(SplitMode mode);  // "atomic" or "deterministic"
// The inverse of name(); throws InvalidArgument naming the modes for any other text.
SplitMode parse_split_mode(std::string_view text);

// Kernel arguments, in this order, for every kernel of a GemmKernel:
//   main:    (C*, A*, B*, W*, alpha, beta, i32 M, N, K, i64 lda, ldb, ldc, stride_a, stride_b, stride_c)
//            and with TMA=1 the tensor maps of A and B by value (gemm_tensor_boxes, runtime::TensorMap),
//            then where gemm_stores_c_by_tma, C's (gemm_c_tensor_box), and for a tile loop (tile_loop) the
//            batch count (i32)
//   prepare: (C*, beta, i32 M, N, i64 ldc, stride_c)                        grid (ceil(ceil(M/V)*N/256), 1, batch),
//            a chunk of V = gemm_prepare_chunk(dtype) rows of one column per thread
//   reduce:  (C*, W*, alpha, beta, i32 M, N, i64 ldc, stride_c)              grid (ceil(M*N/256), 1, batch)
// alpha and beta are f64 for f64 problems and f32 otherwise (f16 results are computed in f32 then rounded).
// W is the deterministic workspace (may be null otherwise).
struct GemmKernel {
  std::string ptx;
  std::vector<char> cubin;    // optional: machine code for the device, loaded instead of the PTX
  std::string main_name;
  std::string prepare_name;  // non-empty for KG > 1 atomic: scales C by beta before the main kernel
  std::string reduce_name;   // non-empty for KG > 1 deterministic: sums the workspace into C
  // main waits (griddepcontrol.wait) for prepare and reduce for main: each may be launched to
  // overlap the kernel before it (sm_90 programmatic dependent launch)
  bool overlaps_previous = false;
  bool c_by_tma = false;      // main takes C's tensor map (gemm_stores_c_by_tma), and runs only such problems
  // main loops over C's tiles (gemm_tile_loop): launch gemm_tile_loop_blocks blocks, not gemm_grid's
  bool tile_loop = false;
  int threads = 0;
  int shared_bytes = 0;       // dynamic shared memory of the main kernel
  int helper_threads = 256;   // block size of prepare/reduce
  double emit_ms = 0;         // time spent in LLVM
};

struct GemmGrid {
  std::array<unsigned, 3> main{1, 1, 1};
  std::array<unsigned, 3> prepare{1, 1, 1};
  std::array<unsigned, 3> reduce{1, 1, 1};
  std::size_t workspace_bytes = 0;
};

GemmGrid gemm_grid(const ir::Gemm& problem, const GemmParams& p, SplitMode mode);

// TMA=1: the tensor map one operand's copies read, in runtime::encode_tensor_map's terms. The
// operand is seen as (contiguous axis, other axis, batch); each copy brings one box of
// box[0] x box[1] elements into shared memory, its rows swizzled in `swizzle_bytes`.
struct GemmTensorBox {
  std::array<std::uint64_t, 3> dims{};
  std::array<std::uint64_t, 2> strides{};  // bytes, of the other axis and of the batch
  std::array<std::uint32_t, 2> box{};
  int swizzle_bytes = 0;
};
// A's and B's, for a problem that passes check_gemm with these parameters.
std::array<GemmTensorBox, 2> gemm_tensor_boxes(const ir::Gemm& problem, const GemmParams& p);
// TMA=1 without a split of K, on a problem whose C allows it (16-byte aligned; M, ldc and the batch
// stride multiples of 16 bytes, since a TMA store writes whole 16-byte runs down a column): the
// kernel takes a tensor map of C too, and C goes through shared memory both ways in boxes of 64 rows x
// NL columns (swizzled in 128 bytes), read by TMA where beta != 0 and written by TMA. Elsewhere the
// threads store C.
bool gemm_stores_c_by_tma(const ir::Gemm& problem, const GemmParams& p);
GemmTensorBox gemm_c_tensor_box(const ir::Gemm& problem, const GemmParams& p);
// Where TMA moves C and a block reads at most gemm_tile_loop_max_k_tiles K tiles, a grid whose blocks
// would each run two tiles or more, at the occupancy estimated from the footprint and the registers,
// runs as a tile loop: each block computes tile after tile, its producer warp copying the next tile's
// operands while the consumers stage and store this one's C (in shared memory of its own,
// GemmLayout::tile_loop_shared_bytes). Only where the producer warp leaves the consumers their
// registers, the larger footprint fits, the ring has two buffers or more (with one, the next tile's
// copy waits for this tile's wgmma), a thread holds at most gemm_tile_loop_max_cells accumulators and
// a tile at most gemm_tile_loop_max_rows rows (or gemm_ping_pong holds). A block that issued C's TMA
// stores waits for them to have read the staging only before it stages the next tile's C, so that the
// next tile's wgmma need not wait for it (f16 QK^T 2048's 128 x 64 loop: +5%). Measured on the H200 (docs/tensor-cores.md, "Tile
// loops"): two buffers or more of 32 or 64 accumulators gained 4-13% (f16 LAPACK 4096 x 4096 x 32
// and 3456, QK^T 512 x 512 x 64); one buffer lost 4-5% (QK^T 512), 128 accumulators 3% (QK^T 2048 x
// 2048 x 128: 167 registers, two blocks per SM instead of three), a 256 x 64 tile 7% (LAPACK 4096),
// and grids of one tile per block up to 17% (batches of 64^3 and 128^3). Over K, the same 128 x 128
// set as a loop against its grid (round 68, docs/tensor-cores.md, "Loops over longer K"): 3-15%
// faster from 9 to 36 K tiles a tile, the same at 72, and 6% slower at 64 (f16 LINPACK 4096, against its
// grid in a swizzled block order).
inline constexpr int gemm_tile_loop_max_k_tiles = 32, gemm_tile_loop_max_cells = 64, gemm_tile_loop_max_rows = 128;
bool gemm_tile_loop(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device = {});
// A tile loop of 128-thread tiles of more than gemm_tile_loop_max_cells (at most gemm_ping_pong_max_cells)
// accumulators per thread, whose tiles alternate between two consumer warp groups ("ping-pong"), each
// with a staging of C of its own: the groups' main loops take turns, so that one group's epilogue runs
// while the other's wgmma do, and one ring of four buffers or more serves both, filled in the order of
// the tiles. Where TMA moves C, a block reads at most gemm_tile_loop_max_k_tiles K tiles and each block
// would run two tiles or more. 288 threads leave ptxas 168 registers, which such tiles fit without
// spilling. Measured on the H200 (docs/tensor-cores.md, "Ping-pong tile loops" and round 68's "Loops
// over longer K"): f16 QK^T 32 x 2048x2048x128 gained 16% over its best grid (and 3% more from the
// shared ring), the implicit GEMM of CONV's Conv10 (25088 x 256 x 1152) 9%; tiles of 64 accumulators
// lost 12-28% against their single-group loops, which run several blocks per SM.
inline constexpr int gemm_ping_pong_max_cells = 128;
bool gemm_ping_pong(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device = {});
// A tile loop's grid is (gemm_tile_loop_blocks, 1, 1): as many blocks as the device holds at once
// (`resident`), at most the tiles of all batches. The tiles are numbered batch after batch, and block x
// runs tiles x, x + nctaid.x, ...: the blocks work on one batch's operands at a time, which L2 keeps
// (f16 QK^T 32 x 2048x2048x128's 128 x 64 loop ran 8% faster than with the blocks shared out per batch).
unsigned gemm_tile_loop_blocks(const ir::Gemm& problem, const GemmParams& p, std::int64_t resident);

// Emits the kernels for the problem's dtype and layout. Throws InvalidArgument when
// check_gemm_params rejects the parameters.
GemmKernel emit_gemm(const ir::Gemm& problem, const GemmParams& p, const Target& target,
                     SplitMode mode = SplitMode::atomic);

// Fills in LA and LB with the widest legal layout along each operand's contiguous axis (what the
// search space uses: the load layouts are not searched).
void fit_gemm_load_layouts(bool a_trans, bool b_trans, GemmParams& p);

// The TMA pipelines deeper than four stages, as measured on the H100 (docs/tensor-cores.md): from 4
// stages to as many as fit in 200 KB, f16 2560x128x2560 ran 1.35x as fast on 80 blocks, while grids
// that the larger footprint pushed into a second wave ran down to 0.6x as fast. The 200 KB leave
// the rest of the SM's 256 KB of L1 and shared memory as cache, as in that experiment.
inline constexpr int gemm_min_deep_stages = 5, gemm_max_stages = 16;
inline constexpr int gemm_deep_pipeline_bytes = 200 * 1024;
// A block that reads one or two K tiles (attention's QK^T: K = 64 or 128) has nothing to pipeline:
// ST = its tiles, copied before the first wgmma, leaves the shared memory of the ring's spare stages
// to other blocks.
inline constexpr int gemm_max_shallow_stages = 2;
// That depth for a TMA=1 DB=1 set whose block reads at most gemm_max_shallow_stages K tiles (at
// least 1); 0 for every other set.
int gemm_shallow_stages(const ir::Gemm& problem, const GemmParams& p);
// Sets ST for a TMA=1 DB=1 set: where a block reads at most gemm_max_shallow_stages K tiles, that
// many (at least 1), or where the set then runs as a tile loop, 2 for one K tile and 0 (four stages)
// for two, and 0 for a ping-pong loop (gemm_ping_pong) either way; else, where the grid (tiles x KG x batch) fits on the device's SMs one block
// each, the most stages, up to gemm_max_stages and the K tiles a block reads, whose shared memory
// fits in gemm_deep_pipeline_bytes and the device's limit. Every other set gets ST=0. The searches,
// the sweeps and the samplers apply it to every set they draw, after its split: the model does not
// see ST, which follows from the other parameters, the problem and the device.
void fit_gemm_pipeline_depth(const ir::Gemm& problem, GemmParams& p, const DeviceLimits& device = {});
// Whether fit_gemm_pipeline_depth gives the set, with its split, a deep pipeline (ST of
// gemm_min_deep_stages or more). gemm_deep_pipeline_fits: whether the shallowest deep pipeline's shared
// memory fits, whatever the grid and K.
bool gemm_runs_deep_pipeline(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device = {});
bool gemm_deep_pipeline_fits(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device = {});

// The main kernel's blocks: C's block tiles x KG x batch.
std::int64_t gemm_grid_blocks(const ir::Gemm& problem, const GemmParams& p);
// SW orders the blocks so that those running together share A and B in L2, which matters where the
// grid runs in waves. One that fits on the SMs one block each runs at once: in the H100 sweeps, of 383
// pairs of such sets alike but for SW, SW > 1 was more than 5% slower than SW = 1 in 13 and more than
// 5% faster in 1 (geometric mean 0.99), so the model search ranks SW = 1 alone for them.
bool gemm_grid_fits_at_once(const ir::Gemm& problem, const GemmParams& p, const DeviceLimits& device = {});

// The grid splits (KG) the space holds. Beside the powers of two it holds values that spread a thin
// problem's grid more evenly over the SMs: 40 tiles x KG = 6 run 240 blocks, where 8 run 320, 2.42
// per SM on the H100. The kernel spreads K's tiles evenly over any KG. On the H100 the sweep chose
// KG = 6 for f64 and f32 DeepBench-F 2560x64 (+10% and +5%), and 3, 5, 6 or 24 on four other rows.
inline constexpr int gemm_kg_values[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 128, 256};
// A KG that is not a power of two is in the space only while the split grid stays within this many
// blocks per SM: larger grids are balanced by their number alone, and those splits would only
// lengthen the search (they nearly doubled the f16 4096^3 space).
inline constexpr int gemm_uneven_split_blocks_per_sm = 8;
// The largest KG that is not a power of two the space holds for a set whose unsplit grid (KG = 1)
// has `unsplit_blocks` blocks, and whether it holds a given KG. The searches, which ask this of every
// split of every base set, take the largest once per base set and ask gemm_split_within.
std::int64_t gemm_max_uneven_split(std::int64_t unsplit_blocks, const DeviceLimits& device = {});
bool gemm_split_in_space(std::int64_t unsplit_blocks, int kg, const DeviceLimits& device = {});
// (kg & (kg - 1)): std::has_single_bit calls libgcc's popcount without -mpopcnt.
inline bool gemm_split_within(int kg, std::int64_t max_uneven_split) {
  return (kg > 0 && (kg & (kg - 1)) == 0) || kg <= max_uneven_split;
}

// The template's search space for a problem, in two levels: every legal "base" set (KG = 1, SW = 1)
// and the KG and SW values each base set allows. Given a legal base set, whether a KG is legal
// depends only on U (KG may not exceed the K tiles), so the splits are listed per U.
struct GemmSpace {
  std::vector<GemmParams> bases;
  struct Split {
    int kg, sw;
  };
  std::array<std::vector<Split>, 5> splits;  // by log2(U) - 2, U in {4, 8, 16, 32, 64}
  ir::Gemm problem;
  DeviceLimits device;
  const std::vector<Split>& splits_of(const GemmParams& base) const;
  // Whether the space holds a base set with this split of its U (gemm_split_in_space).
  bool holds(const GemmParams& base, Split split) const;
  std::size_t size() const;  // legal sets in all
};
GemmSpace gemm_space_levels(const ir::Gemm& problem, const DeviceLimits& device = {});

// Every legal parameter set of the space, expanded (the brute-force sweep enumerates these).
std::vector<GemmParams> gemm_space(const ir::Gemm& problem, const DeviceLimits& device = {});

}  // namespace isaac::lower
