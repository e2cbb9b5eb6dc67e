// The GEMM template's emitter: LLVM IR for one parameter set, through NVPTX to PTX.
//
// Block (bm, bn, kz, batch) computes the ML x NL tile of C over its share of K. Each stage, all
// threads copy a U-deep slice of A and B from global memory into shared memory (prefetching the
// next stage into registers while the current one is consumed when DB=1); the threads then form
// KL groups, each taking U/KL of the stage's K steps, and accumulate MS x NS outer products of
// fragments read from shared memory. Loads use clamped addresses, so the main loop carries no
// bounds checks; only the K tail selects zeros, and the edge stores are predicated in inline PTX.
#include "lower/gemm_layout.hpp"
#include "lower/nvptx_backend.hpp"

#include <isaac/error.hpp>
#include <isaac/lower/gemm.hpp>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <fmt/format.h>

#include <chrono>
#include <functional>

namespace isaac::lower {

namespace {

using llvm::Value;

// Where a thread's share of an operand tile comes from: one entry per vector load.
struct LoadSlot {
  int c = 0, o = 0;  // compile-time part of the contiguous / other tile coordinates
};

class GemmEmitter {
 public:
  GemmEmitter(llvm::Module& module, const ir::Gemm& g, const GemmParams& p, SplitMode mode)
      : ctx_(module.getContext()), module_(module), b_(ctx_), g_(g), p_(p), l_(g.dtype, g.a_trans, g.b_trans, p),
        mode_(mode) {
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
    gptr_ = llvm::PointerType::get(ctx_, 1);
    switch (g.dtype) {
      case ir::DType::f16: elem_ = b_.getHalfTy(); break;
      case ir::DType::f64: elem_ = b_.getDoubleTy(); break;
      default: elem_ = b_.getFloatTy(); break;
    }
    scalar_ = g.dtype == ir::DType::f64 ? b_.getDoubleTy() : b_.getFloatTy();
    half_acc_ = g.dtype == ir::DType::f16 && !p.acc32;
    acc_ = half_acc_ ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(elem_, 2)) : scalar_;
    acc_scalar_ = half_acc_ ? elem_ : scalar_;
    smem_ = module_.getNamedGlobal("isaac_smem");
    if (!smem_) smem_ = new llvm::GlobalVariable(module_, llvm::ArrayType::get(b_.getInt8Ty(), 0), false,
                                     llvm::GlobalValue::ExternalLinkage, nullptr, "isaac_smem", nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 3);
    smem_->setAlignment(llvm::Align(16));
  }

  std::string name() const {
    return fmt::format("isaac_gemm_{}_{}{}", ir::name(g_.dtype), g_.a_trans ? 'T' : 'N', g_.b_trans ? 'T' : 'N');
  }

  void emit_main();
  void emit_prepare();
  void emit_reduce();

 private:
  // ---- small builders
  Value* c32(std::int64_t v) { return b_.getInt32(static_cast<std::uint32_t>(v)); }
  Value* c64(std::int64_t v) { return b_.getInt64(static_cast<std::uint64_t>(v)); }
  Value* sreg(llvm::Intrinsic::ID id) { return b_.CreateIntrinsic(id, {}, {}); }
  Value* min32(Value* a, Value* x) { return b_.CreateSelect(b_.CreateICmpSLT(a, x), a, x); }
  Value* gep(llvm::Type* t, Value* ptr, Value* index) { return b_.CreateInBoundsGEP(t, ptr, index); }
  void barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }
  llvm::Type* vec(llvm::Type* t, int n) { return n == 1 ? t : llvm::FixedVectorType::get(t, n); }
  llvm::AllocaInst* local(llvm::Type* t, const char* name) {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    return entry.CreateAlloca(t, nullptr, name);
  }
  Value* zero(llvm::Type* t) { return llvm::Constant::getNullValue(t); }
  llvm::Function* begin_kernel(const std::string& name, std::vector<llvm::Type*> params, int max_threads);
  void if_then(Value* cond, const std::function<void()>& then);
  void if_else(Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise);
  void for_loop(Value* count, const std::function<void(Value*)>& body);

  // Stores (op "st") or atomically adds (op "red") `value` to global `ptr` where `pred` holds.
  void predicated(const char* op, Value* ptr, Value* value, Value* pred);
  // Stores `values` (consecutive elements, aligned to their total size) where `pred` holds.
  void predicated_vector_store(Value* ptr, std::vector<Value*> values, Value* pred);

