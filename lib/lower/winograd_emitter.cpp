// The CONV template's WG=1 kernels: Winograd F(2x2, RxS) fused into one kernel, as LLVM IR through
// NVPTX to PTX.
//
// With E = (R+1)(S+1) planes, the convolution becomes, per plane e, a product over the channels:
//   M_e(k, t) = sum_c U_e(c, k) V_e(c, t),   U = G g Gt (the filter, per (k, c)),
//                                            V = Bt d B (the (R+1) x (S+1) input tile of output tile t),
// and each 2 x 2 output tile is At M A. The transform kernel writes U to a workspace, planes
// outermost, K and C padded with zeros to whole tiles: W[(e * Cp + c) * Kp + k]. Block (bt, bk) of
// the main kernel then runs over C, U channels per stage:
//  - each thread loads whole input tiles (PL x U of them per stage) into registers, zeros where a tap
//    lies in the padding or past C, transforms them, and writes the E values to shared memory;
//  - the stage's E x U x KL slice of W is copied to shared memory with cp.async;
//  - the threads form CL groups, each of which takes E / CL of the planes: each thread accumulates
//    its KS filters x PS tiles of its group's planes;
// and at the end each thread applies At . A to its own accumulators (CL = 1), or the groups write
// their planes to shared memory and each thread transforms whole (filter, tile) pairs from there
// (CL > 1), and writes the outputs through the epilogue. Splitting the planes lets a thread hold a
// larger KS x PS tile, and so read fewer shared-memory values per FMA, within the same registers.
// With DB=1 the next stage's tiles are loaded while this one is multiplied.
// Every extent and stride is an immediate, as in the direct kernel.
//
// WG=2 (F(4x4, RxS), 64 planes for 5 x 5) splits the same arithmetic into four kernels: the filter
// transform as above (K padded to 8 and C unpadded), the input transform of one (tile, channel) per
// thread into V[(e * C + c) * Tp + t], GEMM's own kernel for M_e = V_e U_e over the planes as a batch,
// and the output transform of one (tile, filter) per thread, M[(e * K + k) * Tp + t], through the
// epilogue. The planes go through memory, but the product runs as a tuned GEMM, and F(4x4) needs
// 6.25x fewer multiplications than direct convolution for 5 x 5 filters (2.78x for F(2x2)).
#include "lower/gemm_main.hpp"
#include "lower/kernel_builder.hpp"
#include "lower/nvptx_backend.hpp"
#include "lower/winograd_layout.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/winograd.hpp>

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <fmt/format.h>

#include <chrono>

namespace isaac::lower {

namespace {

using llvm::Value;

class WinogradEmitter : public KernelBuilder {
 public:
  WinogradEmitter(llvm::Module& module, const ir::Conv& v, const ConvParams& p, const ConvEpilogue& epilogue)
      : KernelBuilder(module, v.dtype),
        v_(v),
        p_(p),
        epi_(epilogue),
        elem_bytes_(static_cast<int>(ir::size_of(v.dtype))),
        wh_(winograd_matrices(p.wg == 2 ? 4 : 2, static_cast<int>(v.r))),
        ww_(winograd_matrices(p.wg == 2 ? 4 : 2, static_cast<int>(v.s))),
        shape_(winograd_shape(v, p)) {}

  std::string name() const {
    return fmt::format("isaac_conv_winograd_{}_{}_{}", ir::name(v_.dtype), ir::name(v_.input_layout),
                       ir::name(v_.filter_layout));
  }
  void emit_main();
  void emit_transform();
  // WG=2: the input's planes into V, and the GEMM's products M back to pixels.
  void emit_input_transform();
  void emit_output_transform();

