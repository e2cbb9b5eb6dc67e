// The GEMM template's emitter: LLVM IR for one parameter set, through NVPTX to PTX.
//
// Block (bm, bn, kz, batch) computes the ML x NL tile of C over its share of K. Each stage, all
// threads copy a U-deep slice of A and B from global memory into shared memory (prefetching the
// next stage into registers while the current one is consumed when DB=1); the threads then form
// KL groups, each taking U/KL of the stage's K steps, and accumulate MS x NS outer products of
// fragments read from shared memory. Loads use clamped addresses, so the main loop carries no
// bounds checks; only the K tail selects zeros, and the edge stores are predicated in inline PTX.
#include "lower/gemm_main.hpp"
#include "lower/kernel_builder.hpp"
#include "lower/nvptx_backend.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/gemm.hpp>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <functional>
#include <utility>

namespace isaac::lower {

namespace {

using llvm::Value;

class GemmEmitter : public TiledKernelBuilder {
 public:
  GemmEmitter(llvm::Module& module, const ir::Gemm& g, const GemmParams& p, SplitMode mode, int sm)
      : TiledKernelBuilder(module, g.dtype, p, g.a_trans, g.b_trans, g.dtype == ir::DType::f16 && !p.acc32, sm),
        g_(g),
        p_(p),
        mode_(mode) {
    producer_warp_ = tma_producer_warp(g, p);
    tile_loop_ = gemm_tile_loop(g, p);
    ping_pong_ = gemm_ping_pong(g, p);
    one_wgmma_statement_ = true;
  }

  std::string name() const {
    return fmt::format("isaac_gemm_{}_{}{}", ir::name(g_.dtype), g_.a_trans ? 'T' : 'N', g_.b_trans ? 'T' : 'N');
  }

  void emit_main();
  void emit_prepare();
  void emit_reduce();

 private:
  // What the loads of one operand need.
  struct Operand {
    Value *base, *ld;
    bool k_contiguous;
    const std::vector<Value*>* offset;     // TC=0, per slot: the M or N part of its offset
    const std::vector<Value*>* k_in_tile;  // per slot: its K coordinate within a stage
    const std::vector<Value*>* start;      // cp.async, per slot: the address of its vector in stage 0
    const std::vector<Value*>* shared;     // cp.async, per slot: its 32-bit address in shared buffer 0
    Value* step;                           // cp.async: elements from one stage's addresses to the next's
    const std::vector<llvm::AllocaInst*>* prefetch;
    const std::vector<LoadSlot>* slots;
    int vector, along, region, stage_size, pitch, wgmma_width;
    Value *map, *block;  // TMA: the tensor map's generic address; the block's tile index along M/N
    int tile;            // ML or NL
  };
  std::array<Operand, 2> operands() {
    return {Operand{A_, lda_, g_.a_trans, &a_offset_, &a_k_, &a_start_, &a_shared_, a_step_, &pre_a_, &slots_a_, p_.va,
                    p_.la, 0, l_.stage_a, l_.pitch_a, wgmma_width(g_.a_trans, 64), a_map_, bm_, p_.ml},
            Operand{B_, ldb_, !g_.b_trans, &b_offset_, &b_k_, &b_start_, &b_shared_, b_step_, &pre_b_, &slots_b_, p_.vb,
                    p_.lb, l_.stages * l_.stage_a, l_.stage_b, l_.pitch_b, wgmma_width(!g_.b_trans, 16 * p_.ns), b_map_,
                    bn_, p_.nl}};
  }
  // The global address of slot s's vector in stage `tile` (predicated: also whether it lies before
  // k_end): slot_pointer for load_tile, async_source for copy_tile_async.
  Value* slot_pointer(const Operand& o, size_t s, Value* tile, bool predicated, Value** in_range);
  Value* async_source(const Operand& o, size_t s, Value* tile, bool predicated, Value** in_range);
  // Where slot s's vector goes in shared buffer 0 (cp.async): its 32-bit shared-memory address.
  Value* shared_address(const Operand& o, size_t s);
  void load_tile(Value* tile, bool predicated) override;
  void copy_tile_async(Value* tile, Value* buffer, bool predicated) override;
  void copy_tile_tma(Value* tile, Value* buffer, Value* barrier) override;
  void epilogue() override;
  void recompute_nan_cells() override;
  Value* tile_count() override;
  void enter_tile(Value* tile) override;
  void init_epilogue_barriers() override;
  void finish_tile_stores() override;
  // C's tiles along M and along N.
  std::pair<Value*, Value*> tiles_along_m_and_n();
  // Sets bm_ and bn_ for the block's tile `tile`, numbered in groups of SW tile rows so that
  // neighbours share A and B in L2.
  void place_tile(Value* tile);
  void staged_epilogue(Value* m0, Value* n0);
  void staged_epilogue_cells(Value* m0, Value* n0);
  void staged_epilogue_matrices(Value* m0, Value* n0);
  void staged_epilogue_tensor(Value* m0, Value* n0);
  // stage_matrices of alpha times the accumulators, plus beta times the tile already staged there
  // where `with_c`, down C's columns.
  void stage_scaled_matrices(const std::function<Value*(Value* row, Value* column)>& offset, bool with_c);
  // Reads the staged tile (columns `pitch` elements of `type` apart) back as runs of 16 bytes of C
  // down a column (TiledKernelBuilder::for_each_staged_run); `store` gets the run, its first row and
  // column in C, and whether that column lies in C (and the run in the tile).
  void for_each_staged_run(Value* m0, Value* n0, int pitch, llvm::Type* type,
                           const std::function<void(Value* run, Value* m, Value* n, Value* column_inside)>& store);
  // The address of C's element (m, n) in this block's batch.
  Value* c_ptr(Value* m, Value* n);
  // Whether C's address, M and ldc allow accessing `width` consecutive rows of a column at once.
  Value* c_rows_aligned(int width);

  const ir::Gemm& g_;
  GemmParams p_;
  SplitMode mode_;