  // ---- the main kernel's pieces
  std::vector<LoadSlot> slots(int contiguous, int other, int along, int vector) const;
  void load_tile(Value* tile, bool predicated);
  void store_tile(Value* stage);
  void compute_stage(Value* stage);
  void reduce_warp_groups();
  void epilogue();
  Value* to_scalar(Value* v) { return v->getType() == scalar_ ? v : b_.CreateFPExt(v, scalar_); }
  Value* to_elem(Value* v) { return v->getType() == elem_ ? v : b_.CreateFPTrunc(v, elem_); }

  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  const ir::Gemm& g_;
  GemmParams p_;
  GemmLayout l_;
  SplitMode mode_;
  llvm::Type *i32_, *i64_, *elem_, *scalar_, *acc_, *acc_scalar_;
  llvm::PointerType* gptr_;
  llvm::GlobalVariable* smem_;
  bool half_acc_ = false;
  llvm::Function* function_ = nullptr;

  // State of the main kernel while it is emitted.
  Value *A_, *B_, *C_, *W_, *alpha_, *beta_, *M_, *N_, *K_, *lda_, *ldb_, *ldc_;
  Value *tid_, *tm_, *tn_, *tk_, *bm_, *bn_, *kz_, *bz_, *k_begin_, *k_end_;
  std::vector<LoadSlot> slots_a_, slots_b_;
  std::vector<Value*> a_offset_, b_offset_;          // per slot: M or N part of the global offset
  std::vector<Value*> a_k_, b_k_;                    // per slot: K coordinate within a tile
  std::vector<llvm::AllocaInst*> pre_a_, pre_b_;     // per slot: the prefetched vector
  std::vector<llvm::AllocaInst*> acc_cells_;         // MS*NS (or MS*NS/2 f16x2) accumulators
};

llvm::Function* GemmEmitter::begin_kernel(const std::string& name, std::vector<llvm::Type*> params, int max_threads) {
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  function_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
  // With .maxntid alone ptxas trades registers for occupancy (32 registers at 512 threads, and
  // spills); one block per SM is all the template asks for, so it may use 64K / threads registers.
  mark_kernel(*function_, max_threads, 1);
  for (auto& arg : function_->args())
    if (arg.getType()->isPointerTy()) arg.addAttr(llvm::Attribute::NoAlias);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", function_));
  return function_;
}