 private:
  struct Tile {
    Value *n, *tp, *tq;
  };
  Tile decompose(Value* tile);
  // sum_i coefficients[i] * values[i], skipping zeros and multiplying by +-1 as additions.
  Value* combine(const double* coefficients, const std::vector<Value*>& values);
  // L X Rt, row-major, for L of `rows` x n, X of n x `columns` and R of m x `columns`: rows x m.
  std::vector<Value*> sandwich(const std::vector<double>& l, int rows, const std::vector<Value*>& x, int columns,
                               const std::vector<double>& r);
  // Loads stage `stage`'s input tiles into raw_.
  void load_tiles(Value* stage);
  // Transforms raw_ and writes the planes to shared-memory buffer `buffer`.
  void store_planes(Value* buffer);
  // cp.async of stage `stage`'s slice of the transformed filter into buffer `buffer`.
  void copy_filter(Value* stage, Value* buffer);
  void multiply(Value* buffer);
  void epilogue();
  // Writes the m x m `pixels` of filter k and tile t through alpha, beta (read_o), bias and relu.
  void store_tile(Value* k, Value* t, const std::vector<Value*>& pixels, bool read_o);
  std::vector<Value*> output_transform(const std::vector<Value*>& planes) {
    return sandwich(wh_.at, shape_.m, planes, ww_.alpha, ww_.at);
  }
  Value* global_filter(Value* k_local) { return b_.CreateAdd(b_.CreateMul(bn_, c32(p_.kl)), k_local); }
  Value* global_tile(Value* t_local) { return b_.CreateAdd(b_.CreateMul(bm_, c32(p_.pl)), t_local); }
  Value* smem_v(Value* buffer, Value* index) { return gep(elem_, smem_, b_.CreateAdd(b_.CreateMul(buffer, c32(shape_.stage_elements)), index)); }
  Value* smem_u(Value* buffer, Value* index) {
    return smem_v(buffer, b_.CreateAdd(c32(shape_.planes * p_.u * p_.pl), index));
  }
  // `count` consecutive elements of shared memory from `ptr`, in vectors of up to 16 bytes.
  std::vector<Value*> load_run(Value* ptr, int count);

  const ir::Conv& v_;
  ConvParams p_;
  ConvEpilogue epi_;
  int elem_bytes_;
  WinogradMatrices wh_, ww_;
  WinogradShape shape_;

  Value *O_, *I_, *W_, *bias_, *alpha_, *beta_;
  Value *tid_, *bm_, *bn_, *tt_, *tk_, *group_;
  // Per input tile a thread loads: its place in the stage, its base offset, which rows and columns
  // of its (R+1) x (S+1) taps lie in the image, and the registers its taps are loaded into.
  struct TileSlot {
    Value *local_tile, *channel, *base;
    Value* valid = nullptr;  // whether the thread has this slot's tile (null: always)
    std::vector<Value*> row_inside, column_inside;
    std::vector<llvm::AllocaInst*> raw;
  };
  std::vector<TileSlot> slots_;
  std::vector<llvm::AllocaInst*> acc_;  // [(e * KS + i) * PS + j], e over the group's planes
};

WinogradEmitter::Tile WinogradEmitter::decompose(Value* tile) {
  // n fastest for CHWN, as the input's contiguous axis.
  auto [n, tp, tq] = split_image_index(tile, v_.input_layout == ir::ImageLayout::chwn, v_.n, shape_.tiles_p,
                                       shape_.tiles_q);
  return {n, tp, tq};
}

Value* WinogradEmitter::combine(const double* coefficients, const std::vector<Value*>& values) {
  Value* sum = nullptr;
  for (size_t i = 0; i < values.size(); ++i) {
    double c = coefficients[i];
    if (c == 0) continue;
    Value* term = values[i];
    if (c == -1 && sum) {
      sum = b_.CreateFSub(sum, term);
      continue;
    }
    if (c != 1) term = b_.CreateFMul(llvm::ConstantFP::get(term->getType(), c), term);
    sum = sum ? b_.CreateFAdd(sum, term) : term;
  }
  return sum ? sum : zero(values.front()->getType());
}

std::vector<Value*> WinogradEmitter::sandwich(const std::vector<double>& l, int rows, const std::vector<Value*>& x,
                                              int columns, const std::vector<double>& r) {
  const int n = static_cast<int>(x.size()) / columns, m = static_cast<int>(r.size()) / columns;
  std::vector<Value*> left(static_cast<size_t>(rows * columns)), out(static_cast<size_t>(rows * m));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < columns; ++j) {
      std::vector<Value*> column;
      for (int k = 0; k < n; ++k) column.push_back(x[k * columns + j]);
      left[i * columns + j] = combine(&l[i * n], column);
    }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < m; ++j)
      out[i * m + j] = combine(&r[j * columns], std::vector<Value*>(left.begin() + i * columns, left.begin() + (i + 1) * columns));
  return out;
}

