#pragma once
// What the GEMM and CONV emitters share, in two layers:
//  - KernelBuilder: an llvm::IRBuilder around the kernel being built: constants, special registers,
//    structured control flow (if_then / if_else / for_loop), entry-block allocas, the barrier, and
//    stores / reductions predicated in inline PTX;
//  - TiledKernelBuilder: the GEMM template's tiling that the CONV template reuses (conv_layout.hpp):
//    load slots, the shared-memory stages, the outer products, the warp-group reduction and the
//    (double-buffered) main loop. Its subclass loads a stage into the prefetch registers.
#include "lower/gemm_layout.hpp"

#include <isaac/ir/dtype.hpp>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace isaac::lower {

class KernelBuilder {
 protected:
  using Value = llvm::Value;

  // `dtype` fixes the element type (elem_) and the arithmetic type (scalar_: f64 or f32).
  KernelBuilder(llvm::Module& module, ir::DType dtype);

  Value* c32(std::int64_t v) { return b_.getInt32(static_cast<std::uint32_t>(v)); }
  Value* c64(std::int64_t v) { return b_.getInt64(static_cast<std::uint64_t>(v)); }
  Value* sreg(llvm::Intrinsic::ID id) { return b_.CreateIntrinsic(id, {}, {}); }
  Value* min32(Value* a, Value* x) { return b_.CreateSelect(b_.CreateICmpSLT(a, x), a, x); }
  // An image index (n, row, column) flattened with n fastest (CHWN) or the column fastest (NCHW,
  // NHWC), split back with constant divisions: {n, row, column}.
  std::array<Value*, 3> split_image_index(Value* index, bool n_fastest, std::int64_t n, std::int64_t rows,
                                          std::int64_t columns) {
    if (n_fastest) {
      Value* image = b_.CreateURem(index, c32(n));
      Value* rest = b_.CreateUDiv(index, c32(n));
      Value* column = b_.CreateURem(rest, c32(columns));
      return {image, b_.CreateUDiv(rest, c32(columns)), column};
    }
    Value* column = b_.CreateURem(index, c32(columns));
    Value* rest = b_.CreateUDiv(index, c32(columns));
    Value* row = b_.CreateURem(rest, c32(rows));
    return {b_.CreateUDiv(rest, c32(rows)), row, column};
  }
  Value* gep(llvm::Type* t, Value* ptr, Value* index) { return b_.CreateInBoundsGEP(t, ptr, index); }
  Value* zero(llvm::Type* t) { return llvm::Constant::getNullValue(t); }
  llvm::Type* vec(llvm::Type* t, int n) { return n == 1 ? t : llvm::FixedVectorType::get(t, n); }
  Value* to_scalar(Value* v) { return v->getType() == scalar_ ? v : b_.CreateFPExt(v, scalar_); }
  Value* to_elem(Value* v) { return v->getType() == elem_ ? v : b_.CreateFPTrunc(v, elem_); }
  // The block's barrier; once barrier_threads_ is set, a barrier of that many threads (the TMA
  // producer warp takes no part in the barriers after the main loop).
  void barrier();
  // An alloca in the entry block of the kernel being built.
  llvm::AllocaInst* local(llvm::Type* t, const char* name);

  // Starts kernel `name` (pointer parameters noalias, .maxntid max_threads, one block per SM) and
  // places the builder in its entry block.
  llvm::Function* begin_kernel(const std::string& name, std::vector<llvm::Type*> params, int max_threads);
  void if_then(Value* cond, const std::function<void()>& then);
  void if_else(Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise);
  // for (t = 0; t < count; ++t) body(t), with count an i32.
  void for_loop(Value* count, const std::function<void(Value*)>& body);
  // for (t = first; t < end; t += step) body(t), all i32.
  void for_range(Value* first, Value* end, Value* step, const std::function<void(Value*)>& body);