  // State of the main kernel while it is emitted.
  Value *A_, *B_, *C_, *W_, *alpha_, *beta_, *M_, *N_, *K_, *lda_, *ldb_, *ldc_;
  Value *bm_, *bn_, *kz_, *bz_, *batches_ = nullptr;
  Value *a_map_ = nullptr, *b_map_ = nullptr, *c_map_ = nullptr;
  std::vector<Value*> a_offset_, b_offset_, a_k_, b_k_;
  std::vector<Value*> a_start_, b_start_, a_shared_, b_shared_;
  Value *a_step_ = nullptr, *b_step_ = nullptr;
};

// The M/N coordinates were clamped once; `predicated` also clamps K.
Value* GemmEmitter::slot_pointer(const Operand& o, size_t s, Value* tile, bool predicated, Value** in_range) {
  Value* k = b_.CreateAdd(b_.CreateAdd(k_begin_, b_.CreateMul(tile, c32(p_.u))), (*o.k_in_tile)[s]);
  if (predicated) {
    *in_range = b_.CreateICmpSLT(k, k_end_);
    k = b_.CreateSelect(*in_range, k, k_begin_);
  }
  Value* k_offset = b_.CreateSExt(k, i64_);
  if (!o.k_contiguous) k_offset = b_.CreateMul(k_offset, o.ld);
  return gep(elem_, o.base, b_.CreateAdd((*o.offset)[s], k_offset));
}

// cp.async kernels spend few instructions per copy besides the address, so each slot's address is
// computed once before the main loop and a stage adds a multiple of the step: recomputing it per
// stage made 60% of the instructions the f16 LINPACK 4096 winner executed (Nsight Compute). The FMA
// kernels keep slot_pointer: per-slot pointers cost them registers (f32 LAPACK 3456's winner 127 -> 153).
// Slots past k_end point at the operand's first element, and copy nothing.
Value* GemmEmitter::async_source(const Operand& o, size_t s, Value* tile, bool predicated, Value** in_range) {
  // Not inbounds: past k_end the address is computed but not used.
  Value* address = b_.CreateGEP(elem_, (*o.start)[s], b_.CreateMul(b_.CreateSExt(tile, i64_), o.step));
  if (predicated) {
    Value* k = b_.CreateAdd(b_.CreateMul(tile, c32(p_.u)), (*o.k_in_tile)[s]);
    *in_range = b_.CreateICmpSLT(k, b_.CreateSub(k_end_, k_begin_));
    address = b_.CreateSelect(*in_range, address, o.base);
  }
  return address;
}

Value* GemmEmitter::shared_address(const Operand& o, size_t s) {
  auto [lane, row] = load_position(o.along, o.vector);
  const LoadSlot& slot = (*o.slots)[s];
  Value* c = b_.CreateAdd(c32(slot.c), lane);
  Value* r = b_.CreateAdd(c32(slot.o), row);
  Value* index = stage_offset(r, c, o.pitch, o.k_contiguous, o.wgmma_width);
  return b_.CreatePtrToInt(gep(elem_, smem_, b_.CreateAdd(c32(o.region), index)), i32_);
}

// Loads stage `tile` of this block's K range into the prefetch registers, zeros past k_end where
// `predicated`.
void GemmEmitter::load_tile(Value* tile, bool predicated) {
  for (const Operand& o : operands()) {
    llvm::Type* type = vec(elem_, o.vector);
    for (size_t s = 0; s < o.slots->size(); ++s) {
      Value* in_range = nullptr;
      Value* value = b_.CreateAlignedLoad(type, slot_pointer(o, s, tile, predicated, &in_range),
                                          llvm::Align(o.vector * l_.elem));
      if (predicated) value = b_.CreateSelect(in_range, value, zero(type));
      b_.CreateStore(value, (*o.prefetch)[s]);
    }
  }
}

// TC=1: each slot's vector goes straight to its place in the shared tile (row = the slot's other
// coordinate, column = its contiguous one, in either orientation); past k_end nothing is read and
// the copy zero-fills. cp.async copies 4, 8 or 16 bytes: single f16 elements (V=1, for odd leading
// dimensions) are loaded and stored by the thread instead, which the pipeline's barrier also covers.
// TC=2: each vector is a 16-byte chunk of a swizzled row (wgmma_offset).
void GemmEmitter::copy_tile_async(Value* tile, Value* buffer, bool predicated) {
  for (const Operand& o : operands()) {
    Value* offset = b_.CreateMul(buffer, c32(o.stage_size * l_.elem));
    const int bytes = o.vector * l_.elem;
    for (size_t s = 0; s < o.slots->size(); ++s) {
      Value* target = b_.CreateAdd((*o.shared)[s], offset);
      Value* in_range = nullptr;
      Value* source = async_source(o, s, tile, predicated, &in_range);
      if (bytes < 4) {
        Value* value = b_.CreateAlignedLoad(elem_, source, llvm::Align(l_.elem));
        if (predicated) value = b_.CreateSelect(in_range, value, zero(elem_));
        b_.CreateAlignedStore(value, b_.CreateIntToPtr(target, smem_->getType()), llvm::Align(l_.elem));
        continue;
      }
      Value* source_bytes = predicated ? b_.CreateSelect(in_range, c32(bytes), c32(0)) : c32(bytes);
      async_copy(target, source, bytes, source_bytes);
    }
  }
}

// A K-contiguous operand's stage is one box of U x tile (rows of 2U bytes, as wgmma reads them); an
// M/N-contiguous one's is tile / R boxes of R x U, one per block of R = width / elem elements along
// M/N. Rows past M, N or K read as zeros: no clamping, no K tail.
void GemmEmitter::copy_tile_tma(Value* tile, Value* buffer, Value* barrier) {
  Value* k = b_.CreateAdd(k_begin_, b_.CreateMul(tile, c32(p_.u)));
  for (const Operand& o : operands()) {
    Value* stage = b_.CreateAdd(c32(o.region * l_.elem), b_.CreateMul(buffer, c32(o.stage_size * l_.elem)));
    Value* stage_address = b_.CreatePtrToInt(gep(b_.getInt8Ty(), smem_, stage), i32_);
    Value* mn = b_.CreateMul(o.block, c32(o.tile));
    if (o.k_contiguous) {
      tensor_copy(stage_address, o.map, {k, mn, bz_}, barrier);
      continue;
    }
    const int row = o.wgmma_width / l_.elem;
    for (int j = 0; j < o.tile / row; ++j)
      tensor_copy(b_.CreateAdd(stage_address, c32(j * p_.u * o.wgmma_width)), o.map,
                  {b_.CreateAdd(mn, c32(j * row)), k, bz_}, barrier);
  }
}

void GemmEmitter::epilogue() {
  Value* m0 = b_.CreateMul(bm_, c32(p_.ml));
  Value* n0 = b_.CreateMul(bn_, c32(p_.nl));
  const int rows = cell_rows(), columns = cell_columns();
  auto for_each = [&](const std::function<void(Value* m, Value* n, Value* acc)>& f) {
    for (int j = 0; j < columns; ++j)
      for (int i = 0; i < rows; ++i) {
        Value* m = b_.CreateAdd(m0, cell_row(i));
        Value* n = b_.CreateAdd(n0, cell_column(j));
        Value* acc = half_acc_ ? b_.CreateExtractElement(b_.CreateLoad(acc_, acc_cells_[(i / 2) * p_.ns + j]), i % 2)
                               : b_.CreateLoad(acc_, acc_cells_[i * columns + j]);
        f(m, n, acc);
      }
  };
  auto inside = [&](Value* m, Value* n) { return b_.CreateAnd(b_.CreateICmpSLT(m, M_), b_.CreateICmpSLT(n, N_)); };

  if (p_.kg > 1 && mode_ == SplitMode::deterministic) {
    // W[batch][kz] is a dense column-major M x N matrix of accumulator values.
    Value* plane = b_.CreateMul(b_.CreateSExt(b_.CreateAdd(b_.CreateMul(bz_, c32(p_.kg)), kz_), i64_),
                                b_.CreateMul(b_.CreateSExt(M_, i64_), b_.CreateSExt(N_, i64_)));
    Value* W = gep(acc_scalar_, W_, plane);
    for_each([&](Value* m, Value* n, Value* acc) {
      Value* index = b_.CreateAdd(b_.CreateSExt(m, i64_), b_.CreateMul(b_.CreateSExt(n, i64_), b_.CreateSExt(M_, i64_)));
      predicated("st", gep(acc_scalar_, W, index), acc, inside(m, n));
    });
    return;
  }
  // Where M, ldc and C's address are multiples of a fragment chunk, each chunk of FVM consecutive
  // rows is accessed at once: `access(ptr, values, pred, old)` gets the chunk's alpha * acc values
  // and, when `read_c`, the vector of C's old values.
  auto for_each_chunk = [&](bool read_c, const std::function<void(Value*, std::vector<Value*>, Value*, Value*)>& access) {
    llvm::Type* chunk_type = vec(elem_, l_.fvm);
    for (int j = 0; j < p_.ns; ++j)
      for (int i = 0; i < p_.ms; i += l_.fvm) {
        Value* m = b_.CreateAdd(m0, cell_row(i));
        Value* n = b_.CreateAdd(n0, cell_column(j));
        Value* pred = inside(m, n);
        Value* old = nullptr;
        if (read_c)
          old = b_.CreateAlignedLoad(chunk_type, c_ptr(b_.CreateSelect(pred, m, c32(0)), b_.CreateSelect(pred, n, c32(0))),
                                     llvm::Align(l_.fvm * l_.elem));
        std::vector<Value*> values;
        for (int v = 0; v < l_.fvm; ++v) {
          int e = i + v;
          Value* acc = half_acc_ ? b_.CreateExtractElement(b_.CreateLoad(acc_, acc_cells_[(e / 2) * p_.ns + j]), e % 2)
                                 : b_.CreateLoad(acc_, acc_cells_[e * p_.ns + j]);
          values.push_back(b_.CreateFMul(alpha_, to_scalar(acc)));
        }
        access(c_ptr(m, n), values, pred, old);
      }
  };
  Value* chunks_aligned = l_.fvm > 1 ? c_rows_aligned(l_.fvm) : nullptr;

  // TC=1 and 2 f16 and bf16 with KG > 1: a thread's accumulators pair columns (n, n + 1) of one row. movmatrix
  // transposes each 8 x 8 tile within the warp, after which a thread holds rows (m, m + 1) of one
  // column: adjacent in C, one f16x2 reduction instead of two f16 ones (the H100 winners of the f16
  // ICA and DeepBench problems ran 1.5x to 3.4x faster). Plain stores stay scalar: with pairs, the
  // f16 LAPACK 4096 x 4096 x 32 kernel, which is all epilogue, ran at half the speed.
  const bool tc_pairs = p_.tc && ir::is_16_bit(g_.dtype) && p_.kg > 1;
  Value* pairs_aligned = tc_pairs ? c_rows_aligned(2) : nullptr;
  auto reduce_pairs = [&] {
    auto* half2 = llvm::FixedVectorType::get(elem_, 2);
    auto* transpose = llvm::InlineAsm::get(llvm::FunctionType::get(i32_, {i32_}, false),
                                           "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;", "=r,r", false);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < columns; j += 2) {
        std::vector<Value*> pair;
        for (int e = 0; e < 2; ++e)
          pair.push_back(to_elem(b_.CreateFMul(alpha_, b_.CreateLoad(acc_, acc_cells_[i * columns + j + e]))));
        auto* moved = b_.CreateCall(transpose, {half_pairs(pair)[0]});
        moved->addFnAttr(llvm::Attribute::Convergent);
        Value* transposed = b_.CreateBitCast(moved, half2);
        // The 8 x 8 tile holds the cells at (row g, columns 2t, 2t + 1); the transposed one rows 2t
        // and 2t + 1 of its column g.
        Value* m = b_.CreateAdd(m0, b_.CreateAdd(b_.CreateSub(cell_row(i), group_), b_.CreateMul(quad_, c32(2))));
        Value* n = b_.CreateAdd(n0, b_.CreateAdd(b_.CreateSub(cell_column(j), b_.CreateMul(quad_, c32(2))), group_));
        std::vector<Value*> values{b_.CreateExtractElement(transposed, c32(0)),
                                   b_.CreateExtractElement(transposed, c32(1))};
        predicated_vector_red(c_ptr(m, n), values, inside(m, n), sm_);
      }
  };