void GemmEmitter::if_then(Value* cond, const std::function<void()>& then) {
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", function_);
  auto* done = llvm::BasicBlock::Create(ctx_, "endif", function_);
  b_.CreateCondBr(cond, then_bb, done);
  b_.SetInsertPoint(then_bb);
  then();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void GemmEmitter::if_else(Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise) {
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", function_);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "else", function_);
  auto* done = llvm::BasicBlock::Create(ctx_, "endif", function_);
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  then();
  b_.CreateBr(done);
  b_.SetInsertPoint(else_bb);
  otherwise();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void GemmEmitter::for_loop(Value* count, const std::function<void(Value*)>& body) {
  auto* counter = local(i32_, "t");
  b_.CreateStore(c32(0), counter);
  auto* head = llvm::BasicBlock::Create(ctx_, "loop", function_);
  auto* body_bb = llvm::BasicBlock::Create(ctx_, "body", function_);
  auto* done = llvm::BasicBlock::Create(ctx_, "done", function_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  Value* t = b_.CreateLoad(i32_, counter);
  b_.CreateCondBr(b_.CreateICmpSLT(t, count), body_bb, done);
  b_.SetInsertPoint(body_bb);
  body(t);
  b_.CreateStore(b_.CreateAdd(t, c32(1)), counter);
  b_.CreateBr(head);
  b_.SetInsertPoint(done);
}

// Inline PTX: LLVM would turn a conditional store into a branch around it.
void GemmEmitter::predicated(const char* op, Value* ptr, Value* value, Value* pred) {
  llvm::Type* t = value->getType();
  bool half = t->isHalfTy();
  const char* constraint = half ? "h" : t->isDoubleTy() ? "d" : "f";
  const char* suffix = half ? (std::string_view(op) == "st" ? "b16" : "noftz.f16") : t->isDoubleTy() ? "f64" : "f32";
  const char* instruction = std::string_view(op) == "st" ? "st.global" : "red.global.add";
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {i64_, half ? b_.getInt16Ty() : t, i32_}, false);
  auto* asm_fn = llvm::InlineAsm::get(
      type,
      fmt::format("{{ .reg .pred isaac_p; setp.ne.b32 isaac_p, $2, 0; @isaac_p {}.{} [$0], $1; }}", instruction, suffix),
      fmt::format("l,{},r,~{{memory}}", constraint), true);
  Value* bits = half ? b_.CreateBitCast(value, b_.getInt16Ty()) : value;
  b_.CreateCall(asm_fn, {b_.CreatePtrToInt(ptr, i64_), bits, b_.CreateZExt(pred, i32_)});
}

void GemmEmitter::predicated_vector_store(Value* ptr, std::vector<Value*> values, Value* pred) {
  if (values.size() == 1) return predicated("st", ptr, values[0], pred);
  llvm::Type* t = values[0]->getType();
  if (t->isHalfTy()) {  // PTX vectors hold at most 4 elements: store f16 pairs as 32-bit words
    std::vector<Value*> words;
    for (size_t i = 0; i < values.size(); i += 2) {
      Value* pair = b_.CreateInsertElement(
          b_.CreateInsertElement(llvm::PoisonValue::get(llvm::FixedVectorType::get(t, 2)), values[i], c32(0)),
          values[i + 1], c32(1));
      words.push_back(b_.CreateBitCast(pair, i32_));
    }
    values = words;
    t = i32_;
  }
  if (values.size() == 1) {  // an f16 pair: one 32-bit word
    auto* asm_fn = llvm::InlineAsm::get(
        llvm::FunctionType::get(b_.getVoidTy(), {i64_, i32_, i32_}, false),
        "{ .reg .pred isaac_p; setp.ne.b32 isaac_p, $2, 0; @isaac_p st.global.b32 [$0], $1; }", "l,r,r,~{memory}", true);
    b_.CreateCall(asm_fn, {b_.CreatePtrToInt(ptr, i64_), values[0], b_.CreateZExt(pred, i32_)});
    return;
  }
  const char* constraint = t->isIntegerTy() ? "r" : t->isDoubleTy() ? "d" : "f";
  const char* suffix = t->isIntegerTy() ? "b32" : t->isDoubleTy() ? "f64" : "f32";
  std::string operands, constraints = "l";
  for (size_t i = 0; i < values.size(); ++i) {
    operands += fmt::format("{}${}", i ? ", " : "", i + 1);
    constraints += fmt::format(",{}", constraint);
  }
  std::string asm_text = fmt::format(
      "{{ .reg .pred isaac_p; setp.ne.b32 isaac_p, ${}, 0; @isaac_p st.global.v{}.{} [$0], {{{}}}; }}",
      values.size() + 1, values.size(), suffix, operands);
  std::vector<llvm::Type*> types{i64_};
  std::vector<Value*> args{b_.CreatePtrToInt(ptr, i64_)};
  for (Value* v : values) types.push_back(t), args.push_back(v);
  types.push_back(i32_);
  args.push_back(b_.CreateZExt(pred, i32_));
  auto* asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), types, false), asm_text,
                                      constraints + ",r,~{memory}", true);
  b_.CreateCall(asm_fn, args);
}

std::vector<LoadSlot> GemmEmitter::slots(int contiguous, int other, int along, int vector) const {
  int across = l_.threads / along;
  std::vector<LoadSlot> out;
  for (int o = 0; o < other; o += across)
    for (int c = 0; c < contiguous; c += along * vector) out.push_back({c, o});
  return out;
}