  // Stores (op "st") or atomically adds (op "red") `value` to global `ptr` where `pred` holds.
  void predicated(const char* op, Value* ptr, Value* value, Value* pred);
  // Consecutive f16 values (an even count) packed in pairs as 32-bit words, the first in the low half.
  std::vector<Value*> half_pairs(const std::vector<Value*>& halves);
  // Stores `values` (consecutive elements, aligned to their total size) where `pred` holds.
  void predicated_vector_store(Value* ptr, std::vector<Value*> values, Value* pred);
  // Atomically adds `values` (consecutive elements, aligned to their total size) where `pred` holds,
  // with as few reductions as the target allows: f16 pairs as f16x2 words, and on sm_90 one
  // vector reduction of up to four f32 or f16x2 words.
  void predicated_vector_red(Value* ptr, std::vector<Value*> values, Value* pred, int sm);
  // An inline PTX statement without results, with side effects and a memory clobber.
  void ptx_statement(const std::string& text, const std::string& constraints, const std::vector<Value*>& args);
  // An empty asm with a memory clobber: memory accesses are not moved across it.
  void memory_fence();
  // sm_90 programmatic dependent launch (PTX griddepcontrol): "launch_dependents" lets the stream's
  // next kernel start early; "wait" blocks until the kernels before this one have finished and
  // their writes are visible (at once when this kernel was launched the usual way).
  void grid_dependency(const char* op);
  // cp.async (sm_80+): copies `bytes` (4, 8 or 16) from global to shared memory, of which the first
  // `source_bytes` are read and the rest zero-filled; commit closes a group, wait leaves at most
  // `pending` groups in flight. The shared address is an integer, of 32 or 64 bits.
  void async_copy(Value* shared_address, Value* global_ptr, int bytes, Value* source_bytes);
  void async_commit();
  void async_wait(int pending);
  // sm_90 mbarriers at 32-bit shared addresses, and TMA copies that complete on them:
  //  - init: a barrier whose phases complete after `arrivals` arrivals (and the bytes they expect);
  //  - expect_bytes: one arrival that also expects `bytes` from copies before the phase completes;
  //  - wait: until the phase of parity `parity` (0 or 1) has completed;
  //  - arrive: one arrival, with release semantics;
  //  - tensor_copy: cp.async.bulk.tensor of the box at `coordinates` (3 to 5 of them, i32) of the
  //    tensor map at generic address `map` into shared memory at `shared_address`, counted on `barrier`;
  //  - tensor_copy_im2col: the same from an im2col map, the window moved by the filter offsets
  //    `offsets` (one per spatial dimension, i16).
  void mbarrier_init(Value* barrier, int arrivals);
  void mbarrier_expect_bytes(Value* barrier, int bytes);
  void mbarrier_wait(Value* barrier, Value* parity);
  void mbarrier_arrive(Value* barrier);
  void tensor_copy(Value* shared_address, Value* map, const std::vector<Value*>& coordinates, Value* barrier);
  void tensor_copy_im2col(Value* shared_address, Value* map, const std::vector<Value*>& coordinates,
                          const std::vector<Value*>& offsets, Value* barrier);
  // Makes kernel parameters first .. first + count - 1 tensor maps: 128 bytes, 64-byte aligned, passed
  // by value and read where they were passed (grid constants). Returns their generic addresses.
  std::vector<Value*> tensor_map_parameters(int first, int count);

  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  llvm::Type *i32_, *i64_, *elem_, *scalar_;
  llvm::PointerType* gptr_;
  llvm::GlobalVariable* smem_;  // the dynamic shared memory, "isaac_smem"
  llvm::Function* function_ = nullptr;
  int barrier_threads_ = 0;
  Value* barrier_id_ = nullptr;  // with barrier_threads_: the named barrier (1 where null)
};

// Where a thread's share of an operand tile comes from: one entry per vector load.
struct LoadSlot {
  int c = 0, o = 0;  // compile-time part of the contiguous / other tile coordinates
};

// Fragment element i of a thread's MS (or NS) lies at chunk i / fv, lane i % fv: chunks are spread
// over the tile so that a warp's vector reads of shared memory fall in distinct banks.
inline int fragment_offset(int i, int fv, int tile, int thread_tile) {
  return (i / fv) * (tile * fv / thread_tile) + i % fv;
}

class TiledKernelBuilder : public KernelBuilder {
 protected:
  // `t` in GEMM terms (conv_as_gemm for CONV); a_trans: A's contiguous axis is K; b_trans: B's is N.
  // half_acc: f16 accumulators, two per <2 x half> cell. sm: the target's compute capability.
  TiledKernelBuilder(llvm::Module& module, ir::DType dtype, const GemmParams& t, bool a_trans, bool b_trans,
                     bool half_acc, int sm);
  virtual ~TiledKernelBuilder() = default;

