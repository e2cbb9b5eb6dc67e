// The CONV template's emitter: implicit GEMM with a look-up table of reduction offsets, as LLVM IR
// through NVPTX to PTX.
//
// The structure is the GEMM template's (gemm_emitter.cpp), with the input as A (pixels x reduction)
// and the filter as B (reduction x filters): block (bp, bk, cz) computes a PL x KL tile of output
// pixels x filters over its share of C*R*S, staging U-deep slices of both operands in shared memory
// (double-buffered when DB=1), and CL warp groups split each stage. What differs is the input load:
// each thread knows, for each pixel it loads, the pixel's base offset and (h0, w0) = (p*stride_h -
// pad_h, q*stride_w - pad_w); per reduction index j it reads the LUT entry {offset, dh, dw} and
// selects zero where h0 + dh or w0 + dw leaves the image (padding, and the LUT's tail padding).
// Every extent and stride is an immediate: the kernel is specialised for one problem.
#include "lower/conv_layout.hpp"
#include "lower/kernel_builder.hpp"
#include "lower/nvptx_backend.hpp"
#include "lower/winograd_layout.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/conv.hpp>

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <fmt/format.h>

#include <chrono>
#include <functional>

namespace isaac::lower {

namespace {

using llvm::Value;

class ConvEmitter : public TiledKernelBuilder {
 public:
  ConvEmitter(llvm::Module& module, const ir::Conv& v, const ConvParams& p, const ConvEpilogue& epilogue, int sm)
      : TiledKernelBuilder(module, v.dtype, conv_kernel_tiling(v, p), conv_input_reduction_contiguous(v),
                           conv_filter_k_contiguous(v), false, sm),
        v_(v),
        p_(p),
        in_red_(conv_input_reduction_contiguous(v)),
        f_k_(conv_filter_k_contiguous(v)),
        epi_(epilogue) {
    npq_ = v.n * v.p * v.q;
    crs_ = v.c * v.r * v.s;
    fj_ = v.filter_layout == ir::FilterLayout::krsc ? v.filter_strides[1] : v.filter_strides[3];
    producer_warp_ = conv_tma_producer_warp(v, p);
    tile_loop_ = conv_tile_loop(v, p);
    stores_by_tma_ = conv_stores_by_tma(v, p);
    tiles_n_ = (v.k + g_.nl - 1) / g_.nl;
  }

  std::string name() const {
    return fmt::format("isaac_conv_{}_{}_{}", ir::name(v_.dtype), ir::name(v_.input_layout), ir::name(v_.filter_layout));
  }

  void emit_main();
  void emit_prepare();

 private:
  // Pixel index -> (n, p, q): n fastest for CHWN (its contiguous axis), q fastest otherwise.
  struct Pixel {
    Value *n, *p, *q;
  };
  Pixel decompose(Value* pixel);
  // The output offset (elements) of pixel part / filter part.
  Value* output_pixel_offset(const Pixel& px);

  // A global address and whether it holds data (null: always).
  struct Address {
    Value *ptr, *valid;
  };
  // Where an output pixel's window starts in the input: its base offset and (h0, w0).
  struct PixelOrigin {
    Value *base, *h0, *w0;
  };
  PixelOrigin pixel_origin(Value* pixel);
  // The input tap of a pixel at LUT entry `entry`, pointing at the input's first element where it
  // lies outside the image or, given reduction index `j`, past k_end.
  Address input_tap(const PixelOrigin& origin, Value* entry, Value* j = nullptr);
  Address input_address(size_t slot, Value* k0, bool predicated);
  Address filter_address(size_t slot, Value* k0, bool predicated);
  void load_tile(Value* tile, bool predicated) override;
  void copy_tile_async(Value* tile, Value* buffer, bool predicated) override;
  void copy_tile_tma(Value* tile, Value* buffer, Value* barrier) override;
  int barriers_offset() const override { return conv_barriers_offset(v_, p_, t_, tile_loop_); }
  Value* tile_count() override { return c32((npq_ + g_.ml - 1) / g_.ml * tiles_n_); }
  // The block's tile (bm_, bn_) and, with TMA, where its first pixel's window starts.
  void enter_tile(Value* tile) override;
  void place_tile(Value* tile);
  void place_window();
  void recompute_nan_cells() override;
  void epilogue() override;
  void staged_epilogue(Value* m0, Value* n0);
  void staged_epilogue_tensor(Value* m0, Value* n0);
  void init_epilogue_barriers() override;
  void finish_tile_stores() override;
  // The staged epilogue with a 16-bit staging of finished values (`sixteen_bit`) or an f32 one.
  void store_staged_runs(Value* m0, Value* n0, bool sixteen_bit);
  // The output element of pixel m and filter k, both clamped to the last: always a valid address.
  Value* output_ptr(Value* m, Value* k);
  // The bias of filter k (clamped to the last), in the arithmetic type; `value` plus `bias` (where not
  // null), then relu where the epilogue asks for it.
  Value* bias_at(Value* k) {
    return to_scalar(b_.CreateAlignedLoad(elem_, gep(elem_, bias_, b_.CreateZExt(min32(k, c32(v_.k - 1)), i64_)),
                                          llvm::Align(l_.elem)));
  }
  Value* with_bias_and_relu(Value* value, Value* bias) {
    if (bias) value = b_.CreateFAdd(value, bias);
    if (epi_.relu) value = b_.CreateSelect(b_.CreateFCmpOGT(value, zero(scalar_)), value, zero(scalar_));
    return value;
  }