  if (p_.kg > 1) {  // atomic: C was scaled by beta beforehand
    auto red = [&] {
      for_each([&](Value* m, Value* n, Value* acc) {
        predicated("red", c_ptr(m, n), to_elem(b_.CreateFMul(alpha_, to_scalar(acc))), inside(m, n));
      });
    };
    if (tc_pairs) return if_else(pairs_aligned, reduce_pairs, red);
    if (l_.fvm == 1 || g_.dtype == ir::DType::f64) return red();
    auto red_vectors = [&] {
      for_each_chunk(false, [&](Value* ptr, std::vector<Value*> values, Value* pred, Value*) {
        for (Value*& v : values) v = to_elem(v);
        predicated_vector_red(ptr, values, pred, sm_);
      });
    };
    if_else(chunks_aligned, red_vectors, red);
    return;
  }
  if (l_.staged_stores(p_)) return staged_epilogue(m0, n0);
  // beta = 0 must not read C: it may hold NaNs, and BLAS semantics say C is then write-only.
  auto write = [&](bool read_c) {
    for_each([&](Value* m, Value* n, Value* acc) {
      Value* value = b_.CreateFMul(alpha_, to_scalar(acc));
      Value* pred = inside(m, n);
      if (read_c) {
        Value* ptr = c_ptr(b_.CreateSelect(pred, m, c32(0)), b_.CreateSelect(pred, n, c32(0)));
        Value* old = to_scalar(b_.CreateAlignedLoad(elem_, ptr, llvm::Align(l_.elem)));
        value = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {beta_, old, value});
      }
      predicated("st", c_ptr(m, n), to_elem(value), pred);
    });
  };
  auto write_vectors = [&](bool read_c) {
    for_each_chunk(read_c, [&](Value* ptr, std::vector<Value*> values, Value* pred, Value* old) {
      for (size_t v = 0; v < values.size(); ++v) {
        if (read_c)
          values[v] = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_},
                                         {beta_, to_scalar(b_.CreateExtractElement(old, v)), values[v]});
        values[v] = to_elem(values[v]);
      }
      predicated_vector_store(ptr, values, pred);
    });
  };
  auto write_any = [&](bool read_c) {
    if (l_.fvm == 1) return write(read_c);
    if_else(chunks_aligned, [&] { write_vectors(read_c); }, [&] { write(read_c); });
  };
  if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { write_any(false); },
          [&] { write_any(true); });
}