  // Loads stage `tile` of this block's K range into pre_a_ / pre_b_; `predicated` for the K tail.
  virtual void load_tile(Value* tile, bool predicated) = 0;
  // Writes warp group 0's accumulators to the output.
  virtual void epilogue() = 0;
  // TC=1: copies stage `tile` of this block's K range into shared-memory buffer `buffer` with
  // cp.async (zeros past the K range where `predicated`).
  virtual void copy_tile_async(Value* tile, Value* buffer, bool predicated) = 0;
  // TMA=1: one thread copies stage `tile` into buffer `buffer` with tensor copies that complete on
  // the mbarrier at `barrier`, which expects the stage's bytes.
  virtual void copy_tile_tma(Value* tile, Value* buffer, Value* barrier);
  // TMA=1: where the stages' mbarriers lie in shared memory (bytes).
  virtual int barriers_offset() const { return l_.barriers_offset(t_); }
  // A tile loop (tile_loop_): the tiles a block's loop runs over, and the set-up of tile `tile`'s
  // coordinates before its copies and its epilogue; mbarriers of the epilogue's own, initialised with
  // the stages'.
  virtual Value* tile_count() = 0;
  virtual void enter_tile(Value* tile) = 0;
  virtual void init_epilogue_barriers() {}
  // After a tile loop's last tile: waits until the tiles' stores have read their staging.
  virtual void finish_tile_stores() {}
  // Called between the main loop and the warp-group reduction: the f32 tensor-core kernels compute
  // again, with FMA, the cells that came out NaN (recompute_nan_cells_with).
  virtual void recompute_nan_cells() {}
  // A thread's operands at one reduction index: per row of its cells an element of A, per column
  // one of B.
  struct CellOperands {
    std::vector<Value*> rows, columns;
  };
  using CellReader = std::function<CellOperands(Value* k)>;
  // f32 on tensor cores: an infinite or NaN element of A or B, or one whose TF32 rounding overflows,
  // leaves NaN in every cell of its row or column (compute_stage_tf32), where IEEE arithmetic may
  // give +-inf or a finite number. A thread with a NaN cell computes all its cells again with FMA
  // over the same reduction indices (its block's share, its warp group's steps of each stage), which
  // gives IEEE's results; other threads pay one test per cell. `reader` is called in that branch
  // alone, so that what it sets up costs the other threads nothing.
  void recompute_nan_cells_with(const std::function<CellReader()>& reader);
  int stage_bytes() const { return (l_.stage_a + l_.stage_b) * l_.elem; }
  bool a_rows_k() const { return l_.a_rows_k; }
  bool b_rows_k() const { return l_.b_rows_k; }