// Loads stage `tile` of this block's K range into the prefetch registers. The M/N coordinates were
// clamped once; `predicated` also clamps K and replaces what lies past k_end by zeros.
void GemmEmitter::load_tile(Value* tile, bool predicated) {
  Value* k0 = b_.CreateAdd(k_begin_, b_.CreateMul(tile, c32(p_.u)));
  auto load = [&](Value* base, Value* ld, bool k_contiguous, const std::vector<Value*>& offset,
                  const std::vector<Value*>& k_in_tile, const std::vector<llvm::AllocaInst*>& pre, int v) {
    llvm::Type* type = vec(elem_, v);
    for (size_t s = 0; s < offset.size(); ++s) {
      Value* k = b_.CreateAdd(k0, k_in_tile[s]);
      Value* in_range = nullptr;
      if (predicated) {
        in_range = b_.CreateICmpSLT(k, k_end_);
        k = b_.CreateSelect(in_range, k, k_begin_);
      }
      Value* k_offset = b_.CreateSExt(k, i64_);
      if (!k_contiguous) k_offset = b_.CreateMul(k_offset, ld);
      Value* ptr = gep(elem_, base, b_.CreateAdd(offset[s], k_offset));
      Value* value = b_.CreateAlignedLoad(type, ptr, llvm::Align(v * l_.elem));
      if (predicated) value = b_.CreateSelect(in_range, value, zero(type));
      b_.CreateStore(value, pre[s]);
    }
  };
  load(A_, lda_, g_.a_trans, a_offset_, a_k_, pre_a_, p_.va);
  load(B_, ldb_, !g_.b_trans, b_offset_, b_k_, pre_b_, p_.vb);
}

// Writes the prefetch registers into shared-memory stage `stage`, transposing where the global
// contiguous axis is K (A transposed, B not transposed).
void GemmEmitter::store_tile(Value* stage) {
  auto store = [&](int region_offset, int stage_size, int pitch, bool k_contiguous, const std::vector<LoadSlot>& s,
                   int along, const std::vector<llvm::AllocaInst*>& pre, int v) {
    Value* lane = b_.CreateURem(tid_, c32(along));
    Value* row = b_.CreateUDiv(tid_, c32(along));
    Value* base = b_.CreateAdd(c32(region_offset), b_.CreateMul(stage, c32(stage_size)));
    llvm::Type* type = vec(elem_, v);
    for (size_t i = 0; i < s.size(); ++i) {
      Value* c = b_.CreateAdd(c32(s[i].c), b_.CreateMul(lane, c32(v)));
      Value* o = b_.CreateAdd(c32(s[i].o), row);
      Value* value = b_.CreateLoad(type, pre[i]);
      if (!k_contiguous) {  // rows are K: the vector lies along the row
        Value* index = b_.CreateAdd(base, b_.CreateAdd(b_.CreateMul(o, c32(pitch)), c));
        b_.CreateAlignedStore(value, gep(elem_, smem_, index), llvm::Align(v * l_.elem));
      } else {
        for (int e = 0; e < v; ++e) {
          Value* index = b_.CreateAdd(base, b_.CreateAdd(b_.CreateMul(b_.CreateAdd(c, c32(e)), c32(pitch)), o));
          Value* scalar = v == 1 ? value : b_.CreateExtractElement(value, e);
          b_.CreateAlignedStore(scalar, gep(elem_, smem_, index), llvm::Align(l_.elem));
        }
      }
    }
  };
  store(0, l_.stage_a, l_.pitch_a, g_.a_trans, slots_a_, p_.la, pre_a_, p_.va);
  store(l_.stages * l_.stage_a, l_.stage_b, l_.pitch_b, !g_.b_trans, slots_b_, p_.lb, pre_b_, p_.vb);
}

// Fragment element i of a thread's MS (or NS) lies at chunk i / fv, lane i % fv: chunks are spread
// over the tile so that a warp's vector reads of shared memory fall in distinct banks.
static int fragment_offset(int i, int fv, int tile, int thread_tile) { return (i / fv) * (tile * fv / thread_tile) + i % fv; }