Value* GemmEmitter::c_ptr(Value* m, Value* n) {
  return gep(elem_, C_, b_.CreateAdd(b_.CreateSExt(m, i64_), b_.CreateMul(b_.CreateSExt(n, i64_), ldc_)));
}

Value* GemmEmitter::c_rows_aligned(int width) {
  Value* aligned = b_.CreateICmpEQ(b_.CreateURem(b_.CreatePtrToInt(C_, i64_), c64(width * l_.elem)), c64(0));
  aligned = b_.CreateAnd(aligned, b_.CreateICmpEQ(b_.CreateURem(M_, c32(width)), c32(0)));
  return b_.CreateAnd(aligned, b_.CreateICmpEQ(b_.CreateURem(ldc_, c64(width)), c64(0)));
}

// f16 TC=1 with plain stores: a thread's mma accumulators pair columns of a row, scattered in C (2-byte
// stores, 16 contiguous bytes per warp and column). They go through shared memory instead:
// written in C's layout, then read back as runs of 16 bytes along M, so that each thread writes whole
// 16-byte vectors of C (elementwise where M, ldc or C's address do not allow vectors).
// On sm_90, f32 accumulators with beta = 0 are staged as f16 by stmatrix (staged_epilogue_matrices):
// the staging is what kept the SM's L1 busiest on short-K problems (82% against 32% of DRAM on f16
// attention QK^T, Nsight Compute), and this moves half the bytes in an eighth of the store
// instructions. beta != 0 keeps f32, so that alpha AB + beta C is rounded once. Where TMA moves C
// (c_map_), neither: staged_epilogue_tensor.
void GemmEmitter::staged_epilogue(Value* m0, Value* n0) {
  if (c_map_) return staged_epilogue_tensor(m0, n0);
  if (sm_ >= 90 && p_.acc32 && l_.elem == 2) {
    if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { staged_epilogue_matrices(m0, n0); },
            [&] { staged_epilogue_cells(m0, n0); });
    return;
  }
  staged_epilogue_cells(m0, n0);
}

void GemmEmitter::stage_scaled_matrices(const std::function<Value*(Value* row, Value* column)>& offset, bool with_c) {
  stage_matrices(true, offset, with_c, [&](int i, int j, Value* old) {
    Value* value = b_.CreateFMul(alpha_, b_.CreateLoad(acc_, acc_cells_[i * cell_columns() + j]));
    return old ? b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {beta_, b_.CreateFPExt(old, scalar_), value}) : value;
  });
}

// Columns are ML + 8 elements apart: a matrix's 8 rows fall on distinct banks.
void GemmEmitter::staged_epilogue_matrices(Value* m0, Value* n0) {
  const int pitch = p_.ml + 8;
  barrier();  // every warp is done with the pipeline's buffers
  stage_scaled_matrices([&](Value* row, Value* column) {
    return b_.CreateMul(b_.CreateAdd(b_.CreateMul(column, c32(pitch)), row), c32(2));
  }, false);
  barrier();

  const int width = 8;  // f16 elements of C per 16-byte vector
  Value* aligned = c_rows_aligned(width);
  for_each_staged_run(m0, n0, pitch, elem_, [&](Value* staged, Value* m, Value* n, Value* column_inside) {
    std::vector<Value*> values;
    for (int e = 0; e < width; ++e) values.push_back(b_.CreateExtractElement(staged, c32(e)));
    if_else(
        aligned, [&] { predicated_vector_store(c_ptr(m, n), values, b_.CreateAnd(column_inside, b_.CreateICmpSLT(m, M_))); },
        [&] {
          for (int e = 0; e < width; ++e) {
            Value* me = b_.CreateAdd(m, c32(e));
            predicated("st", c_ptr(me, n), values[std::size_t(e)], b_.CreateAnd(column_inside, b_.CreateICmpSLT(me, M_)));
          }
        });
  });
}

// TMA=1 without a split, on a C that allows it (gemm_stores_c_by_tma): the tile is staged as boxes of
// 64 rows x NL columns, each column's 128 bytes with its 16-byte runs swizzled as TMA's 128-byte mode
// expects (run r of column n at r XOR n mod 8, which also puts a matrix's 8 columns on distinct
// banks). Where beta != 0, TMA first copies C's tile there and each warp reads its cells' old values
// back with ldmatrix, so that alpha AB + beta C is rounded once. One thread then hands the boxes to
// TMA, which writes what lies inside C. The SM neither reads the staging back nor issues C's stores:
// on short K those kept its L1 the busiest unit.
//
// In a tile loop the staging has memory of its own (the producer is already filling the stages with
// the next tile's operands), C's mbarrier was initialised with the stages', and its phase is the
// parity of the tiles done. A ping-pong loop's two consumer groups each have their own staging and C
// mbarrier, and their own named barrier.
void GemmEmitter::staged_epilogue_tensor(Value* m0, Value* n0) {
  const int box_bytes = 128 * p_.nl;  // 64 f16 rows by NL columns
  Value* staging = nullptr;
  if (tile_loop_) {
    staging = c32(l_.tile_loop_staging_offset(p_, ping_pong_ ? 2 : 1));
    if (ping_pong_) staging = b_.CreateAdd(staging, b_.CreateMul(consumer_group_, c32(p_.ml * p_.nl * l_.elem)));
  }
  Value* smem = b_.CreatePtrToInt(smem_, i32_);
  auto boxes = [&](const std::function<void(Value* coordinate_m, Value* box_address)>& f) {
    for (int box = 0; box < p_.ml / 64; ++box)
      f(b_.CreateAdd(m0, c32(64 * box)),
        b_.CreateAdd(smem, staging ? b_.CreateAdd(staging, c32(box * box_bytes)) : c32(box * box_bytes)));
  };
  auto offset = [&](Value* row, Value* column) {
    Value* box = b_.CreateLShr(row, c32(6));
    Value* run = b_.CreateAnd(b_.CreateLShr(row, c32(3)), c32(7));
    Value* swizzled = b_.CreateXor(run, b_.CreateAnd(column, c32(7)));
    Value* bytes = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(box, c32(box_bytes)), b_.CreateMul(column, c32(128))),
                                b_.CreateMul(swizzled, c32(16)));
    return staging ? b_.CreateAdd(bytes, staging) : bytes;
  };
  Value* leader = b_.CreateICmpEQ(tid_, c32(0));
  // A tile loop's leader waits for its last tile's stores to have read the staging here, not after
  // issuing them: its warp group's next wgmma need not wait for it.
  if (tile_loop_) if_then(leader, [&] { ptx_statement("cp.async.bulk.wait_group.read 0;", "", {}); });
  // Every warp is done with the pipeline's buffers (in a tile loop: TMA has read the last tile's staging).
  barrier();
  if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { stage_scaled_matrices(offset, false); },
          [&] {
            Value* loaded = b_.CreateAdd(smem, c32(l_.c_barrier_offset(p_)));
            if (ping_pong_) loaded = b_.CreateAdd(loaded, b_.CreateMul(consumer_group_, c32(8)));
            if_then(leader, [&] {
              if (!tile_loop_) {
                mbarrier_init(loaded, 1);
                ptx_statement("fence.mbarrier_init.release.cluster;", "", {});
              }
              mbarrier_expect_bytes(loaded, p_.ml * p_.nl * l_.elem);
              boxes([&](Value* m, Value* address) { tensor_copy(address, c_map_, {m, n0, bz_}, loaded); });
            });
            if (tile_loop_) {
              mbarrier_wait(loaded, b_.CreateLoad(i32_, tile_parity_));
            } else {
              barrier();  // the mbarrier is initialised
              mbarrier_wait(loaded, c32(0));
            }
            stage_scaled_matrices(offset, true);
          });
  // The stmatrix writes are the generic proxy's, the tensor store reads through the async proxy.
  ptx_statement("fence.proxy.async.shared::cta;", "", {});
  barrier();
  if_then(leader, [&] {
    boxes([&](Value* m, Value* address) {
      ptx_statement("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$0, {$1, $2, $3}], [$4];", "l,r,r,r,r",
                    {c_map_, m, n0, bz_, address});
    });
    ptx_statement("cp.async.bulk.commit_group;", "", {});
    // Shared memory must outlive the copies' reads of it: it is freed when the block ends.
    if (!tile_loop_) ptx_statement("cp.async.bulk.wait_group.read 0;", "", {});
  });
}