std::vector<Value*> WinogradEmitter::load_run(Value* ptr, int count) {
  std::vector<Value*> out;
  const int per_vector = std::max(1, std::min(count, 16 / elem_bytes_));
  for (int i = 0; i < count; i += per_vector) {
    llvm::Type* t = vec(elem_, per_vector);
    Value* x = b_.CreateAlignedLoad(t, gep(elem_, ptr, c32(i)), llvm::Align(per_vector * elem_bytes_));
    for (int j = 0; j < per_vector; ++j) out.push_back(per_vector == 1 ? x : b_.CreateExtractElement(x, c32(j)));
  }
  return out;
}

void WinogradEmitter::load_tiles(Value* stage) {
  const auto& is = v_.input_strides;
  const int ah = wh_.alpha, aw = ww_.alpha;
  for (TileSlot& slot : slots_) {
    Value* c = b_.CreateAdd(b_.CreateMul(stage, c32(p_.u)), slot.channel);
    Value* channel_inside = b_.CreateICmpULT(c, c32(v_.c));
    if (slot.valid) channel_inside = b_.CreateAnd(channel_inside, slot.valid);
    Value* base = b_.CreateAdd(slot.base, b_.CreateMul(c, c32(is[1])));
    for (int a = 0; a < ah; ++a)
      for (int s = 0; s < aw; ++s) {
        Value* inside = b_.CreateAnd(channel_inside, b_.CreateAnd(slot.row_inside[a], slot.column_inside[s]));
        Value* offset = b_.CreateSelect(inside, b_.CreateAdd(base, c32(a * is[2] + s * is[3])), c32(0));
        Value* x = b_.CreateAlignedLoad(elem_, gep(elem_, I_, b_.CreateSExt(offset, i64_)), llvm::Align(elem_bytes_));
        b_.CreateStore(b_.CreateSelect(inside, x, zero(elem_)), slot.raw[a * aw + s]);
      }
  }
}

void WinogradEmitter::store_planes(Value* buffer) {
  const int ah = wh_.alpha, aw = ww_.alpha;
  for (TileSlot& slot : slots_) {
    auto store = [&] {
      std::vector<Value*> d;
      for (auto* cell : slot.raw) d.push_back(b_.CreateLoad(elem_, cell));
      const std::vector<Value*> planes = sandwich(wh_.bt, ah, d, aw, ww_.bt);
      Value* place = b_.CreateAdd(b_.CreateMul(slot.channel, c32(p_.pl)), slot.local_tile);
      for (int e = 0; e < ah * aw; ++e)
        b_.CreateAlignedStore(planes[e], smem_v(buffer, b_.CreateAdd(c32(e * p_.u * p_.pl), place)),
                              llvm::Align(elem_bytes_));
    };
    if (slot.valid) if_then(slot.valid, store);
    else store();
  }
}

void WinogradEmitter::copy_filter(Value* stage, Value* buffer) {
  const int per_copy = 16 / elem_bytes_;
  const int copies = shape_.planes * p_.u * p_.kl / per_copy;
  const int threads = p_.threads();
  for (int first = 0; first < copies; first += threads) {
    Value* j = b_.CreateAdd(tid_, c32(first));
    auto body = [&] {
      Value* flat = b_.CreateMul(j, c32(per_copy));
      Value* k = b_.CreateURem(flat, c32(p_.kl));
      Value* rest = b_.CreateUDiv(flat, c32(p_.kl));
      Value* c = b_.CreateURem(rest, c32(p_.u));
      Value* e = b_.CreateUDiv(rest, c32(p_.u));
      Value* row = b_.CreateAdd(b_.CreateMul(e, c32(shape_.padded_c)), b_.CreateAdd(b_.CreateMul(stage, c32(p_.u)), c));
      Value* global = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(row, i64_), c64(shape_.padded_k)),
                                   b_.CreateZExt(b_.CreateAdd(b_.CreateMul(bn_, c32(p_.kl)), k), i64_));
      Value* shared = smem_u(buffer, b_.CreateAdd(b_.CreateMul(rest, c32(p_.kl)), k));
      async_copy(b_.CreatePtrToInt(shared, i64_), gep(elem_, W_, global), 16, c32(16));
    };
    if (first + threads <= copies) body();
    else if_then(b_.CreateICmpULT(j, c32(copies)), body);
  }
}