void GemmEmitter::compute_stage(Value* stage) {
  int steps = p_.u / p_.kl;
  Value* k_first = b_.CreateMul(tk_, c32(steps));
  Value* a_base = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(stage, c32(l_.stage_a)), b_.CreateMul(k_first, c32(l_.pitch_a))),
                               b_.CreateMul(tm_, c32(l_.fvm)));
  Value* b_base = b_.CreateAdd(
      b_.CreateAdd(c32(l_.stages * l_.stage_a),
                   b_.CreateAdd(b_.CreateMul(stage, c32(l_.stage_b)), b_.CreateMul(k_first, c32(l_.pitch_b)))),
      b_.CreateMul(tn_, c32(l_.fvn)));
  auto fragment = [&](Value* base, int k, int pitch, int tile, int thread_tile, int fv) {
    std::vector<Value*> values;
    for (int chunk = 0; chunk < thread_tile / fv; ++chunk) {
      Value* index = b_.CreateAdd(base, c32(k * pitch + chunk * (tile * fv / thread_tile)));
      Value* v = b_.CreateAlignedLoad(vec(elem_, fv), gep(elem_, smem_, index), llvm::Align(fv * l_.elem));
      for (int e = 0; e < fv; ++e) values.push_back(fv == 1 ? v : b_.CreateExtractElement(v, e));
    }
    return values;
  };
  // An empty asm with a memory clobber keeps each group's shared-memory loads after the previous
  // group's arithmetic, so that LLVM does not hoist a whole stage of fragments into registers.
  auto* fence = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), false), "", "~{memory}", true);
  for (int step = 0; step < steps; step += p_.ks) {
    if (step > 0) b_.CreateCall(fence);
    std::vector<std::vector<Value*>> a(p_.ks), bv(p_.ks);
    for (int s = 0; s < p_.ks; ++s) {
      a[s] = fragment(a_base, step + s, l_.pitch_a, p_.ml, p_.ms, l_.fvm);
      bv[s] = fragment(b_base, step + s, l_.pitch_b, p_.nl, p_.ns, l_.fvn);
    }
    for (int s = 0; s < p_.ks; ++s) {
      for (int j = 0; j < p_.ns; ++j) {
        if (half_acc_) {
          Value* b_pair = b_.CreateVectorSplat(2, bv[s][j]);
          for (int i = 0; i < p_.ms; i += 2) {
            Value* a_pair = b_.CreateInsertElement(b_.CreateInsertElement(llvm::PoisonValue::get(acc_), a[s][i], c32(0)),
                                                   a[s][i + 1], c32(1));
            auto* cell = acc_cells_[(i / 2) * p_.ns + j];
            Value* sum = b_.CreateIntrinsic(llvm::Intrinsic::fma, {acc_}, {a_pair, b_pair, b_.CreateLoad(acc_, cell)});
            b_.CreateStore(sum, cell);
          }
        } else {
          for (int i = 0; i < p_.ms; ++i) {
            auto* cell = acc_cells_[i * p_.ns + j];
            Value* sum = b_.CreateIntrinsic(llvm::Intrinsic::fma, {acc_},
                                            {to_scalar(a[s][i]), to_scalar(bv[s][j]), b_.CreateLoad(acc_, cell)});
            b_.CreateStore(sum, cell);
          }
        }
      }
    }
  }
}

// Warp groups 1..KL-1 hand their partial sums to group 0 through shared memory.
void GemmEmitter::reduce_warp_groups() {
  if (p_.kl == 1) return;
  int group = (p_.ml / p_.ms) * (p_.nl / p_.ns);
  Value* tmn = b_.CreateURem(tid_, c32(group));
  int cells = static_cast<int>(acc_cells_.size());
  auto slot = [&](Value* g, int e) {  // consecutive threads write consecutive words
    Value* index = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(g, c32(cells)), c32(e)), c32(group)), tmn);
    return gep(acc_, smem_, index);
  };
  barrier();
  if_then(b_.CreateICmpNE(tk_, c32(0)), [&] {
    Value* g = b_.CreateSub(tk_, c32(1));
    for (int e = 0; e < cells; ++e) b_.CreateStore(b_.CreateLoad(acc_, acc_cells_[e]), slot(g, e));
  });
  barrier();
  if_then(b_.CreateICmpEQ(tk_, c32(0)), [&] {
    for (int g = 0; g < p_.kl - 1; ++g)
      for (int e = 0; e < cells; ++e) {
        Value* sum = b_.CreateFAdd(b_.CreateLoad(acc_, acc_cells_[e]), b_.CreateLoad(acc_, slot(c32(g), e)));
        b_.CreateStore(sum, acc_cells_[e]);
      }
  });
}