  const ir::Conv& v_;
  ConvParams p_;
  const GemmParams& g_ = t_;  // the tiling in GEMM terms
  bool in_red_, f_k_;
  ConvEpilogue epi_;
  std::int64_t npq_, crs_, fj_;
  std::int64_t tiles_n_;  // the filter tiles

  Value *O_, *I_, *F_, *LUT_, *bias_, *alpha_, *beta_;
  // TMA: the tensor maps' generic addresses, and where the window of the block's first pixel starts
  // (its image, and its first tap's row and column before the filter offsets).
  Value *input_map_ = nullptr, *filter_map_ = nullptr, *output_map_ = nullptr;
  bool stores_by_tma_ = false;  // conv_stores_by_tma
  Value *window_n_ = nullptr, *window_h_ = nullptr, *window_w_ = nullptr;
  Value *bm_, *bn_, *kz_;
  std::vector<PixelOrigin> a_origin_;  // per input slot
  std::vector<Value*> a_k_;
  std::vector<Value*> b_offset_, b_k_;              // per filter slot
};

ConvEmitter::Pixel ConvEmitter::decompose(Value* pixel) {
  auto [n, p, q] = split_image_index(pixel, v_.input_layout == ir::ImageLayout::chwn, v_.n, v_.p, v_.q);
  return {n, p, q};
}

Value* ConvEmitter::output_pixel_offset(const Pixel& px) {
  const auto& os = v_.output_strides;
  auto term = [&](Value* x, std::int64_t stride) { return b_.CreateMul(b_.CreateZExt(x, i64_), c64(stride)); };
  return b_.CreateAdd(term(px.n, os[0]), b_.CreateAdd(term(px.p, os[2]), term(px.q, os[3])));
}

ConvEmitter::PixelOrigin ConvEmitter::pixel_origin(Value* pixel) {
  const auto& is = v_.input_strides;
  Pixel px = decompose(pixel);
  Value* h0 = b_.CreateSub(b_.CreateMul(px.p, c32(v_.stride_h)), c32(v_.pad_h));
  Value* w0 = b_.CreateSub(b_.CreateMul(px.q, c32(v_.stride_w)), c32(v_.pad_w));
  Value* base = b_.CreateAdd(b_.CreateMul(px.n, c32(is[0])),
                             b_.CreateAdd(b_.CreateMul(h0, c32(is[2])), b_.CreateMul(w0, c32(is[3]))));
  return {base, h0, w0};
}

// The LUT entry gives the tap's offset and (dh, dw); taps outside the image (padding, and the
// LUT's tail padding) are not `inside`.
ConvEmitter::Address ConvEmitter::input_tap(const PixelOrigin& origin, Value* entry, Value* j) {
  Value* h = b_.CreateAdd(origin.h0, b_.CreateExtractElement(entry, c32(1)));
  Value* w = b_.CreateAdd(origin.w0, b_.CreateExtractElement(entry, c32(2)));
  Value* inside = b_.CreateAnd(b_.CreateICmpULT(h, c32(v_.h)), b_.CreateICmpULT(w, c32(v_.w)));
  if (j) inside = b_.CreateAnd(inside, b_.CreateICmpSLT(j, k_end_));
  Value* offset = b_.CreateSelect(inside, b_.CreateAdd(origin.base, b_.CreateExtractElement(entry, c32(0))), c32(0));
  return {gep(elem_, I_, b_.CreateZExt(offset, i64_)), inside};
}

// Input slot `s` at reduction index j, not inside past k_end where `predicated`.
ConvEmitter::Address ConvEmitter::input_address(size_t s, Value* k0, bool predicated) {
  auto* lut_type = llvm::FixedVectorType::get(i32_, 4);
  Value* j = b_.CreateAdd(k0, a_k_[s]);
  Value* entry = b_.CreateAlignedLoad(lut_type, gep(lut_type, LUT_, j), llvm::Align(16));
  return input_tap(a_origin_[s], entry, predicated ? j : nullptr);
}

// Filter slot `s`: a strided matrix over (j, k), j clamped to k_begin past k_end where `predicated`.
ConvEmitter::Address ConvEmitter::filter_address(size_t s, Value* k0, bool predicated) {
  Value* k = b_.CreateAdd(k0, b_k_[s]);
  Value* in_range = nullptr;
  if (predicated) {
    in_range = b_.CreateICmpSLT(k, k_end_);
    k = b_.CreateSelect(in_range, k, k_begin_);
  }
  Value* k_offset = b_.CreateSExt(k, i64_);
  if (f_k_) k_offset = b_.CreateMul(k_offset, c64(fj_));
  return {gep(elem_, F_, b_.CreateAdd(b_offset_[s], k_offset)), in_range};
}

// Loads stage `tile` of this block's reduction range into the prefetch registers. The input goes
// through the LUT with its padding mask; `predicated` also zeroes what lies past k_end.
void ConvEmitter::load_tile(Value* tile, bool predicated) {
  Value* k0 = b_.CreateAdd(k_begin_, b_.CreateMul(tile, c32(g_.u)));
  llvm::Type* in_type = vec(elem_, p_.vi);
  for (size_t s = 0; s < a_origin_.size(); ++s) {
    Address a = input_address(s, k0, predicated);
    Value* value = b_.CreateAlignedLoad(in_type, a.ptr, llvm::Align(p_.vi * l_.elem));
    b_.CreateStore(b_.CreateSelect(a.valid, value, zero(in_type)), pre_a_[s]);
  }
  llvm::Type* f_type = vec(elem_, p_.vf);
  for (size_t s = 0; s < b_offset_.size(); ++s) {
    Address f = filter_address(s, k0, predicated);
    Value* value = b_.CreateAlignedLoad(f_type, f.ptr, llvm::Align(p_.vf * l_.elem));
    if (predicated) value = b_.CreateSelect(f.valid, value, zero(f_type));
    b_.CreateStore(value, pre_b_[s]);
  }
}

// TC=1: each slot's vector goes straight to its place in the shared tile, as in the GEMM template;
// padding taps and what lies past k_end are zero-filled by the copy. Vectors under 4 bytes (single
// f16 elements) are loaded and stored by the thread. TC=2: each vector is a 16-byte chunk of a
// swizzled row (wgmma_offset), as in the GEMM template.
void ConvEmitter::copy_tile_async(Value* tile, Value* buffer, bool predicated) {
  Value* k0 = b_.CreateAdd(k_begin_, b_.CreateMul(tile, c32(g_.u)));
  auto copy = [&](const std::vector<LoadSlot>& slots, int along, int vector, int region, int stage_size, int pitch,
                  bool k_contiguous, int width, const std::function<Address(size_t)>& address) {
    auto [lane, row] = load_position(along, vector);
    Value* base = b_.CreateAdd(c32(region), b_.CreateMul(buffer, c32(stage_size)));
    const int bytes = vector * l_.elem;
    for (size_t s = 0; s < slots.size(); ++s) {
      Value* c = b_.CreateAdd(c32(slots[s].c), lane);
      Value* r = b_.CreateAdd(c32(slots[s].o), row);
      Value* index = b_.CreateAdd(base, stage_offset(r, c, pitch, k_contiguous, width));
      Address a = address(s);
      if (bytes < 4) {
        Value* value = b_.CreateAlignedLoad(elem_, a.ptr, llvm::Align(l_.elem));
        if (a.valid) value = b_.CreateSelect(a.valid, value, zero(elem_));
        b_.CreateAlignedStore(value, gep(elem_, smem_, index), llvm::Align(l_.elem));
        continue;
      }
      Value* source_bytes = a.valid ? b_.CreateSelect(a.valid, c32(bytes), c32(0)) : c32(bytes);
      async_copy(b_.CreatePtrToInt(gep(elem_, smem_, index), i64_), a.ptr, bytes, source_bytes);
    }
  };
  copy(slots_a_, g_.la, g_.va, 0, l_.stage_a, l_.pitch_a, in_red_, wgmma_width(in_red_, 64),
       [&](size_t s) { return input_address(s, k0, predicated); });
  copy(slots_b_, g_.lb, g_.vb, l_.stages * l_.stage_a, l_.stage_b, l_.pitch_b, !f_k_, wgmma_width(!f_k_, 16 * g_.ns),
       [&](size_t s) { return filter_address(s, k0, predicated); });
}

// TMA (conv_tma): C is a multiple of U, so stage j0 = k_begin + tile * U is U channels from c0 of
// one tap (r, s). The input's copy brings those channels of the block's PL pixels, each pixel's
// window moved by the tap's offsets (s * dilation_w, r * dilation_h); the filter's those channels of
// tap (r, s) of the block's KL filters. Both are one box of U x tile in wgmma's swizzled rows.
void ConvEmitter::copy_tile_tma(Value* tile, Value* buffer, Value* barrier) {
  Value* j0 = b_.CreateAdd(k_begin_, b_.CreateMul(tile, c32(g_.u)));
  Value* tap = b_.CreateUDiv(j0, c32(v_.c));
  Value* c0 = b_.CreateSub(j0, b_.CreateMul(tap, c32(v_.c)));
  Value* r = b_.CreateUDiv(tap, c32(v_.s));
  Value* s = b_.CreateSub(tap, b_.CreateMul(r, c32(v_.s)));
  auto stage_address = [&](int region, int stage_size) {
    Value* bytes = b_.CreateMul(b_.CreateAdd(c32(region), b_.CreateMul(buffer, c32(stage_size))), c32(l_.elem));
    return b_.CreatePtrToInt(gep(b_.getInt8Ty(), smem_, bytes), i32_);
  };
  auto offset = [&](Value* x, std::int64_t dilation) { return b_.CreateTrunc(b_.CreateMul(x, c32(dilation)), b_.getInt16Ty()); };
  tensor_copy_im2col(stage_address(0, l_.stage_a), input_map_, {c0, window_w_, window_h_, window_n_},
                     {offset(s, v_.dilation_w), offset(r, v_.dilation_h)}, barrier);
  tensor_copy(stage_address(l_.stages * l_.stage_a, l_.stage_b), filter_map_, {c0, s, r, b_.CreateMul(bn_, c32(g_.nl))},
              barrier);
}

// f32 on tensor cores (TC=1): the cells that come out NaN are computed again with FMA
// (TiledKernelBuilder::recompute_nan_cells_with), each input element through the LUT as load_tile
// reads it, with the cells' pixels and filters clamped to the last (cells past the edge are never
// stored).
void ConvEmitter::recompute_nan_cells() {
  if (p_.tc != 1 || v_.dtype != ir::DType::f32) return;
  recompute_nan_cells_with([&] {
    std::vector<PixelOrigin> origins;
    std::vector<Value*> filter_offset;
    for (int i = 0; i < cell_rows(); ++i)
      origins.push_back(pixel_origin(min32(b_.CreateAdd(b_.CreateMul(bm_, c32(g_.ml)), cell_row(i)), c32(npq_ - 1))));
    for (int j = 0; j < cell_columns(); ++j) {
      Value* k = b_.CreateSExt(min32(b_.CreateAdd(b_.CreateMul(bn_, c32(g_.nl)), cell_column(j)), c32(v_.k - 1)), i64_);
      filter_offset.push_back(f_k_ ? k : b_.CreateMul(k, c64(v_.filter_strides[0])));
    }
    return [this, origins, filter_offset](Value* j) {
      auto* lut_type = llvm::FixedVectorType::get(i32_, 4);
      Value* entry = b_.CreateAlignedLoad(lut_type, gep(lut_type, LUT_, j), llvm::Align(16));
      CellOperands out;
      for (const PixelOrigin& origin : origins) {
        Address a = input_tap(origin, entry);
        out.rows.push_back(b_.CreateSelect(a.valid, b_.CreateLoad(elem_, a.ptr), zero(elem_)));
      }
      Value* j_offset = b_.CreateSExt(j, i64_);
      if (f_k_) j_offset = b_.CreateMul(j_offset, c64(fj_));
      for (Value* f : filter_offset) out.columns.push_back(b_.CreateLoad(elem_, gep(elem_, F_, b_.CreateAdd(f, j_offset))));
      return out;
    };
  });
}

void ConvEmitter::enter_tile(Value* tile) {
  place_tile(tile);
  place_window();
}

// Consecutive tiles are consecutive filter tiles of one pixel tile: their blocks share its input in L2.
void ConvEmitter::place_tile(Value* tile) {
  bm_ = b_.CreateUDiv(tile, c32(tiles_n_));
  bn_ = b_.CreateURem(tile, c32(tiles_n_));
}

void ConvEmitter::place_window() {
  Pixel first = decompose(b_.CreateMul(bm_, c32(g_.ml)));
  window_n_ = first.n;
  window_h_ = b_.CreateSub(b_.CreateMul(first.p, c32(v_.stride_h)), c32(v_.pad_h));
  window_w_ = b_.CreateSub(b_.CreateMul(first.q, c32(v_.stride_w)), c32(v_.pad_w));
}

Value* ConvEmitter::output_ptr(Value* m, Value* k) {
  Value* offset = b_.CreateAdd(output_pixel_offset(decompose(min32(m, c32(npq_ - 1)))),
                               b_.CreateMul(b_.CreateZExt(min32(k, c32(v_.k - 1)), i64_), c64(v_.output_strides[1])));
  return gep(elem_, O_, offset);
}

// 16-bit tensor-core tiles on an output whose runs of 8 are contiguous (conv_staged_stores). A
// thread's mma and wgmma cells pair two filters of one pixel, scattered over O: as 2-byte stores, a
// warp's store covered a few bytes of each of eight pixels. The cells go through shared memory
// instead, along O's contiguous axis, and come back as runs of 8 elements: a whole run in an aligned
// O is one 16-byte store (beta's old values one 16-byte load), a partial run at the tile's edge, or
// any run of an O that is not 16-byte aligned, eight element stores. Under a CG split the runs are
// added to O instead: one vector reduction (sm_90; four f16x2 ones before) in place of eight 2-byte
// ones. Each result is rounded once:
//  - on sm_90, where beta = 0 or under a split, the cells are staged as the output's values (bias and
//    relu applied, rounded to 16 bits) by stmatrix: half the f32 staging's bytes in an eighth of its
//    store instructions. The f32 staging was the busiest unit of the CONV tile loops on ResNet-50's
//    1 x 1 layers (L1/shared memory 75% against DRAM 25%, Nsight Compute, H200);
//  - otherwise as alpha x the sum in f32, with beta, the bias and relu applied on the way out.
void ConvEmitter::staged_epilogue(Value* m0, Value* n0) {
  if (stores_by_tma_) return staged_epilogue_tensor(m0, n0);
  if (sm_ < 90) return store_staged_runs(m0, n0, false);
  if (p_.cg > 1) return store_staged_runs(m0, n0, true);
  if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { store_staged_runs(m0, n0, true); },
          [&] { store_staged_runs(m0, n0, false); });
}

// conv_stores_by_tma: the tile is staged as the output's values in boxes of 64 filters (128 bytes) x
// PL pixels, each pixel's 16-byte runs swizzled as TMA's 128-byte mode expects (run r of pixel m at r
// XOR m mod 8, which also puts a matrix's 8 pixels on distinct banks). Where beta != 0, TMA first
// copies O's tile there and ldmatrix hands each thread its cells' old values. One thread then hands the
// boxes to TMA, which writes what lies inside O. The SM neither reads the staging back nor issues the
// stores, and holds no addresses of O: GEMM's TMA stores (GemmEmitter::staged_epilogue_tensor), along
// the filters. A tile loop's staging has memory of its own, its O mbarrier was initialised with the
// stages' and its phase is the parity of the tiles done.
void ConvEmitter::staged_epilogue_tensor(Value* m0, Value* n0) {
  const int box_bytes = 128 * p_.pl, staging = tile_loop_ ? conv_loop_staging_offset(v_, p_, t_) : 0;
  Value* smem = b_.CreatePtrToInt(smem_, i32_);
  auto boxes = [&](const std::function<void(Value* filter, Value* box_address)>& f) {
    for (int box = 0; box < p_.kl / 64; ++box) f(b_.CreateAdd(n0, c32(64 * box)), b_.CreateAdd(smem, c32(staging + box * box_bytes)));
  };
  auto offset = [&](Value* row, Value* column) {  // row: the pixel, column: the first of 8 filters
    Value* box = b_.CreateLShr(column, c32(6));
    Value* run = b_.CreateAnd(b_.CreateLShr(column, c32(3)), c32(7));
    Value* swizzled = b_.CreateXor(run, b_.CreateAnd(row, c32(7)));
    return b_.CreateAdd(c32(staging), b_.CreateAdd(b_.CreateAdd(b_.CreateMul(box, c32(box_bytes)), b_.CreateMul(row, c32(128))),
                                                   b_.CreateMul(swizzled, c32(16))));
  };
  auto value = [&](int i, int j, Value* old) {
    Value* result = b_.CreateFMul(alpha_, b_.CreateLoad(acc_, acc_cells_[std::size_t(i * cell_columns() + j)]));
    if (old) result = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {beta_, to_scalar(old), result});
    return with_bias_and_relu(result, epi_.bias ? bias_at(b_.CreateAdd(n0, cell_column(j))) : nullptr);
  };
  Value* leader = b_.CreateICmpEQ(tid_, c32(0));
  // A tile loop's leader waits for its last tile's stores to have read the staging here, not after
  // issuing them: its warp group's next wgmma need not wait for it.
  if (tile_loop_) if_then(leader, [&] { ptx_statement("cp.async.bulk.wait_group.read 0;", "", {}); });
  // Every warp is done with the pipeline's buffers (in a tile loop: TMA has read the last tile's staging).
  barrier();
  // beta = 0 must not read O: it may hold NaNs.
  if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { stage_matrices(false, offset, false, value); },
          [&] {
            Value* loaded = b_.CreateAdd(smem, c32(conv_output_barrier_offset(v_, p_, t_, tile_loop_)));
            if_then(leader, [&] {
              if (!tile_loop_) {
                mbarrier_init(loaded, 1);
                ptx_statement("fence.mbarrier_init.release.cluster;", "", {});
              }
              mbarrier_expect_bytes(loaded, p_.pl * p_.kl * l_.elem);
              boxes([&](Value* k, Value* address) { tensor_copy(address, output_map_, {k, m0, c32(0)}, loaded); });
            });
            if (tile_loop_) {
              mbarrier_wait(loaded, b_.CreateLoad(i32_, tile_parity_));
            } else {
              barrier();  // the mbarrier is initialised
              mbarrier_wait(loaded, c32(0));
            }
            stage_matrices(false, offset, true, value);
          });
  // The stmatrix writes are the generic proxy's, the tensor store reads through the async proxy.
  ptx_statement("fence.proxy.async.shared::cta;", "", {});
  barrier();
  if_then(leader, [&] {
    boxes([&](Value* k, Value* address) {
      ptx_statement("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$0, {$1, $2, $3}], [$4];", "l,r,r,r,r",
                    {output_map_, k, m0, c32(0), address});
    });
    ptx_statement("cp.async.bulk.commit_group;", "", {});
    // Shared memory must outlive the copies' reads of it: it is freed when the block ends.
    if (!tile_loop_) ptx_statement("cp.async.bulk.wait_group.read 0;", "", {});
  });
}