void GemmEmitter::finish_tile_stores() { ptx_statement("cp.async.bulk.wait_group.read 0;", "", {}); }

void GemmEmitter::for_each_staged_run(Value* m0, Value* n0, int pitch, llvm::Type* type,
                                      const std::function<void(Value*, Value*, Value*, Value*)>& store) {
  TiledKernelBuilder::for_each_staged_run(0, pitch, false, type, [&](Value* run, Value* row, Value* column, Value* in_tile) {
    Value* n = b_.CreateAdd(n0, column);
    store(run, b_.CreateAdd(m0, row), n, b_.CreateAnd(in_tile, b_.CreateICmpSLT(n, N_)));
  });
}

void GemmEmitter::staged_epilogue_cells(Value* m0, Value* n0) {
  const int pitch = l_.staging_pitch(p_);
  barrier();  // every warp is done with the pipeline's buffers
  stage_scaled_cells(alpha_, [&](Value* row, Value* column) { return b_.CreateAdd(b_.CreateMul(column, c32(pitch)), row); });
  barrier();

  const int width = 16 / l_.elem;  // elements of C per vector
  llvm::Type* c_vector = vec(elem_, width);
  Value* aligned = c_rows_aligned(width);
  Value* read_c = b_.CreateFCmpUNE(beta_, llvm::ConstantFP::get(scalar_, 0.0));
  for_each_staged_run(m0, n0, pitch, acc_, [&](Value* staged, Value* m, Value* n, Value* column_inside) {
    // beta != 0: C's old values, read where they exist (clamped addresses elsewhere).
    auto result = [&](int e, Value* old) {
      Value* value = to_scalar(b_.CreateExtractElement(staged, c32(e)));
      if (old) value = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {beta_, to_scalar(old), value});
      return to_elem(value);
    };
    auto vector_store = [&](bool with_c) {
      Value* pred = b_.CreateAnd(column_inside, b_.CreateICmpSLT(m, M_));
      Value* old = nullptr;
      if (with_c)
        old = b_.CreateAlignedLoad(c_vector, c_ptr(b_.CreateSelect(pred, m, c32(0)), b_.CreateSelect(pred, n, c32(0))),
                                   llvm::Align(16));
      std::vector<Value*> values;
      for (int e = 0; e < width; ++e) values.push_back(result(e, old ? b_.CreateExtractElement(old, c32(e)) : nullptr));
      predicated_vector_store(c_ptr(m, n), values, pred);
    };
    auto element_stores = [&](bool with_c) {
      for (int e = 0; e < width; ++e) {
        Value* me = b_.CreateAdd(m, c32(e));
        Value* pred = b_.CreateAnd(column_inside, b_.CreateICmpSLT(me, M_));
        Value* old = nullptr;
        if (with_c)
          old = b_.CreateAlignedLoad(elem_, c_ptr(b_.CreateSelect(pred, me, c32(0)), b_.CreateSelect(pred, n, c32(0))),
                                     llvm::Align(l_.elem));
        predicated("st", c_ptr(me, n), result(e, old), pred);
      }
    };
    // beta = 0 must not read C: it may hold NaNs, and BLAS semantics say C is then write-only.
    if_else(aligned, [&] { if_else(read_c, [&] { vector_store(true); }, [&] { vector_store(false); }); },
            [&] { if_else(read_c, [&] { element_stores(true); }, [&] { element_stores(false); }); });
  });
}

