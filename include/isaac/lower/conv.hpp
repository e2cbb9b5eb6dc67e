#pragma once
// The CONV template (paper §3.3): implicit GEMM over M = N*P*Q output pixels, N = K filters and a
// reduction over C*R*S, with a look-up table (LUT) of reduction offsets.
//
// For each reduction index j the LUT holds the offset of tap (c, r, s) in the input and the tap's
// (r * dilation_h, s * dilation_w), so that the kernel tests h = p*stride_h - pad_h + r*dilation_h
// and w against the image without any division in the main loop; taps outside the image (padding)
// read zero through selected loads. The table is built on the host once per shape
// (conv_lookup_table) and kept with the compiled kernel (CompiledConv holds it in device memory).
//
// A kernel is specialised for one problem: every extent and stride is an immediate in the PTX, so
// the pixel decompositions use constant divisions. The reduction runs in the filter's memory order:
// (c, r, s) for KCRS and CRSK filters, (r, s, c) for KRSC, so that the filter is a plain strided
// matrix; the input is reached through the LUT whatever its layout.
#include <isaac/ir/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/lower/target.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isaac::lower {

struct ConvParams {
  int pl = 64, kl = 64;  // block tile: output pixels (n, p, q flattened) x filters
  int ps = 4, ks = 4;    // thread tile: pixels x filters
  int u = 8;             // reduction depth (of C*R*S) of one shared-memory stage
  int cs = 1;            // reduction steps whose fragments a thread loads into registers at once
  int cl = 1;            // warp groups splitting each stage's reduction, reduced in shared memory
  int cg = 1;            // blocks splitting C*R*S, reduced with atomics (C prepared with beta and bias)
  int vi = 1, vf = 1;    // vector width (elements) of the global loads of the input and the filter
  int li = 0, lf = 0;    // threads along the contiguous axis of the input and filter tiles when loading
  int db = 1;            // double-buffered shared memory (1) or one stage (0); TC=1: three stages or two
  int tc = 0;            // tensor cores (1): mma.sync for f16 and f64, fed by cp.async, as GEMM's TC=1
  // WG=1: Winograd F(2x2, RxS) (f32 and f64, stride and dilation 1, 2 <= R, S <= 5; sm_80+). The
  // block multiplies, for each of the (R+1)(S+1) transformed planes, KL filters by PL tiles of 2 x 2
  // output pixels over C, U channels per stage, each thread KS x PS of every plane: PL tiles, KL
  // filters, PS and KS tile the block as they do for pixels; U is the channels of a stage and DB
  // double-buffers it; CL groups of threads split the planes (CL divides them). The input tiles are
  // transformed as they are loaded; with CL = 1 each thread transforms its own outputs, with CL > 1
  // the groups' planes meet in shared memory, so the planes never leave the chip. A
  // filter-transform kernel runs first. CS, CG, VI, VF stay 1, LI, LF and TC 0.
  // WG=2: Winograd F(4x4, RxS) in four kernels (f32 and f64, stride and dilation 1, 2 <= R, S <= 5):
  // the filter's and the input's (R+3)(S+3) planes are transformed into a workspace, multiplied over
  // C by one batched GEMM (one plane per batch entry: tiles of 4 x 4 output pixels x filters), and
  // the products transformed back through the epilogue. The GEMM's parameters are the template's,
  // mapped as for the direct kernel: PL->ML (tiles), KL->NL (filters), PS->MS, KS->NS, U, CS->KS,
  // CL->KL, VI->VA, VF->VB, LI->LA, LF->LB, DB, TC; CG stays 1 (winograd_product).
  // Written in the text form only when set.
  int wg = 0;

  int threads() const { return (pl / ps) * (kl / ks) * cl; }
  // "PL=64,KL=64,PS=4,KS=4,U=8,CS=1,CL=1,CG=1,VI=1,VF=1,LI=16,LF=8,DB=1,TC=0"
  std::string str() const;
  bool operator==(const ConvParams&) const = default;
};

// Parses str()'s form; keys in any order, missing keys keep their defaults. Throws InvalidArgument
// naming an unknown key or a malformed value.
ConvParams parse_conv_params(std::string_view text);

// What the epilogue does after out = alpha * sum + beta * out: add bias[k] (a vector of K elements
// of the problem's dtype), then max(0, .). Both change the code, so they are part of the kernel.
struct ConvEpilogue {
  bool bias = false;
  bool relu = false;
  bool operator==(const ConvEpilogue&) const = default;
};
std::string to_string(const ConvEpilogue& e);  // "none", "bias", "relu", "bias+relu"