void WinogradEmitter::multiply(Value* buffer) {
  for_loop(c32(p_.u), [&](Value* c) {
    Value* first_row = b_.CreateAdd(b_.CreateMul(group_, c32(shape_.group_planes * p_.u)), c);
    for (int e = 0; e < shape_.group_planes; ++e) {
      Value* row = b_.CreateAdd(c32(e * p_.u), first_row);
      std::vector<Value*> u =
          load_run(smem_u(buffer, b_.CreateAdd(b_.CreateMul(row, c32(p_.kl)), b_.CreateMul(tk_, c32(p_.ks)))), p_.ks);
      std::vector<Value*> v =
          load_run(smem_v(buffer, b_.CreateAdd(b_.CreateMul(row, c32(p_.pl)), b_.CreateMul(tt_, c32(p_.ps)))), p_.ps);
      for (int i = 0; i < p_.ks; ++i)
        for (int j = 0; j < p_.ps; ++j) {
          auto* cell = acc_[(e * p_.ks + i) * p_.ps + j];
          Value* sum = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_}, {u[i], v[j], b_.CreateLoad(scalar_, cell)});
          b_.CreateStore(sum, cell);
        }
    }
  });
}

void WinogradEmitter::store_tile(Value* k, Value* t, const std::vector<Value*>& pixels, bool read_o) {
  const auto& os = v_.output_strides;
  const int m = shape_.m;
  Value* filter_ok = b_.CreateICmpULT(k, c32(v_.k));
  Value* filter = b_.CreateZExt(min32(k, c32(v_.k - 1)), i64_);
  Value* bias = epi_.bias ? b_.CreateAlignedLoad(elem_, gep(elem_, bias_, filter), llvm::Align(elem_bytes_)) : nullptr;
  Value* exists = b_.CreateAnd(filter_ok, b_.CreateICmpULT(t, c32(shape_.tiles)));
  Tile tile = decompose(min32(t, c32(shape_.tiles - 1)));
  Value* p0 = b_.CreateMul(tile.tp, c32(m));
  Value* q0 = b_.CreateMul(tile.tq, c32(m));
  auto wide = [&](Value* x, std::int64_t stride) { return b_.CreateMul(b_.CreateZExt(x, i64_), c64(stride)); };
  Value* base = b_.CreateAdd(b_.CreateAdd(wide(tile.n, os[0]), b_.CreateMul(filter, c64(os[1]))),
                             b_.CreateAdd(wide(p0, os[2]), wide(q0, os[3])));
  std::vector<Value*> row_ok{exists}, column_ok{b_.getTrue()};
  for (int x = 1; x < m; ++x) {
    row_ok.push_back(b_.CreateAnd(exists, b_.CreateICmpULT(b_.CreateAdd(p0, c32(x)), c32(v_.p))));
    column_ok.push_back(b_.CreateICmpULT(b_.CreateAdd(q0, c32(x)), c32(v_.q)));
  }
  for (int x = 0; x < m; ++x)
    for (int y = 0; y < m; ++y) {
      Value* value = b_.CreateFMul(alpha_, pixels[x * m + y]);
      Value* ok = y ? b_.CreateAnd(row_ok[x], column_ok[y]) : row_ok[x];
      // Pixels past P or Q have no place of their own: point them at the output's first.
      Value* ptr = gep(elem_, O_, b_.CreateSelect(ok, b_.CreateAdd(base, c64(x * os[2] + y * os[3])), c64(0)));
      if (read_o)
        value = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_},
                                   {beta_, b_.CreateAlignedLoad(elem_, ptr, llvm::Align(elem_bytes_)), value});
      if (bias) value = b_.CreateFAdd(value, bias);
      if (epi_.relu) value = b_.CreateSelect(b_.CreateFCmpOGT(value, zero(scalar_)), value, zero(scalar_));
      predicated("st", ptr, value, ok);
    }
}