void GemmEmitter::emit_main() {
  std::vector<llvm::Type*> params{gptr_, gptr_, gptr_, gptr_, scalar_, scalar_, i32_, i32_,
                                  i32_,  i64_,  i64_,  i64_,  i64_,  i64_,    i64_};
  const int first_map = static_cast<int>(params.size());
  const int maps = p_.tma ? (gemm_stores_c_by_tma(g_, p_) ? 3 : 2) : 0;
  params.insert(params.end(), maps, llvm::PointerType::get(ctx_, 0));
  if (tile_loop_) params.push_back(i32_);  // the batches, over which a tile loop numbers its tiles
  begin_kernel(name(), params, gemm_launch_threads(g_, p_));
  if (tile_loop_) batches_ = function_->getArg(first_map + maps);
  if (maps) {
    auto addresses = tensor_map_parameters(first_map, maps);
    a_map_ = addresses[0], b_map_ = addresses[1];
    if (maps == 3) c_map_ = addresses[2];
  }
  function_->getArg(1)->addAttr(llvm::Attribute::ReadOnly);
  function_->getArg(2)->addAttr(llvm::Attribute::ReadOnly);
  auto arg = function_->arg_begin();
  C_ = arg++, A_ = arg++, B_ = arg++, W_ = arg++, alpha_ = arg++, beta_ = arg++;
  M_ = arg++, N_ = arg++, K_ = arg++, lda_ = arg++, ldb_ = arg++, ldc_ = arg++;
  Value* stride_a = arg++;
  Value* stride_b = arg++;
  Value* stride_c = arg++;

  tid_ = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  Value* pid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  kz_ = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y);
  bz_ = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z);

  place_tile(pid);

  Value* batch = b_.CreateSExt(bz_, i64_);
  A_ = gep(elem_, A_, b_.CreateMul(batch, stride_a));
  B_ = gep(elem_, B_, b_.CreateMul(batch, stride_b));
  C_ = gep(elem_, C_, b_.CreateMul(batch, stride_c));

  // This block's share of K: whole tiles of U spread evenly over the KG blocks (shares differ by at
  // most one tile; only the last one ends in a partial tile). The product is 64-bit: KG x K tiles can
  // pass 2^31.
  Value* k_tiles = b_.CreateZExt(b_.CreateUDiv(b_.CreateAdd(K_, c32(p_.u - 1)), c32(p_.u)), i64_);
  auto share_start = [&](Value* split) {
    Value* tile = b_.CreateUDiv(b_.CreateMul(b_.CreateZExt(split, i64_), k_tiles), c64(p_.kg));
    return min32(b_.CreateMul(b_.CreateTrunc(tile, i32_), c32(p_.u)), K_);
  };
  k_begin_ = share_start(kz_);
  k_end_ = share_start(b_.CreateAdd(kz_, c32(1)));
  Value* length = b_.CreateSub(k_end_, k_begin_);
  Value* full = b_.CreateUDiv(length, c32(p_.u));
  Value* total = b_.CreateAdd(full, b_.CreateZExt(b_.CreateICmpNE(b_.CreateURem(length, c32(p_.u)), c32(0)), i32_));

  thread_coordinates();

  // Per load slot: the K coordinate within a stage, and the clamped M (or N) part of the address or
  // (cp.async) the address in stage 0.
  auto prepare = [&](bool k_contiguous, Value* base, Value* ld, Value* extent, int tile, Value* block, int along, int v,
                     const std::vector<LoadSlot>& s, std::vector<Value*>& offset, std::vector<Value*>& k_in_tile,
                     std::vector<Value*>& start, std::vector<llvm::AllocaInst*>& pre) {
    auto [lane, row] = load_position(along, v);
    for (const LoadSlot& slot : s) {
      Value* c = b_.CreateAdd(c32(slot.c), lane);
      Value* o = b_.CreateAdd(c32(slot.o), row);
      Value* mn = b_.CreateAdd(b_.CreateMul(block, c32(tile)), k_contiguous ? o : c);
      // Rows past the edge re-read the last valid one: their results are never stored.
      mn = min32(mn, b_.CreateSub(extent, c32(k_contiguous ? 1 : v)));
      mn = b_.CreateSelect(b_.CreateICmpSLT(mn, c32(0)), c32(0), mn);
      Value* off = b_.CreateSExt(mn, i64_);
      if (k_contiguous) off = b_.CreateMul(off, ld);
      Value* k = k_contiguous ? c : o;
      k_in_tile.push_back(k);
      if (p_.tc) {
        Value* k_offset = b_.CreateSExt(b_.CreateAdd(k_begin_, k), i64_);
        if (!k_contiguous) k_offset = b_.CreateMul(k_offset, ld);
        start.push_back(b_.CreateGEP(elem_, base, b_.CreateAdd(off, k_offset)));
      } else {
        offset.push_back(off);
      }
      pre.push_back(local(vec(elem_, v), "prefetch"));
    }
  };
  if (p_.tma) return accumulate_and_store(full, total, sm_ >= 90);
  slots_a_ = slots(l_.ca, l_.oa, p_.la, p_.va);
  slots_b_ = slots(l_.cb, l_.ob, p_.lb, p_.vb);
  prepare(g_.a_trans, A_, lda_, M_, p_.ml, bm_, p_.la, p_.va, slots_a_, a_offset_, a_k_, a_start_, pre_a_);
  prepare(!g_.b_trans, B_, ldb_, N_, p_.nl, bn_, p_.lb, p_.vb, slots_b_, b_offset_, b_k_, b_start_, pre_b_);
  if (p_.tc) {
    a_step_ = g_.a_trans ? c64(p_.u) : b_.CreateMul(c64(p_.u), lda_);
    b_step_ = !g_.b_trans ? c64(p_.u) : b_.CreateMul(c64(p_.u), ldb_);
    auto [a, b] = operands();
    for (size_t s = 0; s < slots_a_.size(); ++s) a_shared_.push_back(shared_address(a, s));
    for (size_t s = 0; s < slots_b_.size(); ++s) b_shared_.push_back(shared_address(b, s));
  }

  accumulate_and_store(full, total, sm_ >= 90);
}

std::pair<llvm::Value*, llvm::Value*> GemmEmitter::tiles_along_m_and_n() {
  Value* num_m = b_.CreateUDiv(b_.CreateAdd(M_, c32(p_.ml - 1)), c32(p_.ml));
  return {num_m, b_.CreateUDiv(b_.CreateAdd(N_, c32(p_.nl - 1)), c32(p_.nl))};
}

void GemmEmitter::place_tile(Value* tile) {
  auto [num_m, num_n] = tiles_along_m_and_n();
  Value* group_width = b_.CreateMul(num_n, c32(p_.sw));
  Value* first_m = b_.CreateMul(b_.CreateUDiv(tile, group_width), c32(p_.sw));
  Value* group_rows = min32(b_.CreateSub(num_m, first_m), c32(p_.sw));
  Value* in_group = b_.CreateURem(tile, group_width);
  bm_ = b_.CreateAdd(first_m, b_.CreateURem(in_group, group_rows));
  bn_ = b_.CreateUDiv(in_group, group_rows);
}

// A tile loop numbers the tiles of all batches, batch after batch (gemm_tile_loop_blocks).
Value* GemmEmitter::tile_count() {
  auto [num_m, num_n] = tiles_along_m_and_n();
  return b_.CreateMul(b_.CreateMul(num_m, num_n), batches_);
}

void GemmEmitter::enter_tile(Value* tile) {
  auto [num_m, num_n] = tiles_along_m_and_n();
  Value* per_batch = b_.CreateMul(num_m, num_n);
  bz_ = b_.CreateUDiv(tile, per_batch);
  place_tile(b_.CreateURem(tile, per_batch));
}

// C's copy into the staging completes on an mbarrier of its own, once per tile where beta != 0.
void GemmEmitter::init_epilogue_barriers() {
  if (!tile_loop_ || !c_map_) return;
  for (int group = 0; group < (ping_pong_ ? 2 : 1); ++group)
    mbarrier_init(b_.CreateAdd(b_.CreatePtrToInt(smem_, i32_), c32(l_.c_barrier_offset(p_) + 8 * group)), 1);
}