// Whether the input's contiguous axis is the reduction (NHWC) rather than the pixels (NCHW, CHWN),
// and the filter's is the filters (CRSK) rather than the reduction (KCRS, KRSC).
bool conv_input_reduction_contiguous(const ir::Conv& conv);
bool conv_filter_k_contiguous(const ir::Conv& conv);

// The one legality function for a parameter set, a problem (extents, strides, alignment,
// epilogue) and a device; when it says no, it says why.
Legality check_conv(const ir::Conv& problem, const ConvParams& p, const ConvEpilogue& epilogue = {},
                    const DeviceLimits& device = {});
// check_conv's verdict without the reason (what the searches call, a million times per problem).
// The part of check_conv that no parameter set changes (sizes, padding, the output's strides, the
// dtype). Where it says no, no set is legal; the searches say why with it.
Legality check_conv_problem(const ir::Conv& problem, const DeviceLimits& device = {});
bool conv_legal(const ir::Conv& problem, const ConvParams& p, const ConvEpilogue& epilogue = {},
                const DeviceLimits& device = {});
// The parameters alone, for a dtype and the two contiguity choices above, with the registers of a
// kernel that copies its tiles itself (not by TMA).
Legality check_conv_params(ir::DType dtype, bool input_reduction_contiguous, bool filter_k_contiguous,
                           const ConvParams& p, const DeviceLimits& device = {});

// tma_copies: the tiles come by TMA (conv_tma), so no thread holds a copy's addresses.
int estimate_conv_registers(ir::DType dtype, bool input_reduction_contiguous, bool filter_k_contiguous,
                            const ConvParams& p, bool tma_copies = false);
// The same for any set, WG=1 included (whose registers depend on the filter's size).
int estimate_conv_registers(const ir::Conv& problem, const ConvParams& p);
int conv_shared_bytes(ir::DType dtype, bool input_reduction_contiguous, bool filter_k_contiguous,
                      const ConvParams& p);
// The dynamic shared memory a direct (WG=0) kernel runs with, as emit_conv gives it
// (ConvKernel::shared_bytes): its tiles at the depth of its ring (conv_pipeline_stages) or the staging
// of its stores, whichever is larger (a tile loop, conv_tile_loop: both), and with TMA the ring's
// mbarriers. A timing recorded with other bytes was of another kernel (an earlier version's ring).
int conv_kernel_shared_bytes(const ir::Conv& problem, const ConvParams& p);

// One LUT entry per reduction index j (in the kernel's reduction order), padded with entries that
// always fall outside the image up to a multiple of U: {input offset of (c, r, s) in elements,
// r * dilation_h, s * dilation_w, 0}. Empty for WG=1, which needs none.
using ConvLutEntry = std::array<std::int32_t, 4>;
std::vector<ConvLutEntry> conv_lookup_table(const ir::Conv& problem, const ConvParams& p);

// Kernel arguments, in this order:
//   main:      (O*, I*, F*, LUT*, bias*, alpha, beta) grid conv_grid().main, conv.threads threads; conv_tma
//              kernels take the input's and the filter's tensor maps after beta (conv_tensor_maps)
//   prepare:   (O*, bias*, beta)                      CG > 1 only: O = beta * O + bias, before main
//   transform: (W*, F*)                               WG=1 only: the filter's planes into the workspace W
//                                                     (conv_grid().workspace_bytes), before main, which
//                                                     then takes W as its F* and no LUT
// alpha and beta are f64 for f64 problems and f32 otherwise; bias may be null without ConvEpilogue::bias.
// beta == 0 never reads O (it may hold NaN).
struct ConvKernel {
  std::string ptx;
  std::vector<char> cubin;   // optional: machine code for the device, loaded instead of the PTX
  std::string main_name;
  std::string prepare_name;  // non-empty for CG > 1
  std::string transform_name;  // non-empty for WG=1 and WG=2: the filter's planes
  std::string input_transform_name;   // WG=2: the input's planes, before main (the batched GEMM)
  std::string output_transform_name;  // WG=2: the products back to pixels through the epilogue, after main
  bool overlaps_previous = false;  // main waits (griddepcontrol.wait) for prepare: may overlap it (sm_90)
  // main loops over the output's tiles (conv_tile_loop): launch conv_tile_loop_blocks blocks, not conv_grid's
  bool tile_loop = false;
  int threads = 0;
  int shared_bytes = 0;      // dynamic shared memory of the main kernel
  int helper_threads = 256;  // block size of prepare
  double emit_ms = 0;
};

struct ConvGrid {
  std::array<unsigned, 3> main{1, 1, 1};
  std::array<unsigned, 3> helper{1, 1, 1};  // prepare or transform, of ConvKernel::helper_threads
  std::array<unsigned, 3> input_transform{1, 1, 1}, output_transform{1, 1, 1};  // WG=2, of helper_threads
  std::size_t workspace_bytes = 0;          // WG=1: the transformed filter; WG=2: winograd_product's
};
ConvGrid conv_grid(const ir::Conv& problem, const ConvParams& p);