void WinogradEmitter::epilogue() {
  auto own_tiles = [&](bool read_o) {
    for (int i = 0; i < p_.ks; ++i)
      for (int j = 0; j < p_.ps; ++j) {
        std::vector<Value*> m;
        for (int e = 0; e < shape_.planes; ++e) m.push_back(b_.CreateLoad(scalar_, acc_[(e * p_.ks + i) * p_.ps + j]));
        store_tile(global_filter(b_.CreateAdd(b_.CreateMul(tk_, c32(p_.ks)), c32(i))),
                   global_tile(b_.CreateAdd(b_.CreateMul(tt_, c32(p_.ps)), c32(j))), output_transform(m), read_o);
      }
  };
  // CL > 1: the planes meet in shared memory, [(e * KL + filter) * PL + tile], and consecutive
  // threads take consecutive tiles of a filter, transform all its planes and store its pixels.
  const int pairs = p_.kl * p_.pl, threads = p_.threads();
  auto shared_tiles = [&](bool read_o) {
    for (int first = 0; first < pairs; first += threads) {
      Value* pair = b_.CreateAdd(tid_, c32(first));
      auto body = [&] {
        std::vector<Value*> m;
        for (int e = 0; e < shape_.planes; ++e)
          m.push_back(b_.CreateAlignedLoad(scalar_, smem_v(c32(0), b_.CreateAdd(c32(e * pairs), pair)),
                                           llvm::Align(elem_bytes_)));
        store_tile(global_filter(b_.CreateUDiv(pair, c32(p_.pl))), global_tile(b_.CreateURem(pair, c32(p_.pl))),
                   output_transform(m), read_o);
      };
      if (first + threads <= pairs) body();
      else if_then(b_.CreateICmpULT(pair, c32(pairs)), body);
    }
  };
  if (p_.cl > 1) {
    for (int e = 0; e < shape_.group_planes; ++e)
      for (int i = 0; i < p_.ks; ++i) {
        Value* filter = b_.CreateAdd(b_.CreateMul(tk_, c32(p_.ks)), c32(i));
        Value* plane = b_.CreateAdd(b_.CreateMul(group_, c32(shape_.group_planes)), c32(e));
        Value* row = b_.CreateAdd(b_.CreateMul(plane, c32(p_.kl)), filter);
        Value* first = b_.CreateAdd(b_.CreateMul(row, c32(p_.pl)), b_.CreateMul(tt_, c32(p_.ps)));
        for (int j = 0; j < p_.ps; ++j)
          b_.CreateAlignedStore(b_.CreateLoad(scalar_, acc_[(e * p_.ks + i) * p_.ps + j]),
                                smem_v(c32(0), b_.CreateAdd(first, c32(j))), llvm::Align(elem_bytes_));
      }
    barrier();
  }
  auto write = [&](bool read_o) { p_.cl > 1 ? shared_tiles(read_o) : own_tiles(read_o); };
  // beta = 0 must not read O: it may hold NaNs.
  if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { write(false); }, [&] { write(true); });
}