  std::vector<LoadSlot> slots(int contiguous, int other, int along, int vector) const;
  // This thread's place in a tile load with `along` threads side by side on the contiguous axis:
  // its contiguous offset (in elements) and its row. TC=2 orders the threads rows first in groups
  // of eight, so that eight consecutive threads copy one 16-byte column of eight consecutive rows,
  // which the swizzle spreads over all banks.
  std::pair<Value*, Value*> load_position(int along, int vector);
  // TC=2: an operand's shared-memory rows are `width` bytes (32, 64 or 128: wgmma's swizzle modes)
  // of K (K-contiguous operands, width 2U) or of M/N (the others); the element offset of (mn, k)
  // in a stage of such rows, swizzled.
  int wgmma_width(bool k_contiguous, int mn_per_instruction) const;
  Value* wgmma_offset(Value* mn, Value* k, bool k_contiguous, int width);
  // Where a copy puts element (r, c) of an operand's stage (r along the global tile's other axis, c
  // along its contiguous one), in elements: rows of `pitch`, or with TC=2 wgmma's swizzled rows of
  // `width` bytes, whose order follows `k_contiguous`.
  Value* stage_offset(Value* r, Value* c, int pitch, bool k_contiguous, int width);
  // The byte offset of (mn, k) in such a stage before the swizzle: what a descriptor's start holds
  // (the tensor cores swizzle the addresses they form).
  Value* wgmma_unswizzled_bytes(Value* mn, Value* k, bool k_contiguous, int width);
  // tm_, tn_, tk_ from tid_.
  void thread_coordinates();
  // The accumulator cells, zeroed.
  void allocate_accumulators();
  void zero_accumulators();
  // Writes the prefetch registers into shared-memory stage `stage`, transposing where the global
  // contiguous axis is K.
  void store_tile(Value* stage);
  // Accumulates stage `stage`'s outer products (or, TC=1, its warp-level mma.sync products).
  void compute_stage(Value* stage);
  void compute_stage_mma(Value* stage);
  void compute_stage_dmma(Value* stage);
  void compute_stage_tf32(Value* stage);
  std::pair<Value*, Value*> lane_fragment_bases(Value* stage);
  void compute_stage_wgmma(Value* stage);
  // TC=2 f32: splits stage `stage` into split buffer `split` (GemmLayout::split_region): each
  // element x as hi = x rounded to TF32 and lo = x - hi rounded to TF32, both K-contiguous in
  // wgmma's swizzled rows, whatever the stage's order. Every thread takes 16-byte chunks of it.
  void split_stage(Value* stage, Value* split);
  // TC=2 f32: per 8-deep step, the three TF32 products lo x hi, hi x lo, hi x hi of each m64nNk8
  // tile from split buffer `split`, as compute_stage_tf32 does with mma.sync.
  void compute_stage_wgmma_tf32(Value* split);
  // wgmma.mma_async m64nNk16, f32 += f16 x f16 (f32: m64nNk8, f32 += tf32 x tf32): each product
  // adds A x B (shared-memory descriptors) to its N/2 accumulator cells. All of them, in order, go into
  // one inline-asm statement, which ties each cell in and out once.
  struct WgmmaProduct {
    Value *a, *b;
    std::vector<llvm::AllocaInst*> cells;
  };
  void wgmma(const std::vector<WgmmaProduct>& products, int n);
  // The accumulator cells of m64nN tile `tile` of the warp group's rows, in wgmma's register order.
  std::vector<llvm::AllocaInst*> tile_cells(int tile, int n);
  // The shared-memory matrix descriptor of an operand whose rows are `width` bytes, starting at
  // element `offset` of the dynamic shared memory; `leading` is the byte stride between the
  // `width`-wide column blocks of an M/N-contiguous operand.
  Value* wgmma_descriptor(Value* offset, int width, int leading);
  // wgmma.fence / commit_group / wait_group, and an empty asm that ties the accumulators to the
  // point where it stands, so that LLVM neither reads them before a wait nor moves them across a fence.
  void wgmma_op(const std::string& op);
  void pin_accumulators();
  // The accumulator cells a thread holds: rows x columns, cell (i, j) at acc_cells_[i * columns + j].
  int cell_rows() const { return t_.tc == 2 ? t_.ms / 4 : t_.ms; }
  int cell_columns() const { return t_.tc == 2 ? 4 * t_.ns : t_.ns; }
  Value* dmma_m16n8k4(Value* a0, Value* a1, Value* b, const std::vector<Value*>& c);
  // Where accumulator cell (i, j) of this thread lies in the block's ML x NL tile: row and column.
  Value* cell_row(int i);
  Value* cell_column(int j);
  // Writes scale x each accumulator cell (as acc_) to shared memory at element index(row, column) of
  // the cell's place in the block's tile: the staging of an epilogue that stores runs of 16 bytes.
  void stage_scaled_cells(Value* scale, const std::function<Value*(Value* row, Value* column)>& index);
  // sm_90, 16-bit elements: writes each accumulator cell (i, j) as value(i, j, old) rounded to elem_
  // into shared memory with stmatrix, in place of a store per cell. Each 8 x 8 block of a warp's
  // cells (cells (i, 2 jj) and (i, 2 jj + 1) of its lanes, as mma.sync's m16n8 fragments and wgmma's
  // place them) is one matrix; `offset(row, column)` is the byte offset of the 16 bytes that hold the
  // tile's 8 elements from (row, column) down the column with `trans`, along the row without.
  // With `read_old`, ldmatrix first reads the 16-bit values there, which value gets as `old`
  // (otherwise null).
  void stage_matrices(bool trans, const std::function<Value*(Value* row, Value* column)>& offset, bool read_old,
                      const std::function<Value*(int i, int j, Value* old)>& value);
  // Reads a staged tile back as runs of 16 / elem output elements, one per thread and pass: the
  // staging's lines, from element `first` of `type` in shared memory and `pitch` elements apart, are
  // the tile's columns (runs down M) or, with `along_n`, its rows. `visit` gets the run, its first
  // element's row and column in the tile, and whether the run lies in the tile.
  void for_each_staged_run(int first, int pitch, bool along_n, llvm::Type* type,
                           const std::function<void(Value* run, Value* row, Value* column, Value* in_tile)>& visit);
  // Warp groups 1..KL-1 hand their partial sums to group 0 through shared memory.
  void reduce_warp_groups();
  // The stages of [k_begin_, k_end_): `total` of them, the first `full` without K tail.
  void main_loop(Value* full, Value* total);
  void main_loop_async(Value* full, Value* total);
  void main_loop_tma(Value* total);
  // TMA=1: thread 0 initialises the stages' mbarriers (stage_barriers_), then a block barrier. A
  // buffer's "filled" one (filled_barrier) completes when a stage's bytes have landed, with a producer
  // warp its "emptied" one (emptied_barrier) when every consumer warp is done reading it.
  void init_stage_barriers();
  Value* filled_barrier(Value* buffer);
  Value* emptied_barrier(Value* buffer);
  // Copies K tile `tile` into buffer `buffer`, counted on its filled mbarrier; waits for stage `stage`
  // (counted over the block's whole run) to have landed in its buffer.
  void copy_stage_tma(Value* tile, Value* buffer);
  void wait_stage_filled(Value* stage);
  // The ring of buffers that stages run through: the buffer of stage `stage`, and how many times the
  // ring went round before it.
  int ring_size() const { return l_.stages; }
  Value* ring_buffer(Value* stage);
  Value* ring_use(Value* stage);
  // With a producer warp: the producer's copies and the consumers' wgmma of the block's stages first ..
  // first + total - 1 (null: from 0), which are K tiles 0 .. total - 1 of its tile.
  void produce_stages(Value* total, Value* first);
  void consume_stages(Value* total, Value* first);
  // The main loop and the epilogue of each of the block's tiles (tile_loop_), then the return; with
  // ping_pong_, two consumer groups take the tiles and the turns of their main loops in turn, each
  // with its own named barrier, C mbarrier and staging.
  void tile_loop_tma(Value* total);
  // A ping-pong group waits for its turn (bar.sync on its group's turn barrier), or gives the other
  // group `group` its turn (bar.arrive on that group's).
  void turn_barrier(bool arrive, Value* group);
  // The tile's consumers: its main loop, then its epilogue. A ping-pong group's main loop waits for
  // its turn where `wait_turn` holds and gives the other group its turn where `give_turn` does.
  void consume_tile(Value* tile, Value* total, llvm::AllocaInst* stages_done, Value* wait_turn, Value* give_turn);
  // The kernel's body after its set-up: accumulators, main loop, warp-group reduction, then the
  // epilogue in warp group 0, and the return. With `overlap_previous` (sm_90), the main loop may
  // run while the kernel before (a split's prepare kernel) still does, and the epilogue waits for it.
  void accumulate_and_store(Value* full, Value* total, bool overlap_previous);