void GemmEmitter::epilogue() {
  Value* m0 = b_.CreateAdd(b_.CreateMul(bm_, c32(p_.ml)), b_.CreateMul(tm_, c32(l_.fvm)));
  Value* n0 = b_.CreateAdd(b_.CreateMul(bn_, c32(p_.nl)), b_.CreateMul(tn_, c32(l_.fvn)));
  auto for_each = [&](const std::function<void(Value* m, Value* n, Value* acc)>& f) {
    for (int j = 0; j < p_.ns; ++j)
      for (int i = 0; i < p_.ms; ++i) {
        Value* m = b_.CreateAdd(m0, c32(fragment_offset(i, l_.fvm, p_.ml, p_.ms)));
        Value* n = b_.CreateAdd(n0, c32(fragment_offset(j, l_.fvn, p_.nl, p_.ns)));
        Value* acc = half_acc_ ? b_.CreateExtractElement(b_.CreateLoad(acc_, acc_cells_[(i / 2) * p_.ns + j]), i % 2)
                               : b_.CreateLoad(acc_, acc_cells_[i * p_.ns + j]);
        f(m, n, acc);
      }
  };
  auto c_ptr = [&](Value* m, Value* n) {
    return gep(elem_, C_, b_.CreateAdd(b_.CreateSExt(m, i64_), b_.CreateMul(b_.CreateSExt(n, i64_), ldc_)));
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
  if (p_.kg > 1) {  // atomic: C was scaled by beta beforehand
    for_each([&](Value* m, Value* n, Value* acc) {
      predicated("red", c_ptr(m, n), to_elem(b_.CreateFMul(alpha_, to_scalar(acc))), inside(m, n));
    });
    return;
  }
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
  // Where M, ldc and C's address are multiples of a fragment chunk, each chunk of FVM consecutive
  // rows is read and written with one vector access.
  auto write_vectors = [&](bool read_c) {
    llvm::Type* chunk_type = vec(elem_, l_.fvm);
    for (int j = 0; j < p_.ns; ++j)
      for (int i = 0; i < p_.ms; i += l_.fvm) {
        Value* m = b_.CreateAdd(m0, c32(fragment_offset(i, l_.fvm, p_.ml, p_.ms)));
        Value* n = b_.CreateAdd(n0, c32(fragment_offset(j, l_.fvn, p_.nl, p_.ns)));
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
          Value* value = b_.CreateFMul(alpha_, to_scalar(acc));
          if (read_c)
            value = b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_},
                                       {beta_, to_scalar(b_.CreateExtractElement(old, v)), value});
          values.push_back(to_elem(value));
        }
        predicated_vector_store(c_ptr(m, n), values, pred);
      }
  };
  auto write_any = [&](bool read_c) {
    if (l_.fvm == 1) return write(read_c);
    Value* chunk = c32(l_.fvm);
    Value* aligned = b_.CreateICmpEQ(
        b_.CreateURem(b_.CreatePtrToInt(C_, i64_), c64(l_.fvm * l_.elem)), c64(0));
    aligned = b_.CreateAnd(aligned, b_.CreateICmpEQ(b_.CreateURem(M_, chunk), c32(0)));
    aligned = b_.CreateAnd(aligned, b_.CreateICmpEQ(b_.CreateURem(ldc_, c64(l_.fvm)), c64(0)));
    if_else(aligned, [&] { write_vectors(read_c); }, [&] { write(read_c); });
  };
  if_else(b_.CreateFCmpOEQ(beta_, llvm::ConstantFP::get(scalar_, 0.0)), [&] { write_any(false); },
          [&] { write_any(true); });
}