void WinogradEmitter::emit_main() {
  const int threads = p_.threads();
  begin_kernel(name(), {gptr_, gptr_, gptr_, gptr_, gptr_, scalar_, scalar_}, threads);
  for (int a = 1; a <= 4; ++a) function_->getArg(a)->addAttr(llvm::Attribute::ReadOnly);
  auto arg = function_->arg_begin();
  O_ = arg++, I_ = arg++, W_ = arg++, arg++, bias_ = arg++, alpha_ = arg++, beta_ = arg++;

  tid_ = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  Value* pid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  // Consecutive blocks take consecutive filter tiles of one group of tiles: they share its input in L2.
  bm_ = b_.CreateUDiv(pid, c32(shape_.filter_blocks));
  bn_ = b_.CreateURem(pid, c32(shape_.filter_blocks));
  const int group_threads = threads / p_.cl;
  Value* in_group = b_.CreateURem(tid_, c32(group_threads));
  group_ = b_.CreateUDiv(tid_, c32(group_threads));
  tt_ = b_.CreateURem(in_group, c32(p_.pl / p_.ps));
  tk_ = b_.CreateUDiv(in_group, c32(p_.pl / p_.ps));

  const auto& is = v_.input_strides;
  const int ah = wh_.alpha, aw = ww_.alpha;
  for (int i = 0; i < shape_.tile_slots; ++i) {
    TileSlot slot;
    Value* index = b_.CreateAdd(tid_, c32(i * threads));
    if ((i + 1) * threads > p_.pl * p_.u) slot.valid = b_.CreateICmpULT(index, c32(p_.pl * p_.u));
    slot.local_tile = b_.CreateURem(index, c32(p_.pl));
    slot.channel = b_.CreateUDiv(index, c32(p_.pl));
    Value* t = b_.CreateAdd(b_.CreateMul(bm_, c32(p_.pl)), slot.local_tile);
    Value* exists = b_.CreateICmpULT(t, c32(shape_.tiles));
    Tile tile = decompose(min32(t, c32(shape_.tiles - 1)));
    Value* h0 = b_.CreateSub(b_.CreateMul(tile.tp, c32(shape_.m)), c32(v_.pad_h));
    Value* w0 = b_.CreateSub(b_.CreateMul(tile.tq, c32(shape_.m)), c32(v_.pad_w));
    slot.base = b_.CreateAdd(b_.CreateMul(tile.n, c32(is[0])),
                             b_.CreateAdd(b_.CreateMul(h0, c32(is[2])), b_.CreateMul(w0, c32(is[3]))));
    for (int a = 0; a < ah; ++a)
      slot.row_inside.push_back(b_.CreateAnd(exists, b_.CreateICmpULT(b_.CreateAdd(h0, c32(a)), c32(v_.h))));
    for (int s = 0; s < aw; ++s) slot.column_inside.push_back(b_.CreateICmpULT(b_.CreateAdd(w0, c32(s)), c32(v_.w)));
    for (int e = 0; e < ah * aw; ++e) slot.raw.push_back(local(elem_, "tap"));
    slots_.push_back(std::move(slot));
  }
  for (int e = 0; e < shape_.group_planes * p_.ks * p_.ps; ++e) {
    acc_.push_back(local(scalar_, "acc"));
    b_.CreateStore(zero(scalar_), acc_.back());
  }

  const int stages = shape_.padded_c / p_.u;
  Value* first = c32(0);
  if (p_.db) {
    load_tiles(first);
    copy_filter(first, first);
    async_commit();
    store_planes(first);
    async_wait(0);
    barrier();
    for_loop(c32(stages), [&](Value* stage) {
      Value* buffer = b_.CreateAnd(stage, c32(1));
      Value* next_buffer = b_.CreateXor(buffer, c32(1));
      Value* next = b_.CreateAdd(stage, c32(1));
      Value* more = b_.CreateICmpSLT(next, c32(stages));
      if_then(more, [&] {
        load_tiles(next);
        copy_filter(next, next_buffer);
        async_commit();
      });
      multiply(buffer);
      if_then(more, [&] { store_planes(next_buffer); });
      async_wait(0);
      barrier();
    });
  } else {
    for_loop(c32(stages), [&](Value* stage) {
      load_tiles(stage);
      copy_filter(stage, first);
      async_commit();
      store_planes(first);
      async_wait(0);
      barrier();
      multiply(first);
      barrier();
    });
  }
  epilogue();
  b_.CreateRetVoid();
}