  GemmParams t_;
  GemmLayout l_;
  int sm_;
  bool a_k_contiguous_, b_k_contiguous_, half_acc_;
  llvm::Type *acc_, *acc_scalar_;
  Value *tid_ = nullptr, *tm_ = nullptr, *tn_ = nullptr, *tk_ = nullptr;
  // TC=1: the warp's tile position (in warp tiles) and the lane's mma coordinates: lane / 4, lane % 4.
  // TC=2: wm_, wn_ place the warp group, warp_ is the warp within it.
  Value *wm_ = nullptr, *wn_ = nullptr, *lane_ = nullptr, *group_ = nullptr, *quad_ = nullptr, *warp_ = nullptr;
  Value *k_begin_ = nullptr, *k_end_ = nullptr;
  bool producer_warp_ = false;  // TMA=1: tma_producer_warp (GEMM), conv_tma_producer_warp (CONV)
  bool tile_loop_ = false;      // GEMM: gemm_tile_loop; CONV: conv_tile_loop
  bool ping_pong_ = false;      // GEMM: gemm_ping_pong
  // A stage's wgmma products in one inline-asm statement (compute_stage_wgmma). GEMM only: ptxas makes
  // the same cubins of GEMM's PTX either way, but not of every CONV kernel's (docs/emission.md).
  bool one_wgmma_statement_ = false;
  // A ping-pong tile loop: the consumer group (0 or 1).
  Value* consumer_group_ = nullptr;
  Value* stage_barriers_ = nullptr;
  // A tile loop: 0 or 1, the parity of the tiles the block (a ping-pong loop: the consumer group) has
  // stored (a phase of the epilogue's mbarriers).
  llvm::AllocaInst* tile_parity_ = nullptr;
  std::vector<LoadSlot> slots_a_, slots_b_;
  std::vector<llvm::AllocaInst*> pre_a_, pre_b_;  // per slot: the prefetched vector
  std::vector<llvm::AllocaInst*> acc_cells_;      // MS*NS (or MS*NS/2 f16x2) accumulators
};

}  // namespace isaac::lower