void ConvEmitter::init_epilogue_barriers() {
  if (tile_loop_ && stores_by_tma_) mbarrier_init(b_.CreateAdd(b_.CreatePtrToInt(smem_, i32_), c32(conv_output_barrier_offset(v_, p_, t_, true))), 1);
}

void ConvEmitter::finish_tile_stores() {
  if (stores_by_tma_) ptx_statement("cp.async.bulk.wait_group.read 0;", "", {});
}

void ConvEmitter::store_staged_runs(Value* m0, Value* n0, bool sixteen_bit) {
  const bool along_filters = conv_stages_along_filters(v_);
  const int staged_bytes = sixteen_bit ? 2 : 4;
  // The runs for_each_staged_run reads back: 16 bytes of the output.
  const int pitch = conv_staging_pitch(v_, p_, staged_bytes), width = 16 / l_.elem;
  // A tile loop's staging lies after the ring, which fills with the next tile's operands meanwhile.
  const int first = tile_loop_ ? conv_loop_staging_offset(v_, p_, t_) : 0;  // bytes
  auto index = [&](Value* row, Value* column) {
    return along_filters ? b_.CreateAdd(b_.CreateMul(row, c32(pitch)), column)
                         : b_.CreateAdd(b_.CreateMul(column, c32(pitch)), row);
  };
  // A split's parts get neither: the prepare kernel put beta * O + bias in O.
  const bool finish_staged = sixteen_bit && p_.cg == 1, finish_read = !sixteen_bit && p_.cg == 1;
  barrier();  // every warp is done with the pipeline's buffers (a tile loop: with the last tile's staging)
  if (sixteen_bit) {
    stage_matrices(!along_filters, [&](Value* row, Value* column) {
      return b_.CreateAdd(c32(first), b_.CreateMul(index(row, column), c32(2)));
    }, false, [&](int i, int j, Value*) {
      Value* value = b_.CreateFMul(alpha_, b_.CreateLoad(acc_, acc_cells_[std::size_t(i * cell_columns() + j)]));
      if (!finish_staged) return value;
      return with_bias_and_relu(value, epi_.bias ? bias_at(b_.CreateAdd(n0, cell_column(j))) : nullptr);
    });
  } else {
    stage_scaled_cells(alpha_, [&](Value* row, Value* column) { return b_.CreateAdd(c32(first / 4), index(row, column)); });
  }
  barrier();

  Value* o_aligned = b_.CreateICmpEQ(b_.CreateURem(b_.CreatePtrToInt(O_, i64_), c64(16)), c64(0));
  // beta = 0 must not read O: it may hold NaNs.
  Value* read_o = sixteen_bit ? b_.getFalse() : b_.CreateFCmpUNE(beta_, llvm::ConstantFP::get(scalar_, 0.0));
  auto result = [&](Value* staged, Value* old, Value* bias) {
    if (!finish_read) return to_elem(staged);
    Value* value = staged;
    if (old) value = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {beta_, to_scalar(old), value});
    return to_elem(with_bias_and_relu(value, bias));
  };
  const bool read_bias = finish_read && epi_.bias;
  for_each_staged_run(first / staged_bytes, pitch, along_filters, sixteen_bit ? elem_ : acc_,
                      [&](Value* staged, Value* row, Value* column, Value* in_tile) {
    Value* m = b_.CreateAdd(m0, row);
    Value* n = b_.CreateAdd(n0, column);
    auto element = [&](int e) {
      return along_filters ? std::pair{m, b_.CreateAdd(n, c32(e))} : std::pair{b_.CreateAdd(m, c32(e)), n};
    };
    auto [m_last, n_last] = element(width - 1);
    Value* whole = b_.CreateAnd(in_tile, b_.CreateAnd(b_.CreateICmpULT(m_last, c32(npq_)), b_.CreateICmpULT(n_last, c32(v_.k))));
    auto vector_store = [&](bool with_o) {
      Value* ptr = output_ptr(m, n);
      Value* old = with_o ? b_.CreateAlignedLoad(vec(elem_, width), ptr, llvm::Align(16)) : nullptr;
      Value* run_bias = read_bias && !along_filters ? bias_at(n) : nullptr;
      std::vector<Value*> values;
      for (int e = 0; e < width; ++e) {
        Value* bias = read_bias ? (along_filters ? bias_at(element(e).second) : run_bias) : nullptr;
        values.push_back(result(b_.CreateExtractElement(staged, c32(e)), old ? b_.CreateExtractElement(old, c32(e)) : nullptr, bias));
      }
      predicated_vector_store(ptr, values, b_.getTrue());
    };
    auto element_ok = [&](int e) {
      auto [me, ne] = element(e);
      return b_.CreateAnd(in_tile, b_.CreateAnd(b_.CreateICmpULT(me, c32(npq_)), b_.CreateICmpULT(ne, c32(v_.k))));
    };
    auto element_stores = [&](bool with_o) {
      for (int e = 0; e < width; ++e) {
        auto [me, ne] = element(e);
        Value* ptr = output_ptr(me, ne);
        Value* old = with_o ? b_.CreateAlignedLoad(elem_, ptr, llvm::Align(l_.elem)) : nullptr;
        predicated("st", ptr, result(b_.CreateExtractElement(staged, c32(e)), old, read_bias ? bias_at(ne) : nullptr),
                   element_ok(e));
      }
    };
    if (p_.cg > 1) {  // O holds beta * O + bias already (the prepare kernel): add the block's part
      auto part = [&](int e) { return to_elem(b_.CreateExtractElement(staged, c32(e))); };
      if_else(
          b_.CreateAnd(o_aligned, whole),
          [&] {
            std::vector<Value*> values;
            for (int e = 0; e < width; ++e) values.push_back(part(e));
            predicated_vector_red(output_ptr(m, n), values, b_.getTrue(), sm_);
          },
          [&] {
            for (int e = 0; e < width; ++e) {
              auto [me, ne] = element(e);
              predicated("red", output_ptr(me, ne), part(e), element_ok(e));
            }
          });
      return;
    }
    if_else(b_.CreateAnd(o_aligned, whole),
            [&] { if_else(read_o, [&] { vector_store(true); }, [&] { vector_store(false); }); },
            [&] { if_else(read_o, [&] { element_stores(true); }, [&] { element_stores(false); }); });
  });
}