// TC=2 with an NHWC input and a KRSC filter: where the problem allows it, the Tensor Memory
// Accelerator copies both operands' tiles (one producer thread, or a producer warp of its own by
// GEMM's rule, tma_producer_warp), the input in im2col mode: a stage is U channels of one tap (r, s)
// for the block's PL consecutive output pixels, padding and pixels past the end read as zero, and no
// thread computes an address or reads the LUT. It allows it when C is a multiple of U, the input and
// filter are 16-byte aligned with strides of whole 16 bytes, the strides are at most 8, the
// window's corners (below) lie within [-128, 127], and the set is not a KL = 256 tile under a CG
// split (whose TMA kernel ptxas spills). Not a parameter: the same set copies with
// cp.async where TMA cannot, and the tuner's model knows the set, not the copy.
bool conv_tma(const ir::Conv& problem, const ConvParams& p);
// Whether a conv_tma kernel has a producer warp (its launch then has p.threads() + 32 threads).
bool conv_tma_producer_warp(const ir::Conv& problem, const ConvParams& p);
// The stages of a conv_tma kernel's ring: GEMM's deep pipeline (fit_gemm_pipeline_depth) where its
// rule holds on the implicit GEMM, the grid (tiles x CG) fitting on the H100's SMs one block each:
// the most, up to gemm_max_stages and the block's stages, within gemm_deep_pipeline_bytes, where that
// is at least 8 (fewer were slower than four on the H200: docs/conv.md, "Deep pipelines"). 0 (four
// stages) elsewhere. Not a parameter, as for GEMM: the tuner's model knows the set, and the kernel
// deepens its ring where the grid leaves SMs with one block each, whose copies a ring of four leaves
// waiting.
int conv_pipeline_stages(const ir::Conv& problem, const ConvParams& p);
// A conv_tma kernel with staged stores and no CG split whose grid would give each block two tiles or
// more (at the occupancy estimated from its footprint and registers) runs as a tile loop, as GEMM's
// (gemm_tile_loop, with its caps: at most gemm_tile_loop_max_k_tiles K tiles, gemm_tile_loop_max_cells
// accumulators a thread, gemm_tile_loop_max_rows pixels a tile): each block computes tile after tile,
// its producer warp copying the next tile's operands while the consumers stage and store this one's
// output, in shared memory of its own after the ring (conv_kernel_shared_bytes). No ping-pong: two
// groups' f32 stagings of 128 x 128 tiles beside a ring of four stages exceed the shared memory.
bool conv_tile_loop(const ir::Conv& problem, const ConvParams& p, const DeviceLimits& device = {});
// A tile loop's grid is (conv_tile_loop_blocks, 1, 1): as many blocks as the device holds at once
// (`resident`), at most the tiles; block x runs tiles x, x + nctaid.x, ..., in conv_grid's order.
unsigned conv_tile_loop_blocks(const ir::Conv& problem, const ConvParams& p, std::int64_t resident);

// 16-bit tensor-core kernels (TC=1 and 2) without warp groups splitting a stage (CL = 1), on an
// output whose runs of 8 elements along its contiguous axis are contiguous and keep its alignment
// (NHWC with K a multiple of 8; CHWN and NCHW where the pixels pack in eights), stage their results
// in shared memory once the main loop is over, and write the output in those runs: one 16-byte store
// where the run is whole and the output 16-byte aligned, element stores elsewhere. On sm_90, where
// beta = 0 and under a CG split, the staging holds the finished 16-bit values (bias and relu applied,
// written by stmatrix); otherwise alpha x the sum in f32, with beta, the bias and relu applied on the
// way out. Either way each result is rounded once. Under a CG split, one vector reduction per run
// (element reductions elsewhere). Not a parameter. conv_staging_bytes: the staging's shared memory
// (0 without it; the f32 staging's, which the 16-bit one fits in), which the kernel's takes the larger
// of with the tiles'.
bool conv_staged_stores(const ir::Conv& problem, const ConvParams& p);
int conv_staging_bytes(const ir::Conv& problem, const ConvParams& p);

// TMA kernels with staged stores, no CG split and KL a multiple of 64, on an output that is one
// [N*P*Q][K] matrix (filters contiguous, K a multiple of 8, every pixel the same 16-byte multiple of
// elements after the one before) declared 16-byte aligned: TMA writes the staged tile to O (ConvTensorMaps' output map),
// and where beta != 0 first copies O's tile into the staging. The staging is the output's 16-bit
// values, in boxes of 64 filters x PL pixels swizzled as TMA's 128-byte mode expects; the SM neither
// reads it back nor issues the stores. Not a parameter.
bool conv_stores_by_tma(const ir::Conv& problem, const ConvParams& p);