void GemmEmitter::emit_main() {
  begin_kernel(name(), {gptr_, gptr_, gptr_, gptr_, scalar_, scalar_, i32_, i32_, i32_, i64_, i64_, i64_, i64_, i64_, i64_},
               l_.threads);
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

  // Swizzle: blocks are numbered in groups of SW tile rows so that neighbours share A and B in L2.
  Value* num_m = b_.CreateUDiv(b_.CreateAdd(M_, c32(p_.ml - 1)), c32(p_.ml));
  Value* num_n = b_.CreateUDiv(b_.CreateAdd(N_, c32(p_.nl - 1)), c32(p_.nl));
  Value* group_width = b_.CreateMul(num_n, c32(p_.sw));
  Value* first_m = b_.CreateMul(b_.CreateUDiv(pid, group_width), c32(p_.sw));
  Value* group_rows = min32(b_.CreateSub(num_m, first_m), c32(p_.sw));
  Value* in_group = b_.CreateURem(pid, group_width);
  bm_ = b_.CreateAdd(first_m, b_.CreateURem(in_group, group_rows));
  bn_ = b_.CreateUDiv(in_group, group_rows);

  Value* batch = b_.CreateSExt(bz_, i64_);
  A_ = gep(elem_, A_, b_.CreateMul(batch, stride_a));
  B_ = gep(elem_, B_, b_.CreateMul(batch, stride_b));
  C_ = gep(elem_, C_, b_.CreateMul(batch, stride_c));

  // This block's share of K: whole tiles of U, the last share shorter.
  Value* k_tiles = b_.CreateUDiv(b_.CreateAdd(K_, c32(p_.u - 1)), c32(p_.u));
  Value* per_split = b_.CreateMul(b_.CreateUDiv(b_.CreateAdd(k_tiles, c32(p_.kg - 1)), c32(p_.kg)), c32(p_.u));
  k_begin_ = min32(b_.CreateMul(kz_, per_split), K_);
  k_end_ = min32(b_.CreateAdd(k_begin_, per_split), K_);
  Value* length = b_.CreateSub(k_end_, k_begin_);
  Value* full = b_.CreateUDiv(length, c32(p_.u));
  Value* total = b_.CreateAdd(full, b_.CreateZExt(b_.CreateICmpNE(b_.CreateURem(length, c32(p_.u)), c32(0)), i32_));

  int tm_count = p_.ml / p_.ms, tn_count = p_.nl / p_.ns;
  tm_ = b_.CreateURem(tid_, c32(tm_count));
  tn_ = b_.CreateURem(b_.CreateUDiv(tid_, c32(tm_count)), c32(tn_count));
  tk_ = b_.CreateUDiv(tid_, c32(tm_count * tn_count));

  // Per load slot: the clamped M (or N) part of the address, and the K coordinate within the tile.
  auto prepare = [&](bool k_contiguous, Value* ld, Value* extent, int tile, Value* block, int along, int v,
                     const std::vector<LoadSlot>& s, std::vector<Value*>& offset, std::vector<Value*>& k_in_tile,
                     std::vector<llvm::AllocaInst*>& pre) {
    Value* lane = b_.CreateMul(b_.CreateURem(tid_, c32(along)), c32(v));
    Value* row = b_.CreateUDiv(tid_, c32(along));
    for (const LoadSlot& slot : s) {
      Value* c = b_.CreateAdd(c32(slot.c), lane);
      Value* o = b_.CreateAdd(c32(slot.o), row);
      Value* mn_local = k_contiguous ? o : c;
      Value* mn = b_.CreateAdd(b_.CreateMul(block, c32(tile)), mn_local);
      // Rows past the edge re-read the last valid one: their results are never stored.
      mn = min32(mn, b_.CreateSub(extent, c32(k_contiguous ? 1 : v)));
      mn = b_.CreateSelect(b_.CreateICmpSLT(mn, c32(0)), c32(0), mn);
      Value* off = b_.CreateSExt(mn, i64_);
      if (k_contiguous) off = b_.CreateMul(off, ld);
      offset.push_back(off);
      k_in_tile.push_back(k_contiguous ? c : o);
      pre.push_back(local(vec(elem_, v), "prefetch"));
    }
  };
  slots_a_ = slots(l_.ca, l_.oa, p_.la, p_.va);
  slots_b_ = slots(l_.cb, l_.ob, p_.lb, p_.vb);
  prepare(g_.a_trans, lda_, M_, p_.ml, bm_, p_.la, p_.va, slots_a_, a_offset_, a_k_, pre_a_);
  prepare(!g_.b_trans, ldb_, N_, p_.nl, bn_, p_.lb, p_.vb, slots_b_, b_offset_, b_k_, pre_b_);

  int cells = half_acc_ ? p_.ms * p_.ns / 2 : p_.ms * p_.ns;
  for (int e = 0; e < cells; ++e) {
    acc_cells_.push_back(local(acc_, "acc"));
    b_.CreateStore(zero(acc_), acc_cells_.back());
  }

  auto load_any = [&](Value* tile) {
    if_else(b_.CreateICmpSLT(tile, full), [&] { load_tile(tile, false); }, [&] { load_tile(tile, true); });
  };
  if (p_.db) {
    if_then(b_.CreateICmpSGT(total, c32(0)), [&] {
      load_any(c32(0));
      store_tile(c32(0));
      barrier();
    });
    for_loop(total, [&](Value* t) {
      Value* next = b_.CreateAdd(t, c32(1));
      Value* has_next = b_.CreateICmpSLT(next, total);
      if_then(has_next, [&] { load_any(next); });
      compute_stage(b_.CreateAnd(t, c32(1)));
      // Unconditional, so that the arithmetic above stays in this block (LLVM sinks it past a
      // branch, and a whole stage of fragments then lives in registers); after the last stage the
      // store only writes the idle buffer.
      store_tile(b_.CreateAnd(next, c32(1)));
      barrier();
    });
  } else {
    for_loop(total, [&](Value* t) {
      load_any(t);
      barrier();
      store_tile(c32(0));
      barrier();
      compute_stage(c32(0));
    });
  }
  reduce_warp_groups();
  if (p_.kl > 1) {
    if_then(b_.CreateICmpEQ(tk_, c32(0)), [&] { epilogue(); });
  } else {
    epilogue();
  }
  b_.CreateRetVoid();
}