void ConvEmitter::epilogue() {
  Value* m0 = b_.CreateMul(bm_, c32(g_.ml));
  Value* n0 = b_.CreateMul(bn_, c32(g_.nl));
  if (conv_staged_stores(v_, p_)) return staged_epilogue(m0, n0);
  // Per pixel of the thread's cells: its output offset and whether it exists; per filter likewise.
  const int rows = cell_rows(), columns = cell_columns();
  std::vector<Value*> pixel_offset, pixel_ok, filter, filter_ok;
  for (int i = 0; i < rows; ++i) {
    Value* m = b_.CreateAdd(m0, cell_row(i));
    pixel_ok.push_back(b_.CreateICmpULT(m, c32(npq_)));
    pixel_offset.push_back(output_pixel_offset(decompose(min32(m, c32(npq_ - 1)))));
  }
  for (int j = 0; j < columns; ++j) {
    Value* k = b_.CreateAdd(n0, cell_column(j));
    filter_ok.push_back(b_.CreateICmpULT(k, c32(v_.k)));
    filter.push_back(min32(k, c32(v_.k - 1)));
  }
  auto out_ptr = [&](int i, int j) {
    Value* offset = b_.CreateAdd(pixel_offset[i], b_.CreateMul(b_.CreateZExt(filter[j], i64_), c64(v_.output_strides[1])));
    return gep(elem_, O_, offset);
  };
  if (p_.cg > 1) {  // atomic: O was set to beta * O + bias beforehand
    for (int j = 0; j < columns; ++j)
      for (int i = 0; i < rows; ++i) {
        Value* acc = b_.CreateLoad(acc_, acc_cells_[i * columns + j]);
        predicated("red", out_ptr(i, j), to_elem(b_.CreateFMul(alpha_, acc)), b_.CreateAnd(pixel_ok[i], filter_ok[j]));
      }
    return;
  }
  std::vector<Value*> bias(columns, nullptr);
  if (epi_.bias)
    for (int j = 0; j < columns; ++j)
      bias[j] = to_scalar(b_.CreateAlignedLoad(elem_, gep(elem_, bias_, b_.CreateZExt(filter[j], i64_)),
                                               llvm::Align(l_.elem)));
  // beta = 0 must not read O: it may hold NaNs.
  auto write = [&](bool read_o) {
    for (int j = 0; j < columns; ++j)
      for (int i = 0; i < rows; ++i) {
        Value* ptr = out_ptr(i, j);  // clamped coordinates: always a valid address
        Value* value = b_.CreateFMul(alpha_, b_.CreateLoad(acc_, acc_cells_[i * columns + j]));
        if (read_o)
          value = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_},
                                     {beta_, to_scalar(b_.CreateAlignedLoad(elem_, ptr, llvm::Align(l_.elem))), value});
        if (bias[j]) value = b_.CreateFAdd(value, bias[j]);
        if (epi_.relu)
          value = b_.CreateSelect(b_.CreateFCmpOGT(value, zero(scalar_)), value, zero(scalar_));
        predicated("st", ptr, to_elem(value), b_.CreateAnd(pixel_ok[i], filter_ok[j]));
      }
  };
  if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { write(false); }, [&] { write(true); });
}