// One thread per (k, c) of the padded K x C, k fastest: U = G g Gt in double precision, rounded to
// the dtype; zeros past K and C.
void WinogradEmitter::emit_transform() {
  begin_kernel(name() + "_transform", {gptr_, gptr_}, 256);
  function_->getArg(1)->addAttr(llvm::Attribute::ReadOnly);
  auto arg = function_->arg_begin();
  Value *W = arg++, *F = arg++;
  Value* index = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c32(256)),
                              sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  const std::int64_t kp = shape_.padded_k, cp = shape_.padded_c;
  if_then(b_.CreateICmpULT(index, c32(kp * cp)), [&] {
    Value* k = b_.CreateURem(index, c32(kp));
    Value* c = b_.CreateUDiv(index, c32(kp));
    Value* inside = b_.CreateAnd(b_.CreateICmpULT(k, c32(v_.k)), b_.CreateICmpULT(c, c32(v_.c)));
    const auto& fs = v_.filter_strides;
    Value* base = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(min32(k, c32(v_.k - 1)), i64_), c64(fs[0])),
                               b_.CreateMul(b_.CreateZExt(min32(c, c32(v_.c - 1)), i64_), c64(fs[1])));
    llvm::Type* f64 = b_.getDoubleTy();
    const int r = static_cast<int>(v_.r), s = static_cast<int>(v_.s), ah = wh_.alpha, aw = ww_.alpha;
    std::vector<Value*> g;
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < s; ++j) {
        Value* x = b_.CreateAlignedLoad(elem_, gep(elem_, F, b_.CreateAdd(base, c64(i * fs[2] + j * fs[3]))),
                                        llvm::Align(elem_bytes_));
        g.push_back(b_.CreateSelect(inside, b_.CreateFPExt(x, f64), zero(f64)));
      }
    const std::vector<Value*> u = sandwich(wh_.g, ah, g, s, ww_.g);
    for (int a = 0; a < ah; ++a)
      for (int b = 0; b < aw; ++b) {
        Value* value = b_.CreateFPTrunc(u[a * aw + b], elem_);
        Value* offset = b_.CreateAdd(b_.CreateMul(c64((a * aw + b) * cp), c64(kp)),
                                     b_.CreateAdd(b_.CreateMul(b_.CreateZExt(c, i64_), c64(kp)), b_.CreateZExt(k, i64_)));
        b_.CreateAlignedStore(value, gep(elem_, W, offset), llvm::Align(elem_bytes_));
      }
  });
  b_.CreateRetVoid();
}

// WG=2: one thread per (tile, channel) of the padded tiles x C, tiles fastest (so the planes' stores
// are coalesced): V = Bt d B, zeros for taps in the padding and for tiles past the last.
void WinogradEmitter::emit_input_transform() {
  begin_kernel(name() + "_input", {gptr_, gptr_}, 256);
  function_->getArg(1)->addAttr(llvm::Attribute::ReadOnly);
  auto arg = function_->arg_begin();
  Value *V = arg++, *I = arg++;
  Value* index = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c32(256)),
                              sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  const std::int64_t tiles = shape_.padded_tiles;
  if_then(b_.CreateICmpULT(index, c32(tiles * v_.c)), [&] {
    Value* t = b_.CreateURem(index, c32(tiles));
    Value* c = b_.CreateUDiv(index, c32(tiles));
    Value* exists = b_.CreateICmpULT(t, c32(shape_.tiles));
    Tile tile = decompose(min32(t, c32(shape_.tiles - 1)));
    const auto& is = v_.input_strides;
    Value* h0 = b_.CreateSub(b_.CreateMul(tile.tp, c32(shape_.m)), c32(v_.pad_h));
    Value* w0 = b_.CreateSub(b_.CreateMul(tile.tq, c32(shape_.m)), c32(v_.pad_w));
    Value* base = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(tile.n, c32(is[0])), b_.CreateMul(c, c32(is[1]))),
                               b_.CreateAdd(b_.CreateMul(h0, c32(is[2])), b_.CreateMul(w0, c32(is[3]))));
    const int ah = wh_.alpha, aw = ww_.alpha;
    std::vector<Value*> column_inside;
    for (int s = 0; s < aw; ++s) column_inside.push_back(b_.CreateICmpULT(b_.CreateAdd(w0, c32(s)), c32(v_.w)));
    std::vector<Value*> d;
    for (int a = 0; a < ah; ++a) {
      Value* row_inside = b_.CreateAnd(exists, b_.CreateICmpULT(b_.CreateAdd(h0, c32(a)), c32(v_.h)));
      for (int s = 0; s < aw; ++s) {
        Value* inside = b_.CreateAnd(row_inside, column_inside[s]);
        Value* offset = b_.CreateSelect(inside, b_.CreateAdd(base, c32(a * is[2] + s * is[3])), c32(0));
        Value* x = b_.CreateAlignedLoad(elem_, gep(elem_, I, b_.CreateSExt(offset, i64_)), llvm::Align(elem_bytes_));
        d.push_back(b_.CreateSelect(inside, x, zero(elem_)));
      }
    }
    const std::vector<Value*> planes = sandwich(wh_.bt, ah, d, aw, ww_.bt);
    Value* first = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(c, i64_), c64(tiles)), b_.CreateZExt(t, i64_));
    for (int e = 0; e < ah * aw; ++e)
      b_.CreateAlignedStore(planes[e], gep(elem_, V, b_.CreateAdd(first, c64(e * v_.c * tiles))),
                            llvm::Align(elem_bytes_));
  });
  b_.CreateRetVoid();
}