// f32 on tensor cores (TC=1 and 2): the cells that come out NaN are computed again with FMA
// (TiledKernelBuilder::recompute_nan_cells_with) from a thread's rows of A and columns of B, clamped
// to the last row and column (cells past the edge are never stored).
void GemmEmitter::recompute_nan_cells() {
  if (!p_.tc || g_.dtype != ir::DType::f32) return;
  recompute_nan_cells_with([&] {
    std::vector<Value*> a_row, b_column;
    for (int i = 0; i < cell_rows(); ++i) {
      Value* m = min32(b_.CreateAdd(b_.CreateMul(bm_, c32(p_.ml)), cell_row(i)), b_.CreateSub(M_, c32(1)));
      a_row.push_back(b_.CreateSExt(m, i64_));
    }
    for (int j = 0; j < cell_columns(); ++j) {
      Value* n = min32(b_.CreateAdd(b_.CreateMul(bn_, c32(p_.nl)), cell_column(j)), b_.CreateSub(N_, c32(1)));
      b_column.push_back(b_.CreateSExt(n, i64_));
    }
    return [this, a_row, b_column](Value* k) {
      Value* k64 = b_.CreateSExt(k, i64_);
      auto element = [&](Value* base, Value* ld, bool k_contiguous, Value* mn) {
        Value* index = k_contiguous ? b_.CreateAdd(b_.CreateMul(mn, ld), k64) : b_.CreateAdd(b_.CreateMul(k64, ld), mn);
        return b_.CreateLoad(elem_, gep(elem_, base, index));
      };
      CellOperands out;
      for (Value* m : a_row) out.rows.push_back(element(A_, lda_, g_.a_trans, m));
      for (Value* n : b_column) out.columns.push_back(element(B_, ldb_, !g_.b_trans, n));
      return out;
    };
  });
}

// KG > 1 with atomics: C = beta * C (exactly 0 when beta = 0) before the blocks add their parts.
// Each thread takes one chunk of 16 bytes down a column: with one element per thread, and C read even
// for beta = 0, this kernel took 4.8 us of an f16 2560x128 split whose main kernel took 11.8.
void GemmEmitter::emit_prepare() {
  begin_kernel(name() + "_prepare", {gptr_, scalar_, i32_, i32_, i64_, i64_}, 256);
  auto arg = function_->arg_begin();
  Value *C = arg++, *beta = arg++, *M = arg++, *N = arg++, *ldc = arg++, *stride_c = arg++;
  const int v = gemm_prepare_chunk(g_.dtype);
  Value* index = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64_), c64(256)),
                              b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), i64_));
  Value* M64 = b_.CreateSExt(M, i64_);
  Value* chunks = b_.CreateUDiv(b_.CreateAdd(M64, c64(v - 1)), c64(v));  // per column
  Value* batch = b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z), i64_);
  if_then(b_.CreateICmpULT(index, b_.CreateMul(chunks, b_.CreateSExt(N, i64_))), [&] {
    Value* row = b_.CreateMul(b_.CreateURem(index, chunks), c64(v));
    Value* column = b_.CreateUDiv(index, chunks);
    Value* first = gep(elem_, C, b_.CreateAdd(b_.CreateMul(batch, stride_c), b_.CreateAdd(row, b_.CreateMul(column, ldc))));
    Value* keep = b_.CreateFCmpUNE(beta, llvm::ConstantFP::get(scalar_, 0.0));
    auto scaled = [&](Value* old) { return to_elem(b_.CreateFMul(beta, to_scalar(old))); };
    // A whole chunk on a 16-byte boundary is one vector store; a column's last chunk, or a chunk that
    // ldc, the batch stride or the pointer leave unaligned, is done element by element.
    Value* whole = b_.CreateAnd(b_.CreateICmpSLE(b_.CreateAdd(row, c64(v)), M64),
                                b_.CreateICmpEQ(b_.CreateAnd(b_.CreatePtrToInt(first, i64_), c64(15)), c64(0)));
    if_else(
        whole,
        [&] {
          auto* type = vec(elem_, v);
          if_else(
              keep,
              [&] {
                Value* old = b_.CreateAlignedLoad(type, first, llvm::Align(16));
                Value* out = llvm::PoisonValue::get(type);
                for (int i = 0; i < v; ++i) out = b_.CreateInsertElement(out, scaled(b_.CreateExtractElement(old, i)), i);
                b_.CreateAlignedStore(out, first, llvm::Align(16));
              },
              [&] { b_.CreateAlignedStore(zero(type), first, llvm::Align(16)); });
        },
        [&] {
          for (int i = 0; i < v; ++i)
            if_then(b_.CreateICmpSLT(b_.CreateAdd(row, c64(i)), M64), [&] {
              Value* ptr = gep(elem_, first, c64(i));
              if_else(
                  keep, [&] { b_.CreateStore(scaled(b_.CreateLoad(elem_, ptr)), ptr); },
                  [&] { b_.CreateStore(zero(elem_), ptr); });
            });
        });
  });
  // The main kernel may start once every block got here (it waits for the stores before its epilogue).
  // Not earlier: with the old prepare (an element per thread), main blocks placed beside prepare blocks
  // made some split kernels 13-15% slower on the H100; with this one a trigger at the start measured the
  // same as here (docs/split-k.md).
  if (sm_ >= 90) grid_dependency("launch_dependents");
  b_.CreateRetVoid();
}

// KG > 1 deterministic: C = alpha * sum over kz (in order) of W[batch][kz] + beta * C.
void GemmEmitter::emit_reduce() {
  begin_kernel(name() + "_reduce", {gptr_, gptr_, scalar_, scalar_, i32_, i32_, i64_, i64_}, 256);
  if (sm_ >= 90) grid_dependency("wait");  // launched to overlap the main kernel's last blocks
  auto arg = function_->arg_begin();
  Value *C = arg++, *W = arg++, *alpha = arg++, *beta = arg++, *M = arg++, *N = arg++, *ldc = arg++, *stride_c = arg++;
  Value* index = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64_), c64(256)),
                              b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), i64_));
  Value* M64 = b_.CreateSExt(M, i64_);
  Value* plane = b_.CreateMul(M64, b_.CreateSExt(N, i64_));
  Value* batch = b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z), i64_);
  if_then(b_.CreateICmpSLT(index, plane), [&] {
    // A loop, not unrolled: KG reaches 256, and a fixed order of additions is what makes it deterministic.
    Value* first = b_.CreateAdd(b_.CreateMul(b_.CreateMul(batch, c64(p_.kg)), plane), index);
    auto* sum_cell = local(scalar_, "sum");
    b_.CreateStore(zero(scalar_), sum_cell);
    for_loop(c32(p_.kg), [&](Value* kz) {
      Value* w = b_.CreateLoad(acc_scalar_, gep(acc_scalar_, W, b_.CreateAdd(first, b_.CreateMul(b_.CreateZExt(kz, i64_), plane))));
      b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(scalar_, sum_cell), to_scalar(w)), sum_cell);
    });
    Value* sum = b_.CreateLoad(scalar_, sum_cell);
    Value* ptr = gep(elem_, C, b_.CreateAdd(b_.CreateMul(batch, stride_c),
                                            b_.CreateAdd(b_.CreateSRem(index, M64), b_.CreateMul(b_.CreateSDiv(index, M64), ldc))));
    Value* result = b_.CreateFMul(alpha, sum);
    if_else(
        b_.CreateFCmpOEQ(beta, llvm::ConstantFP::get(scalar_, 0.0)), [&] { b_.CreateStore(to_elem(result), ptr); },
        [&] {
          Value* old = to_scalar(b_.CreateLoad(elem_, ptr));
          b_.CreateStore(to_elem(b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {beta, old, result})), ptr);
        });
  });
  b_.CreateRetVoid();
}

}  // namespace