void ConvEmitter::emit_main() {
  std::vector<llvm::Type*> params{gptr_, gptr_, gptr_, gptr_, gptr_, scalar_, scalar_};
  const int first_map = static_cast<int>(params.size());
  const int maps_count = stores_by_tma_ ? 3 : 2;
  if (t_.tma) params.insert(params.end(), maps_count, llvm::PointerType::get(ctx_, 0));
  begin_kernel(name(), params, l_.threads + (producer_warp_ ? 32 : 0));
  for (int a = 1; a <= 4; ++a) function_->getArg(a)->addAttr(llvm::Attribute::ReadOnly);
  if (t_.tma) {
    auto maps = tensor_map_parameters(first_map, maps_count);
    input_map_ = maps[0], filter_map_ = maps[1];
    if (stores_by_tma_) output_map_ = maps[2];
  }
  auto arg = function_->arg_begin();
  O_ = arg++, I_ = arg++, F_ = arg++, LUT_ = arg++, bias_ = arg++, alpha_ = arg++, beta_ = arg++;

  tid_ = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  Value* pid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  kz_ = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y);
  if (!tile_loop_) place_tile(pid);

  // This block's share of C*R*S: whole tiles of U, the last share shorter.
  std::int64_t k_tiles = (crs_ + g_.u - 1) / g_.u;
  std::int64_t per_split = (k_tiles + g_.kg - 1) / g_.kg * g_.u;
  k_begin_ = min32(b_.CreateMul(kz_, c32(per_split)), c32(crs_));
  k_end_ = min32(b_.CreateAdd(k_begin_, c32(per_split)), c32(crs_));
  Value* length = b_.CreateSub(k_end_, k_begin_);
  Value* full = b_.CreateUDiv(length, c32(g_.u));
  Value* total = b_.CreateAdd(full, b_.CreateZExt(b_.CreateICmpNE(b_.CreateURem(length, c32(g_.u)), c32(0)), i32_));

  thread_coordinates();

  if (t_.tma) {
    if (!tile_loop_) place_window();
    return accumulate_and_store(full, total, sm_ >= 90);
  }

  // Input slots: the pixel (clamped: rows past the edge re-read the last pixel; their results are
  // never stored), its base offset and (h0, w0).
  {
    auto [lane, row] = load_position(g_.la, g_.va);
    slots_a_ = slots(l_.ca, l_.oa, g_.la, g_.va);
    for (const LoadSlot& slot : slots_a_) {
      Value* c = b_.CreateAdd(c32(slot.c), lane);
      Value* o = b_.CreateAdd(c32(slot.o), row);
      Value* local_pixel = in_red_ ? o : c;
      Value* pixel = b_.CreateAdd(b_.CreateMul(bm_, c32(g_.ml)), local_pixel);
      a_origin_.push_back(pixel_origin(min32(pixel, c32(npq_ - (in_red_ ? 1 : g_.va)))));
      a_k_.push_back(in_red_ ? c : o);
      pre_a_.push_back(local(vec(elem_, g_.va), "prefetch_input"));
    }
  }
  // Filter slots: the clamped filter part of the address.
  {
    auto [lane, row] = load_position(g_.lb, g_.vb);
    slots_b_ = slots(l_.cb, l_.ob, g_.lb, g_.vb);
    for (const LoadSlot& slot : slots_b_) {
      Value* c = b_.CreateAdd(c32(slot.c), lane);
      Value* o = b_.CreateAdd(c32(slot.o), row);
      bool j_contiguous = !f_k_;
      Value* local_k = j_contiguous ? o : c;
      Value* k = b_.CreateAdd(b_.CreateMul(bn_, c32(g_.nl)), local_k);
      k = min32(k, c32(v_.k - (j_contiguous ? 1 : g_.vb)));
      Value* off = b_.CreateSExt(k, i64_);
      if (j_contiguous) off = b_.CreateMul(off, c64(v_.filter_strides[0]));
      b_offset_.push_back(off);
      b_k_.push_back(j_contiguous ? c : o);
      pre_b_.push_back(local(vec(elem_, g_.vb), "prefetch_filter"));
    }
  }

  accumulate_and_store(full, total, sm_ >= 90);
}