// conv_tma: the two tensor maps a launch builds for its pointers (runtime/tensor_map.hpp), in elements
// except the strides (bytes).
//  - the input, im2col: dims (C, W, H, N); a copy brings `channels` (U) channels of `pixels` (PL)
//    pixels whose windows start within lower_corner (-pad) to the far edge plus upper_corner, (w, h)
//    each, stepping by the convolution's strides;
//  - the filter, tiled: dims (C, S, R, K), box (U, 1, 1, KL).
// Both land in wgmma's swizzled rows of 2U bytes. Where conv_stores_by_tma holds, a third:
//  - the output, tiled: dims (K, N*P*Q, 1), box (64, PL, 1), 128-byte swizzle.
struct ConvTensorMaps {
  std::array<std::uint64_t, 4> input_dims{};
  std::array<std::uint64_t, 3> input_strides{};
  std::array<int, 2> lower_corner{}, upper_corner{};
  std::uint32_t channels = 0, pixels = 0;
  std::array<std::uint32_t, 4> element_strides{};
  std::array<std::uint64_t, 4> filter_dims{};
  std::array<std::uint64_t, 3> filter_strides{};
  std::array<std::uint32_t, 4> filter_box{};
  int swizzle_bytes = 0;
  std::array<std::uint64_t, 3> output_dims{};
  std::array<std::uint64_t, 2> output_strides{};
  std::array<std::uint32_t, 3> output_box{};
};
ConvTensorMaps conv_tensor_maps(const ir::Conv& problem, const ConvParams& p);

// WG=2: the batched GEMM over the planes, and where its operands lie in the workspace (byte offsets):
// A is the input's planes V (tiles x C, tiles contiguous), B the filter's U (C x K, filters
// contiguous), C the products M (tiles x K, tiles contiguous); a batch entry per plane. Kernel
// arguments for WG=2, in this order:
//   transform:         (U*, F*)                          grid helper
//   input_transform:   (V*, I*)                          grid input_transform
//   main:              GEMM's main kernel (lower/gemm.hpp) on M = V U, alpha 1, beta 0
//   output_transform:  (O*, M*, bias*, alpha, beta)      grid output_transform
struct WinogradProduct {
  ir::Gemm gemm;
  GemmParams params;
  std::size_t filter_offset = 0, input_offset = 0, product_offset = 0, workspace_bytes = 0;
};
WinogradProduct winograd_product(const ir::Conv& problem, const ConvParams& p);

// Emits the kernels for this problem. Throws InvalidArgument, with check_conv's reason, when the
// parameters are illegal for it.
ConvKernel emit_conv(const ir::Conv& problem, const ConvParams& p, const Target& target,
                     const ConvEpilogue& epilogue = {});

// Every legal parameter set of the template's search space for this problem (what the brute-force
// sweep samples from).
std::vector<ConvParams> conv_space(const ir::Conv& problem, const ConvEpilogue& epilogue = {},
                                   const DeviceLimits& device = {});

// Every legal WG=1 (Winograd) set of its search space, for problems it applies to (stride and
// dilation 1, 2 <= R, S <= 5, f32 or f64): none otherwise. Apart from conv_space, so that the direct
// kernels' uniform draws stay as they were; the model search ranks both.
// WG=2 sets are in winograd_product_space, which the shipped models have not seen.
std::vector<ConvParams> winograd_space(const ir::Conv& problem, const ConvEpilogue& epilogue = {},
                                       const DeviceLimits& device = {});

// Every legal WG=2 set of its search space (tiles, thread tiles, U, CL and DB as GEMM's space lists
// them, loads as wide as the workspace allows), for problems it applies to: none otherwise.
std::vector<ConvParams> winograd_product_space(const ir::Conv& problem, const ConvEpilogue& epilogue = {},
                                               const DeviceLimits& device = {});

// Sets LI and LF as conv_space does: the most threads side by side along each tile's contiguous axis.
void fit_conv_load_layouts(const ir::Conv& problem, ConvParams& p);

// Why `p` is not in conv_space(problem, epilogue, device) (a value off its lists, LI/LF not as
// fit_conv_load_layouts sets them, or illegal), or nothing when it is.
std::optional<std::string> outside_conv_space(const ir::Conv& problem, const ConvParams& p,
                                              const ConvEpilogue& epilogue = {}, const DeviceLimits& device = {});

// Useful flops (2 * N*P*Q * K * C*R*S) of a problem.
double conv_flops(const ir::Conv& problem);

}  // namespace isaac::lower