// WG=2: one thread per (tile, filter) of the padded tiles x K, tiles fastest (so the products' loads
// are coalesced): the m x m pixels At M A, through the epilogue.
void WinogradEmitter::emit_output_transform() {
  begin_kernel(name() + "_output", {gptr_, gptr_, gptr_, scalar_, scalar_}, 256);
  for (int a = 1; a <= 2; ++a) function_->getArg(a)->addAttr(llvm::Attribute::ReadOnly);
  auto arg = function_->arg_begin();
  O_ = arg++;
  Value* M = arg++;
  bias_ = arg++, alpha_ = arg++, beta_ = arg++;
  Value* index = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c32(256)),
                              sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  const std::int64_t tiles = shape_.padded_tiles;
  Value* t = b_.CreateURem(index, c32(tiles));
  Value* k = b_.CreateUDiv(index, c32(tiles));
  if_then(b_.CreateAnd(b_.CreateICmpULT(t, c32(shape_.tiles)), b_.CreateICmpULT(k, c32(v_.k))), [&] {
    Value* first = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(k, i64_), c64(tiles)), b_.CreateZExt(t, i64_));
    std::vector<Value*> planes;
    for (int e = 0; e < shape_.planes; ++e)
      planes.push_back(b_.CreateAlignedLoad(elem_, gep(elem_, M, b_.CreateAdd(first, c64(e * v_.k * tiles))),
                                            llvm::Align(elem_bytes_)));
    const std::vector<Value*> pixels = output_transform(planes);
    // beta = 0 must not read O: it may hold NaNs.
    if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { store_tile(k, t, pixels, false); },
            [&] { store_tile(k, t, pixels, true); });
  });
  b_.CreateRetVoid();
}

}  // namespace

ConvKernel emit_winograd_conv(const ir::Conv& v, const ConvParams& p, const Target& target,
                              const ConvEpilogue& epilogue) {
  auto start = std::chrono::steady_clock::now();
  llvm::LLVMContext ctx;
  auto module = make_nvptx_module(ctx, "isaac_conv_winograd", target);
  ConvKernel kernel;
  if (p.wg == 2) {
    const WinogradProduct product = winograd_product(v, p);
    WinogradEmitter filter(*module, v, p, epilogue), input(*module, v, p, epilogue), output(*module, v, p, epilogue);
    filter.emit_transform();
    input.emit_input_transform();
    output.emit_output_transform();
    kernel.transform_name = filter.name() + "_transform";
    kernel.input_transform_name = input.name() + "_input";
    kernel.output_transform_name = output.name() + "_output";
    kernel.main_name = emit_gemm_main(*module, product.gemm, product.params, target.sm);
    // The optimisation level GEMM's own kernels are built and timed with.
    kernel.ptx = compile_to_ptx(*module, target, Optimisation::light);
    kernel.threads = p.threads();
    kernel.shared_bytes = gemm_shared_bytes(v.dtype, false, true, product.params);
    kernel.emit_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return kernel;
  }
  {
    WinogradEmitter main(*module, v, p, epilogue);
    main.emit_main();
    kernel.main_name = main.name();
  }
  {
    WinogradEmitter transform(*module, v, p, epilogue);
    transform.emit_transform();
    kernel.transform_name = transform.name() + "_transform";
  }
  kernel.ptx = compile_to_ptx(*module, target, Optimisation::full);
  kernel.threads = p.threads();
  kernel.shared_bytes = winograd_shape(v, p).shared_bytes(v.dtype, p);
  kernel.emit_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

}  // namespace isaac::lower