// CG > 1: O = beta * O + bias (exactly bias, or 0, when beta = 0) before the blocks add their parts.
void ConvEmitter::emit_prepare() {
  begin_kernel(name() + "_prepare", {gptr_, gptr_, scalar_}, 256);
  auto arg = function_->arg_begin();
  Value *O = arg++, *bias = arg++, *beta = arg++;
  Value* index = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c32(256)),
                              sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  if_then(b_.CreateICmpULT(index, c32(npq_ * v_.k)), [&] {
    Value* pixel = b_.CreateURem(index, c32(npq_));
    Value* k = b_.CreateUDiv(index, c32(npq_));
    Value* offset = b_.CreateAdd(output_pixel_offset(decompose(pixel)),
                                 b_.CreateMul(b_.CreateZExt(k, i64_), c64(v_.output_strides[1])));
    Value* ptr = gep(elem_, O, offset);
    Value* base = zero(scalar_);
    if (epi_.bias) base = to_scalar(b_.CreateLoad(elem_, gep(elem_, bias, b_.CreateZExt(k, i64_))));
    if_else(
        b_.CreateFCmpOEQ(beta, llvm::ConstantFP::get(scalar_, 0.0)), [&] { b_.CreateStore(to_elem(base), ptr); },
        [&] {
          Value* old = to_scalar(b_.CreateLoad(elem_, ptr));
          b_.CreateStore(to_elem(b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {beta, old, base})), ptr);
        });
  });
  // The main kernel may start once every block got here (it waits for the stores before its epilogue).
  if (sm_ >= 90) grid_dependency("launch_dependents");
  b_.CreateRetVoid();
}

}  // namespace