// KG > 1 with atomics: C = beta * C (exactly 0 when beta = 0) before the blocks add their parts.
void GemmEmitter::emit_prepare() {
  begin_kernel(name() + "_prepare", {gptr_, scalar_, i32_, i32_, i64_, i64_}, 256);
  auto arg = function_->arg_begin();
  Value *C = arg++, *beta = arg++, *M = arg++, *N = arg++, *ldc = arg++, *stride_c = arg++;
  Value* index = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64_), c64(256)),
                              b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), i64_));
  Value* M64 = b_.CreateSExt(M, i64_);
  Value* batch = b_.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z), i64_);
  if_then(b_.CreateICmpSLT(index, b_.CreateMul(M64, b_.CreateSExt(N, i64_))), [&] {
    Value* ptr = gep(elem_, C, b_.CreateAdd(b_.CreateMul(batch, stride_c),
                                            b_.CreateAdd(b_.CreateSRem(index, M64), b_.CreateMul(b_.CreateSDiv(index, M64), ldc))));
    Value* scaled = b_.CreateFMul(beta, to_scalar(b_.CreateLoad(elem_, ptr)));
    Value* is_zero = b_.CreateFCmpOEQ(beta, llvm::ConstantFP::get(scalar_, 0.0));
    b_.CreateStore(to_elem(b_.CreateSelect(is_zero, zero(scalar_), scaled)), ptr);
  });
  b_.CreateRetVoid();
}

// KG > 1 deterministic: C = alpha * sum over kz (in order) of W[batch][kz] + beta * C.
void GemmEmitter::emit_reduce() {
  begin_kernel(name() + "_reduce", {gptr_, gptr_, scalar_, scalar_, i32_, i32_, i64_, i64_}, 256);
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
  auto tiles = ((g.m + p.ml - 1) / p.ml) * ((g.n + p.nl - 1) / p.nl);
  grid.main = {static_cast<unsigned>(tiles), static_cast<unsigned>(p.kg), static_cast<unsigned>(g.batch)};
  grid.helper = {static_cast<unsigned>((g.m * g.n + 255) / 256), 1, static_cast<unsigned>(g.batch)};
  if (p.kg > 1 && mode == SplitMode::deterministic) {
    std::size_t acc_bytes = g.dtype == ir::DType::f64 ? 8 : (g.dtype == ir::DType::f16 && !p.acc32 ? 2 : 4);
    grid.workspace_bytes = acc_bytes * g.m * g.n * p.kg * g.batch;
  }
  return grid;
}

GemmKernel emit_gemm(const ir::Gemm& g, const GemmParams& p, const Target& target, SplitMode mode) {
  if (auto legal = check_gemm_params(g.dtype, g.a_trans, g.b_trans, p, DeviceLimits{.sm = target.sm}); !legal)
    throw InvalidArgument("illegal GEMM parameters " + p.str() + ": " + legal.reason);
  auto start = std::chrono::steady_clock::now();
  llvm::LLVMContext ctx;
  auto module = make_nvptx_module(ctx, "isaac_gemm", target);
  GemmKernel kernel;
  {
    GemmEmitter main(*module, g, p, mode);
    main.emit_main();
    kernel.main_name = main.name();
  }
  if (p.kg > 1) {
    GemmEmitter helper(*module, g, p, mode);
    if (mode == SplitMode::atomic) {
      helper.emit_prepare();
      kernel.prepare_name = helper.name() + "_prepare";
    } else {
      helper.emit_reduce();
      kernel.reduce_name = helper.name() + "_reduce";
    }
  }
  kernel.ptx = compile_to_ptx(*module, target);
  kernel.threads = p.threads();
  kernel.shared_bytes = gemm_shared_bytes(g.dtype, g.a_trans, g.b_trans, p);
  kernel.emit_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

}  // namespace isaac::lower