GemmGrid gemm_grid(const ir::Gemm& g, const GemmParams& p, SplitMode mode) {
  GemmGrid grid;
  const auto tiles = gemm_block_tiles(g, p);
  grid.main = {static_cast<unsigned>(tiles), static_cast<unsigned>(p.kg), static_cast<unsigned>(g.batch)};
  const int chunk = gemm_prepare_chunk(g.dtype);
  const auto chunks = (g.m + chunk - 1) / chunk * g.n;
  grid.prepare = {static_cast<unsigned>((chunks + 255) / 256), 1, static_cast<unsigned>(g.batch)};
  grid.reduce = {static_cast<unsigned>((g.m * g.n + 255) / 256), 1, static_cast<unsigned>(g.batch)};
  if (p.kg > 1 && mode == SplitMode::deterministic) {
    std::size_t acc_bytes = g.dtype == ir::DType::f64 ? 8 : (g.dtype == ir::DType::f16 && !p.acc32 ? 2 : 4);
    grid.workspace_bytes = acc_bytes * g.m * g.n * p.kg * g.batch;
  }
  return grid;
}

unsigned gemm_tile_loop_blocks(const ir::Gemm& g, const GemmParams& p, std::int64_t resident) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(resident, 1, gemm_block_tiles(g, p) * g.batch));
}

std::array<GemmTensorBox, 2> gemm_tensor_boxes(const ir::Gemm& g, const GemmParams& p) {
  GemmLayout l(g.dtype, g.a_trans, g.b_trans, p);
  auto box = [&](bool k_contiguous, std::int64_t mn, std::int64_t ld, std::int64_t stride, int tile,
                 int per_instruction) {
    GemmTensorBox t;
    const int width = l.wgmma_width(p, k_contiguous, per_instruction);
    // K = 0 copies nothing, but a tensor map has no empty dimension.
    const auto k = static_cast<std::uint64_t>(std::max<std::int64_t>(g.k, 1));
    const auto other = k_contiguous ? static_cast<std::uint64_t>(mn) : k;
    t.dims = {k_contiguous ? k : static_cast<std::uint64_t>(mn), other, static_cast<std::uint64_t>(g.batch)};
    const auto ld_bytes = static_cast<std::uint64_t>(ld * l.elem);
    // With one batch the stride is never used, but must be valid.
    t.strides = {ld_bytes, g.batch > 1 ? static_cast<std::uint64_t>(stride * l.elem) : ld_bytes * other};
    t.box = k_contiguous ? std::array<std::uint32_t, 2>{static_cast<std::uint32_t>(p.u), static_cast<std::uint32_t>(tile)}
                         : std::array<std::uint32_t, 2>{static_cast<std::uint32_t>(width / l.elem),
                                                        static_cast<std::uint32_t>(p.u)};
    t.swizzle_bytes = width;
    return t;
  };
  return {box(g.a_trans, g.m, g.lda, g.stride_a, p.ml, 64), box(!g.b_trans, g.n, g.ldb, g.stride_b, p.nl, 16 * p.ns)};
}

bool gemm_stores_c_by_tma(const ir::Gemm& g, const GemmParams& p) {
  const auto elem = static_cast<std::int64_t>(ir::size_of(g.dtype));
  auto whole = [](std::int64_t bytes) { return bytes % 16 == 0; };
  return p.tma && p.kg == 1 && g.align_c % 16 == 0 && whole(g.m * elem) && whole(g.ldc * elem) &&
         (g.batch == 1 || whole(g.stride_c * elem));
}

GemmTensorBox gemm_c_tensor_box(const ir::Gemm& g, const GemmParams& p) {
  const std::uint64_t elem = ir::size_of(g.dtype), ldc_bytes = static_cast<std::uint64_t>(g.ldc) * elem;
  GemmTensorBox t;
  t.dims = {static_cast<std::uint64_t>(g.m), static_cast<std::uint64_t>(g.n), static_cast<std::uint64_t>(g.batch)};
  // With one batch the stride is never used, but must be valid.
  t.strides = {ldc_bytes, g.batch > 1 ? static_cast<std::uint64_t>(g.stride_c) * elem : ldc_bytes * t.dims[1]};
  t.box = {static_cast<std::uint32_t>(128 / elem), static_cast<std::uint32_t>(p.nl)};
  t.swizzle_bytes = 128;
  return t;
}

std::string emit_gemm_main(llvm::Module& module, const ir::Gemm& g, const GemmParams& p, int sm) {
  GemmEmitter main(module, g, p, SplitMode::atomic, sm);
  main.emit_main();
  return main.name();
}

GemmKernel emit_gemm(const ir::Gemm& g, const GemmParams& p, const Target& target, SplitMode mode) {
  if (auto legal = check_gemm_params(g.dtype, g.a_trans, g.b_trans, p, DeviceLimits{.sm = target.sm}); !legal)
    throw InvalidArgument("illegal GEMM parameters " + p.str() + ": " + legal.reason);
  auto start = std::chrono::steady_clock::now();
  // wgmma exists only in sm_90a's PTX; the legality check above admits TC=2 for sm_90 alone.
  Target target_for_params = target;
  if (p.tc == 2) target_for_params.arch_specific = true;
  llvm::LLVMContext ctx;
  auto module = make_nvptx_module(ctx, "isaac_gemm", target_for_params);
  GemmKernel kernel;
  {
    GemmEmitter main(*module, g, p, mode, target.sm);
    main.emit_main();
    kernel.main_name = main.name();
  }
  if (p.kg > 1) {
    GemmEmitter helper(*module, g, p, mode, target.sm);
    if (mode == SplitMode::atomic) {
      helper.emit_prepare();
      kernel.prepare_name = helper.name() + "_prepare";
    } else {
      helper.emit_reduce();
      kernel.reduce_name = helper.name() + "_reduce";
    }
  }
  kernel.ptx = compile_to_ptx(*module, target_for_params, Optimisation::light);
  kernel.overlaps_previous = target.sm >= 90;
  kernel.c_by_tma = gemm_stores_c_by_tma(g, p);
  kernel.tile_loop = gemm_tile_loop(g, p);
  kernel.threads = gemm_launch_threads(g, p);
  kernel.shared_bytes = kernel.tile_loop ? GemmLayout(g.dtype, g.a_trans, g.b_trans, p)
                                              .tile_loop_shared_bytes(p, gemm_ping_pong(g, p) ? 2 : 1)
                                         : gemm_shared_bytes(g.dtype, g.a_trans, g.b_trans, p);
  kernel.emit_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

}  // namespace isaac::lower