ConvKernel emit_conv(const ir::Conv& v, const ConvParams& p, const Target& target, const ConvEpilogue& epilogue) {
  if (auto legal = check_conv(v, p, epilogue, DeviceLimits{.sm = target.sm}); !legal)
    throw InvalidArgument("illegal CONV parameters " + p.str() + " for " + ir::to_string(v) + ": " + legal.reason);
  if (v.n * v.p * v.q * v.k > 0x7fffffff && p.cg > 1)
    throw InvalidArgument("CG > 1 needs N*P*Q*K below 2^31 (the prepare kernel's index)");
  if (p.wg) return emit_winograd_conv(v, p, target, epilogue);
  auto start = std::chrono::steady_clock::now();
  // wgmma exists only in sm_90a's PTX; the legality check above admits TC=2 for sm_90 alone.
  Target target_for_params = target;
  if (p.tc == 2) target_for_params.arch_specific = true;
  llvm::LLVMContext ctx;
  auto module = make_nvptx_module(ctx, "isaac_conv", target_for_params);
  ConvKernel kernel;
  {
    ConvEmitter main(*module, v, p, epilogue, target.sm);
    main.emit_main();
    kernel.main_name = main.name();
  }
  if (p.cg > 1) {
    ConvEmitter helper(*module, v, p, epilogue, target.sm);
    helper.emit_prepare();
    kernel.prepare_name = helper.name() + "_prepare";
  }
  kernel.ptx = compile_to_ptx(*module, target_for_params, Optimisation::full);
  kernel.overlaps_previous = target.sm >= 90;
  kernel.tile_loop = conv_tile_loop(v, p);
  kernel.threads = p.threads() + (conv_tma_producer_warp(v, p) ? 32 : 0);
  kernel.shared_bytes = conv_kernel_shared_bytes(v, p);
  kernel.emit_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

}  // namespace isaac::lower
