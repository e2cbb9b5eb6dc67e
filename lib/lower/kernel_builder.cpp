#include "lower/kernel_builder.hpp"

#include "lower/nvptx_backend.hpp"

#include <isaac/error.hpp>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include <string_view>
#include <tuple>

namespace isaac::lower {

KernelBuilder::KernelBuilder(llvm::Module& module, ir::DType dtype)
    : ctx_(module.getContext()), module_(module), b_(ctx_) {
  i32_ = b_.getInt32Ty();
  i64_ = b_.getInt64Ty();
  gptr_ = llvm::PointerType::get(ctx_, 1);
  switch (dtype) {
    case ir::DType::f16: elem_ = b_.getHalfTy(); break;
    case ir::DType::bf16: elem_ = b_.getBFloatTy(); break;
    case ir::DType::f64: elem_ = b_.getDoubleTy(); break;
    default: elem_ = b_.getFloatTy(); break;
  }
  scalar_ = dtype == ir::DType::f64 ? b_.getDoubleTy() : b_.getFloatTy();
  smem_ = module_.getNamedGlobal("isaac_smem");
  if (!smem_)
    smem_ = new llvm::GlobalVariable(module_, llvm::ArrayType::get(b_.getInt8Ty(), 0), false,
                                     llvm::GlobalValue::ExternalLinkage, nullptr, "isaac_smem", nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 3);
  if (smem_->getAlign().valueOrOne() < llvm::Align(16)) smem_->setAlignment(llvm::Align(16));
}

void KernelBuilder::barrier() {
  if (barrier_threads_)
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {}, {barrier_id_ ? barrier_id_ : c32(1), c32(barrier_threads_)});
  else
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

llvm::AllocaInst* KernelBuilder::local(llvm::Type* t, const char* name) {
  llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
  return entry.CreateAlloca(t, nullptr, name);
}

llvm::Function* KernelBuilder::begin_kernel(const std::string& name, std::vector<llvm::Type*> params, int max_threads) {
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  function_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
  // With .maxntid alone ptxas trades registers for occupancy (32 registers at 512 threads, and
  // spills); one block per SM is all the templates ask for, so it may use 64K / threads registers.
  mark_kernel(*function_, max_threads, 1);
  for (auto& arg : function_->args())
    if (arg.getType()->isPointerTy()) arg.addAttr(llvm::Attribute::NoAlias);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", function_));
  return function_;
}

void KernelBuilder::if_then(Value* cond, const std::function<void()>& then) {
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", function_);
  auto* done = llvm::BasicBlock::Create(ctx_, "endif", function_);
  b_.CreateCondBr(cond, then_bb, done);
  b_.SetInsertPoint(then_bb);
  then();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void KernelBuilder::if_else(Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise) {
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

void KernelBuilder::for_loop(Value* count, const std::function<void(Value*)>& body) {
  for_range(c32(0), count, c32(1), body);
}

void KernelBuilder::for_range(Value* first, Value* end, Value* step, const std::function<void(Value*)>& body) {
  auto* counter = local(i32_, "t");
  b_.CreateStore(first, counter);
  auto* head = llvm::BasicBlock::Create(ctx_, "loop", function_);
  auto* body_bb = llvm::BasicBlock::Create(ctx_, "body", function_);
  auto* done = llvm::BasicBlock::Create(ctx_, "done", function_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  Value* t = b_.CreateLoad(i32_, counter);
  b_.CreateCondBr(b_.CreateICmpSLT(t, end), body_bb, done);
  b_.SetInsertPoint(body_bb);
  body(t);
  b_.CreateStore(b_.CreateAdd(t, step), counter);
  b_.CreateBr(head);
  b_.SetInsertPoint(done);
}

// Inline PTX: LLVM would turn a conditional store into a branch around it.
void KernelBuilder::predicated(const char* op, Value* ptr, Value* value, Value* pred) {
  llvm::Type* t = value->getType();
  const bool half = t->is16bitFPTy();
  const char* constraint = half ? "h" : t->isDoubleTy() ? "d" : "f";
  const char* suffix = half ? (std::string_view(op) == "st" ? "b16" : t->isBFloatTy() ? "noftz.bf16" : "noftz.f16")
                            : t->isDoubleTy() ? "f64" : "f32";
  const char* instruction = std::string_view(op) == "st" ? "st.global" : "red.global.add";
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {i64_, half ? b_.getInt16Ty() : t, i32_}, false);
  auto* asm_fn = llvm::InlineAsm::get(
      type,
      fmt::format("{{ .reg .pred isaac_p; setp.ne.b32 isaac_p, $2, 0; @isaac_p {}.{} [$0], $1; }}", instruction, suffix),
      fmt::format("l,{},r,~{{memory}}", constraint), true);
  Value* bits = half ? b_.CreateBitCast(value, b_.getInt16Ty()) : value;
  b_.CreateCall(asm_fn, {b_.CreatePtrToInt(ptr, i64_), bits, b_.CreateZExt(pred, i32_)});
}

std::vector<llvm::Value*> KernelBuilder::half_pairs(const std::vector<Value*>& halves) {
  std::vector<Value*> words;
  auto* pair_type = llvm::FixedVectorType::get(halves[0]->getType(), 2);
  for (size_t i = 0; i < halves.size(); i += 2) {
    Value* pair = b_.CreateInsertElement(
        b_.CreateInsertElement(llvm::PoisonValue::get(pair_type), halves[i], c32(0)), halves[i + 1], c32(1));
    words.push_back(b_.CreateBitCast(pair, i32_));
  }
  return words;
}

void KernelBuilder::predicated_vector_store(Value* ptr, std::vector<Value*> values, Value* pred) {
  if (values.size() == 1) return predicated("st", ptr, values[0], pred);
  llvm::Type* t = values[0]->getType();
  if (t->is16bitFPTy()) {  // PTX vectors hold at most 4 elements: store 16-bit pairs as 32-bit words
    values = half_pairs(values);
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

void KernelBuilder::predicated_vector_red(Value* ptr, std::vector<Value*> values, Value* pred, int sm) {
  llvm::Type* t = values[0]->getType();
  if (values.size() == 1 || t->isDoubleTy()) {  // no vector reduction of f64 exists
    for (size_t i = 0; i < values.size(); ++i) predicated("red", gep(t, ptr, c32(i)), values[i], pred);
    return;
  }
  const bool half = t->is16bitFPTy();
  if (half) values = half_pairs(values);
  llvm::Type* word_type = half ? i32_ : t;
  const char* op = half ? "add.noftz" : "add";
  const char* type = !half ? "f32" : t->isBFloatTy() ? "bf16x2" : "f16x2";
  const char* constraint = half ? "r" : "f";
  // Vector reductions (.v2/.v4) need sm_90 and PTX 8.1; elsewhere each word is reduced alone.
  const size_t per_red = sm >= 90 ? std::min<size_t>(values.size(), 4) : 1;
  for (size_t first = 0; first < values.size(); first += per_red) {
    std::string operands, constraints = "l";
    for (size_t i = 0; i < per_red; ++i) {
      operands += fmt::format("{}${}", i ? ", " : "", i + 1);
      constraints += fmt::format(",{}", constraint);
    }
    std::string instruction =
        per_red == 1 ? fmt::format("red.global.{}.{} [$0], $1;", op, type)
                     : fmt::format("red.global.{}.v{}.{} [$0], {{{}}};", op, per_red, type, operands);
    std::string asm_text =
        fmt::format("{{ .reg .pred isaac_p; setp.ne.b32 isaac_p, ${}, 0; @isaac_p {} }}", per_red + 1, instruction);
    std::vector<llvm::Type*> types{i64_};
    Value* address = gep(word_type, ptr, c32(first));
    std::vector<Value*> args{b_.CreatePtrToInt(address, i64_)};
    for (size_t i = 0; i < per_red; ++i) types.push_back(word_type), args.push_back(values[first + i]);
    types.push_back(i32_);
    args.push_back(b_.CreateZExt(pred, i32_));
    auto* asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), types, false), asm_text,
                                        constraints + ",r,~{memory}", true);
    b_.CreateCall(asm_fn, args);
  }
}

void KernelBuilder::memory_fence() { ptx_statement("", "", {}); }

void KernelBuilder::grid_dependency(const char* op) { ptx_statement(fmt::format("griddepcontrol.{};", op), "", {}); }

void KernelBuilder::ptx_statement(const std::string& text, const std::string& constraints,
                                  const std::vector<Value*>& args) {
  std::vector<llvm::Type*> types;
  for (Value* a : args) types.push_back(a->getType());
  std::string clobbered = constraints.empty() ? "~{memory}" : constraints + ",~{memory}";
  b_.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), types, false), text, clobbered, true), args);
}

// ---- TiledKernelBuilder

TiledKernelBuilder::TiledKernelBuilder(llvm::Module& module, ir::DType dtype, const GemmParams& t, bool a_trans,
                                       bool b_trans, bool half_acc, int sm)
    : KernelBuilder(module, dtype),
      t_(t),
      l_(dtype, a_trans, b_trans, t),
      sm_(sm),
      a_k_contiguous_(a_trans),
      b_k_contiguous_(!b_trans),
      half_acc_(half_acc) {
  acc_ = half_acc_ ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(elem_, 2)) : scalar_;
  acc_scalar_ = half_acc_ ? elem_ : scalar_;
  // TC=2's swizzle patterns repeat every 8 rows of up to 128 bytes: stages must start 1024-byte aligned.
  if (t_.tc == 2) smem_->setAlignment(llvm::Align(1024));
}

std::vector<LoadSlot> TiledKernelBuilder::slots(int contiguous, int other, int along, int vector) const {
  int across = l_.threads / along;
  std::vector<LoadSlot> out;
  for (int o = 0; o < other; o += across)
    for (int c = 0; c < contiguous; c += along * vector) out.push_back({c, o});
  return out;
}

std::pair<llvm::Value*, llvm::Value*> TiledKernelBuilder::load_position(int along, int vector) {
  if (t_.tc == 2) {
    Value* lane = b_.CreateMul(b_.CreateURem(b_.CreateUDiv(tid_, c32(8)), c32(along)), c32(vector));
    Value* row = b_.CreateAdd(b_.CreateURem(tid_, c32(8)), b_.CreateMul(b_.CreateUDiv(tid_, c32(8 * along)), c32(8)));
    return {lane, row};
  }
  return {b_.CreateMul(b_.CreateURem(tid_, c32(along)), c32(vector)), b_.CreateUDiv(tid_, c32(along))};
}

// wgmma's canonical swizzled layouts (PTX ISA, "Shared Memory Matrix Layout"). A K-contiguous
// operand keeps each M/N row's U elements in one row of 2U bytes. An M/N-contiguous one is cut into
// blocks of `width` bytes along M/N, each holding all U rows of K. Rows are dense; the 16-byte chunk
// c of row r is stored at chunk c ^ (r mod width/16) of its row (for 32 and 64-byte rows, r counts
// 128-byte lines), which spreads eight consecutive rows' chunk c, what the tensor cores read at
// once and eight threads copy at once, over all banks.
int TiledKernelBuilder::wgmma_width(bool k_contiguous, int mn_per_instruction) const {
  return l_.wgmma_width(t_, k_contiguous, mn_per_instruction);
}

llvm::Value* TiledKernelBuilder::wgmma_unswizzled_bytes(Value* mn, Value* k, bool k_contiguous, int width) {
  if (k_contiguous) return b_.CreateAdd(b_.CreateMul(mn, c32(width)), b_.CreateMul(k, c32(l_.elem)));
  const int per_row = width / l_.elem;
  Value* block = b_.CreateMul(b_.CreateUDiv(mn, c32(per_row)), c32(t_.u * width));
  return b_.CreateAdd(b_.CreateAdd(block, b_.CreateMul(k, c32(width))),
                      b_.CreateMul(b_.CreateURem(mn, c32(per_row)), c32(l_.elem)));
}

llvm::Value* TiledKernelBuilder::wgmma_offset(Value* mn, Value* k, bool k_contiguous, int width) {
  Value* bytes = wgmma_unswizzled_bytes(mn, k, k_contiguous, width);
  Value* line_bits = b_.CreateAnd(b_.CreateLShr(bytes, c32(3)), c32((width / 16 - 1) << 4));
  return b_.CreateUDiv(b_.CreateXor(bytes, line_bits), c32(l_.elem));
}

llvm::Value* TiledKernelBuilder::stage_offset(Value* r, Value* c, int pitch, bool k_contiguous, int width) {
  if (t_.tc != 2) return b_.CreateAdd(b_.CreateMul(r, c32(pitch)), c);
  return k_contiguous ? wgmma_offset(r, c, true, width) : wgmma_offset(c, r, false, width);
}

void TiledKernelBuilder::thread_coordinates() {
  int tm_count = t_.ml / t_.ms, tn_count = t_.nl / t_.ns;
  tm_ = b_.CreateURem(tid_, c32(tm_count));
  tn_ = b_.CreateURem(b_.CreateUDiv(tid_, c32(tm_count)), c32(tn_count));
  tk_ = b_.CreateUDiv(tid_, c32(tm_count * tn_count));
  if (t_.tc == 2) {
    // Warp groups tile the block along M first; the warps of a group take 16 rows each.
    Value* group = b_.CreateUDiv(tid_, c32(128));
    int groups_m = tm_count / 8;
    wm_ = b_.CreateURem(group, c32(groups_m));
    wn_ = b_.CreateUDiv(group, c32(groups_m));
    warp_ = b_.CreateUDiv(b_.CreateURem(tid_, c32(128)), c32(32));
    lane_ = b_.CreateURem(tid_, c32(32));
    group_ = b_.CreateUDiv(lane_, c32(4));
    quad_ = b_.CreateURem(lane_, c32(4));
  } else if (t_.tc) {
    // A warp takes an (8 MS) x (4 NS) tile; the warps of a group tile the block along M first.
    Value* warp = b_.CreateUDiv(b_.CreateURem(tid_, c32(tm_count * tn_count)), c32(32));
    int warps_m = tm_count / 8;
    wm_ = b_.CreateURem(warp, c32(warps_m));
    wn_ = b_.CreateUDiv(warp, c32(warps_m));
    lane_ = b_.CreateURem(tid_, c32(32));
    group_ = b_.CreateUDiv(lane_, c32(4));
    quad_ = b_.CreateURem(lane_, c32(4));
  }
}

// Cell (i, j) of a TC=1 thread: row 8 i + g (f16: i = 2 (16-row mma tile) + (lower 8 rows); f64: the
// i-th 8-row tile), column 8 (j / 2) + 2 t + j % 2 (the j/2-th 8-column tile, then the thread's pair),
// as mma.sync's accumulator fragments place them.
// Cell (i, j) of a TC=2 thread: wgmma's accumulator fragment of an m64nN tile is mma.sync's m16n8
// fragment repeated, 16 rows per warp and 8 columns per pair of cells: row 64 (i / 2) + 16 warp + g
// + 8 (i % 2), column 8 (j / 2) + 2 t + j % 2.
llvm::Value* TiledKernelBuilder::cell_row(int i) {
  if (!t_.tc) return b_.CreateAdd(b_.CreateMul(tm_, c32(l_.fvm)), c32(fragment_offset(i, l_.fvm, t_.ml, t_.ms)));
  if (t_.tc == 2)
    return b_.CreateAdd(b_.CreateAdd(b_.CreateMul(wm_, c32(8 * t_.ms)), b_.CreateMul(warp_, c32(16))),
                        b_.CreateAdd(group_, c32(64 * (i / 2) + 8 * (i % 2))));
  return b_.CreateAdd(b_.CreateMul(wm_, c32(8 * t_.ms)), b_.CreateAdd(group_, c32(8 * i)));
}

llvm::Value* TiledKernelBuilder::cell_column(int j) {
  if (!t_.tc) return b_.CreateAdd(b_.CreateMul(tn_, c32(l_.fvn)), c32(fragment_offset(j, l_.fvn, t_.nl, t_.ns)));
  if (t_.tc == 2)
    return b_.CreateAdd(b_.CreateMul(wn_, c32(16 * t_.ns)),
                        b_.CreateAdd(b_.CreateMul(quad_, c32(2)), c32(8 * (j / 2) + j % 2)));
  return b_.CreateAdd(b_.CreateMul(wn_, c32(4 * t_.ns)),
                      b_.CreateAdd(b_.CreateMul(quad_, c32(2)), c32(8 * (j / 2) + j % 2)));
}

void TiledKernelBuilder::stage_scaled_cells(Value* scale, const std::function<Value*(Value*, Value*)>& index) {
  for (int j = 0; j < cell_columns(); ++j)
    for (int i = 0; i < cell_rows(); ++i)
      b_.CreateStore(b_.CreateFMul(scale, b_.CreateLoad(acc_, acc_cells_[i * cell_columns() + j])),
                     gep(acc_, smem_, index(cell_row(i), cell_column(j))));
}

// Lanes 8 k to 8 k + 7 address the lines of the k-th of an instruction's matrices: four at a time,
// then two and one where the cells leave fewer.
void TiledKernelBuilder::stage_matrices(bool trans, const std::function<Value*(Value*, Value*)>& offset, bool read_old,
                                        const std::function<Value*(int, int, Value*)>& value) {
  std::vector<std::pair<int, int>> matrices;  // (cell row i, column pair jj)
  for (int i = 0; i < cell_rows(); ++i)
    for (int jj = 0; jj < cell_columns() / 2; ++jj) matrices.emplace_back(i, jj);
  Value* which = b_.CreateUDiv(lane_, c32(8));
  Value* line = b_.CreateURem(lane_, c32(8));
  auto* pair_type = vec(elem_, 2);
  // GEMM's reads come in fours (16-bit TC=1 has MS even and NS a multiple of 4, TC=2 MS of 8 or 16).
  if (read_old && matrices.size() % 4) throw Error("internal error: the staged matrices to read do not come in fours");
  for (std::size_t first = 0, count = 0; first < matrices.size(); first += count) {
    const std::size_t left = matrices.size() - first;
    count = left >= 4 ? 4 : left >= 2 ? 2 : 1;
    Value* row0 = nullptr;
    Value* column0 = nullptr;
    for (std::size_t k = 0; k < count; ++k) {
      auto [i, jj] = matrices[first + k];
      // The matrix's first row and column: this lane's cell less its place in the fragment.
      Value* row = b_.CreateSub(cell_row(i), group_);
      Value* column = b_.CreateSub(cell_column(2 * jj), b_.CreateMul(quad_, c32(2)));
      Value* mine = b_.CreateICmpEQ(which, c32(int(k)));
      row0 = row0 ? b_.CreateSelect(mine, row, row0) : row;
      column0 = column0 ? b_.CreateSelect(mine, column, column0) : column;
    }
    Value* address = trans ? offset(row0, b_.CreateAdd(column0, line)) : offset(b_.CreateAdd(row0, line), column0);
    Value* old = nullptr;
    if (read_old)
      old = b_.CreateIntrinsic(trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                                     : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                               {smem_->getType()}, {gep(b_.getInt8Ty(), smem_, address)});
    std::vector<Value*> registers{b_.CreateAdd(b_.CreatePtrToInt(smem_, i32_), address)};
    for (std::size_t k = 0; k < count; ++k) {
      auto [i, jj] = matrices[first + k];
      Value* olds = old ? b_.CreateBitCast(b_.CreateExtractValue(old, unsigned(k)), pair_type) : nullptr;
      Value* pair = llvm::PoisonValue::get(pair_type);
      for (int e = 0; e < 2; ++e) {
        Value* cell = value(i, 2 * jj + e, olds ? b_.CreateExtractElement(olds, e) : nullptr);
        pair = b_.CreateInsertElement(pair, b_.CreateFPTrunc(cell, elem_), e);
      }
      registers.push_back(b_.CreateBitCast(pair, i32_));
    }
    std::string operands = "{$1", constraints = "r,r";
    for (std::size_t k = 1; k < count; ++k) {
      operands += ", $" + std::to_string(k + 1);
      constraints += ",r";
    }
    ptx_statement("stmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (trans ? ".trans" : "") +
                      ".shared.b16 [$0], " + operands + "};",
                  constraints, registers);
  }
}

void TiledKernelBuilder::for_each_staged_run(int first, int pitch, bool along_n, llvm::Type* type,
                                             const std::function<void(Value*, Value*, Value*, Value*)>& visit) {
  const int width = 16 / l_.elem;
  const int per_line = (along_n ? t_.nl : t_.ml) / width, vectors = per_line * (along_n ? t_.ml : t_.nl);
  for (int pass = 0; pass < vectors; pass += l_.threads) {
    Value* v = b_.CreateAdd(tid_, c32(pass));
    Value* line = b_.CreateUDiv(v, c32(per_line));
    Value* start = b_.CreateMul(b_.CreateURem(v, c32(per_line)), c32(width));
    Value* index = b_.CreateAdd(b_.CreateMul(line, c32(pitch)), start);
    if (first) index = b_.CreateAdd(c32(first), index);
    Value* run = b_.CreateAlignedLoad(vec(type, width), gep(type, smem_, index), llvm::Align(16));
    Value* in_tile = vectors % l_.threads ? b_.CreateICmpULT(v, c32(vectors)) : b_.getTrue();
    visit(run, along_n ? line : start, along_n ? start : line, in_tile);
  }
}

void TiledKernelBuilder::allocate_accumulators() {
  int cells = half_acc_ ? t_.ms * t_.ns / 2 : t_.ms * t_.ns;
  for (int e = 0; e < cells; ++e) {
    acc_cells_.push_back(local(acc_, "acc"));
    b_.CreateStore(zero(acc_), acc_cells_.back());
  }
}

void TiledKernelBuilder::zero_accumulators() {
  for (auto* cell : acc_cells_) b_.CreateStore(zero(acc_), cell);
}

void TiledKernelBuilder::store_tile(Value* stage) {
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
  store(0, l_.stage_a, l_.pitch_a, a_k_contiguous_, slots_a_, t_.la, pre_a_, t_.va);
  store(l_.stages * l_.stage_a, l_.stage_b, l_.pitch_b, b_k_contiguous_, slots_b_, t_.lb, pre_b_, t_.vb);
}

// Per 16-deep step, each warp loads its A fragments (16 x 16, one ldmatrix.x4 each) and B fragments
// (16 x 16 as two 16 x 8, one ldmatrix.x4 each) from shared memory, then issues (MS/2) x (NS/2)
// mma.sync.m16n8k16 with f32 accumulators. In ldmatrix.x4, lanes 8q..8q+7 give the row addresses of
// matrix q and each thread receives the pair of elements at (its row g, columns 2t, 2t+1) of each
// matrix. Tiles stored with rows along K need .trans for that; tiles with rows along M (or N) do not.
void TiledKernelBuilder::compute_stage_mma(Value* stage) {
  if (elem_->isDoubleTy()) return compute_stage_dmma(stage);
  if (elem_->isFloatTy()) return compute_stage_tf32(stage);
  int steps = t_.u / t_.kl;
  Value* k_first = b_.CreateMul(tk_, c32(steps));
  Value* q = b_.CreateUDiv(lane_, c32(8));
  Value* r = b_.CreateURem(lane_, c32(8));
  Value* q_low = b_.CreateURem(q, c32(2));
  Value* q_high = b_.CreateUDiv(q, c32(2));
  // The element (k, mn) of a tile, as an offset from its stage.
  auto at = [&](bool rows_k, int pitch, Value* k, Value* mn) {
    return rows_k ? b_.CreateAdd(b_.CreateMul(k, c32(pitch)), mn) : b_.CreateAdd(b_.CreateMul(mn, c32(pitch)), k);
  };
  // A: matrix q is rows M 8 (q % 2), K 8 (q / 2) of a 16 x 16 tile (registers a0..a3 of mma).
  // B: matrix q is K 8 (q % 2), N 8 (q / 2): registers 0-1 and 2-3 are two n8 tiles.
  // The lane's row: along M for A (and N for B) where rows run along M, along K where they run along K.
  Value* a_k = b_.CreateAdd(k_first, a_rows_k() ? b_.CreateAdd(b_.CreateMul(q_high, c32(8)), r) : b_.CreateMul(q_high, c32(8)));
  Value* a_m = b_.CreateAdd(b_.CreateMul(wm_, c32(8 * t_.ms)),
                            a_rows_k() ? b_.CreateMul(q_low, c32(8)) : b_.CreateAdd(b_.CreateMul(q_low, c32(8)), r));
  Value* b_k = b_.CreateAdd(k_first, b_rows_k() ? b_.CreateAdd(b_.CreateMul(q_low, c32(8)), r) : b_.CreateMul(q_low, c32(8)));
  Value* b_n = b_.CreateAdd(b_.CreateMul(wn_, c32(4 * t_.ns)),
                            b_rows_k() ? b_.CreateMul(q_high, c32(8)) : b_.CreateAdd(b_.CreateMul(q_high, c32(8)), r));
  Value* a_base = b_.CreateAdd(b_.CreateMul(stage, c32(l_.stage_a)), at(a_rows_k(), l_.pitch_a, a_k, a_m));
  Value* b_base = b_.CreateAdd(b_.CreateAdd(c32(l_.stages * l_.stage_a), b_.CreateMul(stage, c32(l_.stage_b))),
                               at(b_rows_k(), l_.pitch_b, b_k, b_n));
  // Offsets of step `k` and of the mn-th 16-wide block from the lane's base.
  auto step_offset = [&](bool rows_k, int pitch, int k, int mn) { return rows_k ? k * pitch + mn : mn * pitch + k; };
  // f16 fragments are <2 x half> operands of the f16 mma, bf16 ones the 32-bit words of the bf16 mma.
  const bool bf16 = elem_->isBFloatTy();
  llvm::Type* half2 = llvm::FixedVectorType::get(elem_, 2);
  auto ldmatrix = [&](Value* index, bool trans) {
    Value* ptr = gep(elem_, smem_, index);
    auto id = trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16;
    Value* regs = b_.CreateIntrinsic(id, {ptr->getType()}, {ptr});
    std::vector<Value*> out;
    for (unsigned e = 0; e < 4; ++e) {
      Value* word = b_.CreateExtractValue(regs, e);
      out.push_back(bf16 ? word : b_.CreateBitCast(word, half2));
    }
    return out;
  };
  for (int step = 0; step < steps; step += 16) {
    if (step > 0) memory_fence();
    std::vector<std::vector<Value*>> a, bv;
    for (int it = 0; it < t_.ms / 2; ++it)
      a.push_back(ldmatrix(b_.CreateAdd(a_base, c32(step_offset(a_rows_k(), l_.pitch_a, step, 16 * it))), a_rows_k()));
    for (int jp = 0; jp < t_.ns / 4; ++jp) {
      std::vector<Value*> pair =
          ldmatrix(b_.CreateAdd(b_base, c32(step_offset(b_rows_k(), l_.pitch_b, step, 16 * jp))), b_rows_k());
      bv.push_back({pair[0], pair[1]});
      bv.push_back({pair[2], pair[3]});
    }
    for (int it = 0; it < t_.ms / 2; ++it)
      for (int jt = 0; jt < t_.ns / 2; ++jt) {
        llvm::AllocaInst* cells[4] = {acc_cells_[(2 * it) * t_.ns + 2 * jt], acc_cells_[(2 * it) * t_.ns + 2 * jt + 1],
                                      acc_cells_[(2 * it + 1) * t_.ns + 2 * jt],
                                      acc_cells_[(2 * it + 1) * t_.ns + 2 * jt + 1]};
        std::vector<Value*> args = {a[it][0], a[it][1], a[it][2], a[it][3], bv[jt][0], bv[jt][1]};
        for (auto* cell : cells) args.push_back(b_.CreateLoad(acc_, cell));
        Value* d = b_.CreateIntrinsic(bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                           : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32,
                                      {}, args);
        for (unsigned e = 0; e < 4; ++e) b_.CreateStore(b_.CreateExtractValue(d, e), cells[e]);
      }
  }
}

// f64 and f32 (TF32) fragments are single loads: lane 4 g + t reads (k = t, m or n = g) of each
// tile. The shared-memory index of the lane's first A and B elements in stage `stage`.
std::pair<llvm::Value*, llvm::Value*> TiledKernelBuilder::lane_fragment_bases(Value* stage) {
  int steps = t_.u / t_.kl;
  Value* k_lane = b_.CreateAdd(b_.CreateMul(tk_, c32(steps)), quad_);
  Value* m_lane = b_.CreateAdd(b_.CreateMul(wm_, c32(8 * t_.ms)), group_);
  Value* n_lane = b_.CreateAdd(b_.CreateMul(wn_, c32(4 * t_.ns)), group_);
  auto at = [&](bool rows_k, int pitch, Value* k, Value* mn) {
    return rows_k ? b_.CreateAdd(b_.CreateMul(k, c32(pitch)), mn) : b_.CreateAdd(b_.CreateMul(mn, c32(pitch)), k);
  };
  Value* a_base = b_.CreateAdd(b_.CreateMul(stage, c32(l_.stage_a)), at(a_rows_k(), l_.pitch_a, k_lane, m_lane));
  Value* b_base = b_.CreateAdd(b_.CreateAdd(c32(l_.stages * l_.stage_a), b_.CreateMul(stage, c32(l_.stage_b))),
                               at(b_rows_k(), l_.pitch_b, k_lane, n_lane));
  return {a_base, b_base};
}

// The offset of element (k, mn) of a tile from the lane's base, in a tile with rows along K or not.
static int lane_fragment_offset(bool rows_k, int pitch, int k, int mn) { return rows_k ? k * pitch + mn : mn * pitch + k; }

// f64: per 4-deep step, each thread loads its A elements (row g of each 8-row mma tile, column t)
// and B elements (row t, column g of each 8-column tile) from shared memory, and the warp issues
// MS x (NS/2) mma.sync.m8n8k4.f64 (on sm_90, pairs of them as m16n8k4), whose accumulator fragment
// is the pair of columns (2t, 2t + 1) at row g: the same cells as the f16 layout.
void TiledKernelBuilder::compute_stage_dmma(Value* stage) {
  int steps = t_.u / t_.kl;
  auto [a_base, b_base] = lane_fragment_bases(stage);
  auto offset = lane_fragment_offset;
  auto load = [&](Value* index) {
    return b_.CreateAlignedLoad(elem_, gep(elem_, smem_, index), llvm::Align(l_.elem));
  };
  // sm_90 has a 16-row DMMA shape: tiles 2p and 2p + 1 go to one instruction where both exist.
  auto paired = [&](int i) { return sm_ >= 90 && i % 2 == 0 && i + 1 < t_.ms; };
  for (int step = 0; step < steps; step += 4) {
    if (step > 0) memory_fence();
    std::vector<Value*> a, bv;
    for (int i = 0; i < t_.ms; ++i)
      a.push_back(load(b_.CreateAdd(a_base, c32(offset(a_rows_k(), l_.pitch_a, step, 8 * i)))));
    for (int j = 0; j < t_.ns / 2; ++j)
      bv.push_back(load(b_.CreateAdd(b_base, c32(offset(b_rows_k(), l_.pitch_b, step, 8 * j)))));
    for (int i = 0; i < t_.ms; i += paired(i) ? 2 : 1)
      for (int j = 0; j < t_.ns / 2; ++j) {
        std::vector<llvm::AllocaInst*> cells;
        for (int r = 0; r < (paired(i) ? 2 : 1); ++r)
          for (int e = 0; e < 2; ++e) cells.push_back(acc_cells_[(i + r) * t_.ns + 2 * j + e]);
        std::vector<Value*> c;
        for (auto* cell : cells) c.push_back(b_.CreateLoad(acc_, cell));
        Value* d = paired(i) ? dmma_m16n8k4(a[i], a[i + 1], bv[j], c)
                             : b_.CreateIntrinsic(llvm::Intrinsic::nvvm_mma_m8n8k4_row_col_f64, {},
                                                  {a[i], bv[j], c[0], c[1]});
        for (unsigned e = 0; e < cells.size(); ++e) b_.CreateStore(b_.CreateExtractValue(d, e), cells[e]);
      }
  }
}

// f32 on tensor cores: per 8-deep step, each thread loads its A elements (row g of each 8-row
// tile, columns t and t + 4) and B elements (rows t and t + 4, column g of each 8-column tile), as
// mma.sync.m16n8k8.tf32 places them, and splits each x into TF32 parts hi = rna(x) and lo =
// rna(x - hi), with |x - hi - lo| <= 2^-22 |x|. Three mma per 16 x 8 tile add a_lo b_hi, a_hi b_lo
// and a_hi b_hi: each product is off by at most about 3 x 2^-22 of |a b| (the dropped a_lo b_lo and
// the two remainders), where one TF32 product would be off by about 2^-10. An infinite or NaN
// element, or one whose rounding overflows (|x| > 3.40265e38), makes its lo NaN, and with it every
// cell it reaches: recompute_nan_cells_with computes those again. Handling such values here
// instead (a third word per element, zero where hi is not finite) made the kernels 1.3x slower.
// The accumulator fragment is the f64 layout's: rows g and g + 8 are tiles 2p and 2p + 1.
void TiledKernelBuilder::compute_stage_tf32(Value* stage) {
  int steps = t_.u / t_.kl;
  auto [a_base, b_base] = lane_fragment_bases(stage);
  auto offset = lane_fragment_offset;
  struct Parts {
    Value *hi, *lo;
  };
  // hi rounds with integer arithmetic: half a TF32 unit added to the magnitude's bits, then the low 13
  // bits cleared, is rna for every finite x whose rounding does not overflow. cvt.rna would also
  // test for infinities and NaN first, which costs a compare and a select per element; here such an
  // x gives a NaN lo, and the cells it reaches are computed again. lo keeps cvt.rna, which keeps a NaN
  // a NaN (adding to the canonical NaN's bits carries into the sign and leaves -0).
  auto load_split = [&](Value* index) {
    Value* x = b_.CreateAlignedLoad(elem_, gep(elem_, smem_, index), llvm::Align(l_.elem));
    Value* hi = b_.CreateAnd(b_.CreateAdd(b_.CreateBitCast(x, i32_), c32(0x1000)), c32(static_cast<int>(0xffffe000u)));
    Value* rest = b_.CreateFSub(x, b_.CreateBitCast(hi, elem_));
    return Parts{hi, b_.CreateIntrinsic(llvm::Intrinsic::nvvm_f2tf32_rna, {}, {rest})};
  };
  for (int step = 0; step < steps; step += 8) {
    if (step > 0) memory_fence();
    // a[i][h]: 8-row tile i at columns t + 4 h of the step; bv[j][h]: 8-column tile j at rows t + 4 h.
    std::vector<std::array<Parts, 2>> a(t_.ms), bv(t_.ns / 2);
    for (int i = 0; i < t_.ms; ++i)
      for (int h = 0; h < 2; ++h)
        a[i][h] = load_split(b_.CreateAdd(a_base, c32(offset(a_rows_k(), l_.pitch_a, step + 4 * h, 8 * i))));
    for (int j = 0; j < t_.ns / 2; ++j)
      for (int h = 0; h < 2; ++h)
        bv[j][h] = load_split(b_.CreateAdd(b_base, c32(offset(b_rows_k(), l_.pitch_b, step + 4 * h, 8 * j))));
    for (int i = 0; i < t_.ms; i += 2)
      for (int j = 0; j < t_.ns / 2; ++j) {
        llvm::AllocaInst* cells[4] = {acc_cells_[i * t_.ns + 2 * j], acc_cells_[i * t_.ns + 2 * j + 1],
                                      acc_cells_[(i + 1) * t_.ns + 2 * j], acc_cells_[(i + 1) * t_.ns + 2 * j + 1]};
        Value* c[4];
        for (int e = 0; e < 4; ++e) c[e] = b_.CreateLoad(acc_, cells[e]);
        auto mma = [&](Value* Parts::*from_a, Value* Parts::*from_b) {
          Value* d = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32, {},
                                        {a[i][0].*from_a, a[i + 1][0].*from_a, a[i][1].*from_a, a[i + 1][1].*from_a,
                                         bv[j][0].*from_b, bv[j][1].*from_b, c[0], c[1], c[2], c[3]});
          for (unsigned e = 0; e < 4; ++e) c[e] = b_.CreateExtractValue(d, e);
        };
        mma(&Parts::lo, &Parts::hi);
        mma(&Parts::hi, &Parts::lo);
        mma(&Parts::hi, &Parts::hi);
        for (int e = 0; e < 4; ++e) b_.CreateStore(c[e], cells[e]);
      }
  }
}

// D = A B + C for a 16 x 8 x 4 f64 tile (sm_90; LLVM 19 has no intrinsic for it). a0 and a1 hold
// rows g and g + 8, c[0..1] and c[2..3] the column pair of those rows: the fragments of two m8n8k4
// tiles stacked along M.
llvm::Value* TiledKernelBuilder::dmma_m16n8k4(Value* a0, Value* a1, Value* b, const std::vector<Value*>& c) {
  llvm::Type* f64 = b_.getDoubleTy();
  auto* result = llvm::StructType::get(b_.getContext(), {f64, f64, f64, f64});
  auto* type = llvm::FunctionType::get(result, std::vector<llvm::Type*>(7, f64), false);
  auto* mma = llvm::InlineAsm::get(
      type, "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {$0, $1, $2, $3}, {$4, $5}, {$6}, {$7, $8, $9, $10};",
      "=d,=d,=d,=d,d,d,d,d,d,d,d", false);
  return b_.CreateCall(mma, {a0, a1, b, c[0], c[1], c[2], c[3]});
}

// Per 16-deep step, each warp group issues MS/8 wgmma.mma_async m64nNk16 (N = 16 NS) on its rows of
// A and its columns of B, straight from the stage's swizzled tiles; the products of this stage stay
// in flight while the next stage is copied, and the previous stage's must be done (wait_group 1)
// before main_loop_async refills its buffer. With one_wgmma_statement_ the stage's products are one
// inline-asm statement: LLVM then ties the accumulators in and out once a stage instead of once a
// product.
void TiledKernelBuilder::compute_stage_wgmma(Value* stage) {
  const int n = 16 * t_.ns;
  const int a_width = wgmma_width(a_k_contiguous_, 64), b_width = wgmma_width(b_k_contiguous_, n);
  // The element offset of the operand's first row (K-contiguous) or block (M/N-contiguous) at mn,
  // at K step `step`.
  auto start = [&](bool k_contiguous, int width, Value* mn, int step) {
    return b_.CreateUDiv(wgmma_unswizzled_bytes(mn, c32(step), k_contiguous, width), c32(l_.elem));
  };
  Value* a_stage = b_.CreateMul(stage, c32(l_.stage_a));
  Value* b_stage = b_.CreateAdd(c32(l_.stages * l_.stage_a), b_.CreateMul(stage, c32(l_.stage_b)));
  Value* a_row = b_.CreateMul(wm_, c32(8 * t_.ms));
  Value* b_column = b_.CreateMul(wn_, c32(n));
  wgmma_op("wgmma.fence.sync.aligned;");
  std::vector<WgmmaProduct> products;
  for (int step = 0; step < t_.u; step += 16) {
    Value* b_descriptor =
        wgmma_descriptor(b_.CreateAdd(b_stage, start(b_k_contiguous_, b_width, b_column, step)), b_width,
                         t_.u * b_width);
    for (int tile = 0; tile < t_.ms / 8; ++tile) {
      Value* a_descriptor = wgmma_descriptor(
          b_.CreateAdd(a_stage, start(a_k_contiguous_, a_width, b_.CreateAdd(a_row, c32(64 * tile)), step)), a_width,
          t_.u * a_width);
      products.push_back({a_descriptor, b_descriptor, tile_cells(tile, n)});
      if (!one_wgmma_statement_) {
        wgmma(products, n);
        products.clear();
      }
    }
  }
  if (!products.empty()) wgmma(products, n);
  wgmma_op("wgmma.commit_group.sync.aligned;");
  wgmma_op("wgmma.wait_group.sync.aligned 1;");
}

// The split keeps compute_stage_tf32's scheme (hi by integer arithmetic, lo by cvt.rna). A stage
// that is K-contiguous in shared memory already has the split buffers' layout, so its chunks map one
// to one; an M/N-contiguous one is read 4 rows of M/N at one k per chunk, consecutive threads taking
// consecutive k, so that a warp's scalar writes fill whole 128-byte rows of the K-contiguous copy.
void TiledKernelBuilder::split_stage(Value* stage, Value* split) {
  const int width = wgmma_width(true, 0);
  auto* words = llvm::FixedVectorType::get(i32_, 4);
  auto* floats = llvm::FixedVectorType::get(elem_, 4);
  Value* base = b_.CreateAdd(c32(l_.split_region), b_.CreateMul(split, c32(l_.split_size)));
  auto operand = [&](int raw_region, int stage_size, bool k_contiguous, int raw_width, Value* hi_region) {
    Value* raw = b_.CreateAdd(c32(raw_region), b_.CreateMul(stage, c32(stage_size)));
    Value* lo_region = b_.CreateAdd(hi_region, c32(stage_size));
    const int chunks = stage_size / 4;
    for (int first = 0; first < chunks; first += l_.threads) {
      Value* chunk = b_.CreateAdd(tid_, c32(first));
      auto body = [&] {
        Value* mn = nullptr;
        Value* k = nullptr;
        Value* from = nullptr;
        if (k_contiguous) {
          from = b_.CreateMul(chunk, c32(4));
        } else {
          k = b_.CreateURem(chunk, c32(t_.u));
          mn = b_.CreateMul(b_.CreateUDiv(chunk, c32(t_.u)), c32(4));
          from = wgmma_offset(mn, k, false, raw_width);
        }
        Value* x = b_.CreateAlignedLoad(words, gep(elem_, smem_, b_.CreateAdd(raw, from)), llvm::Align(16));
        Value* hi = b_.CreateAnd(b_.CreateAdd(x, b_.CreateVectorSplat(4, c32(0x1000))),
                                 b_.CreateVectorSplat(4, c32(static_cast<int>(0xffffe000u))));
        Value* rest = b_.CreateFSub(b_.CreateBitCast(x, floats), b_.CreateBitCast(hi, floats));
        Value* lo = llvm::PoisonValue::get(words);
        for (int e = 0; e < 4; ++e)
          lo = b_.CreateInsertElement(
              lo, b_.CreateIntrinsic(llvm::Intrinsic::nvvm_f2tf32_rna, {}, {b_.CreateExtractElement(rest, e)}), e);
        if (k_contiguous) {
          b_.CreateAlignedStore(hi, gep(i32_, smem_, b_.CreateAdd(hi_region, from)), llvm::Align(16));
          b_.CreateAlignedStore(lo, gep(i32_, smem_, b_.CreateAdd(lo_region, from)), llvm::Align(16));
          return;
        }
        for (int e = 0; e < 4; ++e) {
          Value* to = wgmma_offset(b_.CreateAdd(mn, c32(e)), k, true, width);
          b_.CreateAlignedStore(b_.CreateExtractElement(hi, e), gep(i32_, smem_, b_.CreateAdd(hi_region, to)),
                                llvm::Align(4));
          b_.CreateAlignedStore(b_.CreateExtractElement(lo, e), gep(i32_, smem_, b_.CreateAdd(lo_region, to)),
                                llvm::Align(4));
        }
      };
      if (first + l_.threads <= chunks) body();
      else if_then(b_.CreateICmpULT(chunk, c32(chunks)), body);
    }
  };
  operand(0, l_.stage_a, a_k_contiguous_, wgmma_width(a_k_contiguous_, 64), base);
  operand(l_.stages * l_.stage_a, l_.stage_b, b_k_contiguous_, wgmma_width(b_k_contiguous_, 16 * t_.ns),
          b_.CreateAdd(base, c32(2 * l_.stage_a)));
}

void TiledKernelBuilder::compute_stage_wgmma_tf32(Value* split) {
  const int n = 16 * t_.ns, width = wgmma_width(true, 0);
  Value* a_hi = b_.CreateAdd(c32(l_.split_region), b_.CreateMul(split, c32(l_.split_size)));
  Value* a_lo = b_.CreateAdd(a_hi, c32(l_.stage_a));
  Value* b_hi = b_.CreateAdd(a_hi, c32(2 * l_.stage_a));
  Value* b_lo = b_.CreateAdd(b_hi, c32(l_.stage_b));
  Value* a_row = b_.CreateMul(wm_, c32(8 * t_.ms));
  Value* b_column = b_.CreateMul(wn_, c32(n));
  wgmma_op("wgmma.fence.sync.aligned;");
  std::vector<WgmmaProduct> products;
  for (int step = 0; step < t_.u; step += 8) {
    auto descriptor = [&](Value* region, Value* mn) {
      Value* start = b_.CreateUDiv(wgmma_unswizzled_bytes(mn, c32(step), true, width), c32(l_.elem));
      return wgmma_descriptor(b_.CreateAdd(region, start), width, t_.u * width);
    };
    Value* b_hi_d = descriptor(b_hi, b_column);
    Value* b_lo_d = descriptor(b_lo, b_column);
    for (int tile = 0; tile < t_.ms / 8; ++tile) {
      Value* row = b_.CreateAdd(a_row, c32(64 * tile));
      Value* a_hi_d = descriptor(a_hi, row);
      Value* a_lo_d = descriptor(a_lo, row);
      const auto cells = tile_cells(tile, n);
      products.push_back({a_lo_d, b_hi_d, cells});
      products.push_back({a_hi_d, b_lo_d, cells});
      products.push_back({a_hi_d, b_hi_d, cells});
    }
  }
  wgmma(products, n);
  wgmma_op("wgmma.commit_group.sync.aligned;");
  wgmma_op("wgmma.wait_group.sync.aligned 1;");
}

std::vector<llvm::AllocaInst*> TiledKernelBuilder::tile_cells(int tile, int n) {
  const int columns = cell_columns();
  std::vector<llvm::AllocaInst*> cells;
  for (int d = 0; d < n / 2; ++d) cells.push_back(acc_cells_[(2 * tile + (d / 2) % 2) * columns + 2 * (d / 4) + d % 2]);
  return cells;
}

void TiledKernelBuilder::wgmma(const std::vector<WgmmaProduct>& products, int n) {
  // Operands: the distinct cells as outputs, two descriptors per product, the scale, then each cell
  // again as the input tied to its output.
  std::vector<llvm::AllocaInst*> cells;
  for (const WgmmaProduct& p : products)
    for (auto* cell : p.cells)
      if (std::find(cells.begin(), cells.end(), cell) == cells.end()) cells.push_back(cell);
  const int count = static_cast<int>(cells.size()), scale = count + 2 * static_cast<int>(products.size());
  std::string constraints;
  for (int d = 0; d < count; ++d) constraints += "=f,";
  for (std::size_t i = 0; i < products.size(); ++i) constraints += "l,l,";
  constraints += "r";
  for (int d = 0; d < count; ++d) constraints += fmt::format(",{}", d);
  // imm-trans: 0 reads a K-major tile (K contiguous in its core-matrix rows), 1 an M- or N-major one.
  // TF32 operands are K-major only, and the instruction takes no imm-trans.
  const std::string shape = l_.elem == 4         ? fmt::format("m64n{}k8.f32.tf32.tf32", n)
                            : elem_->isBFloatTy() ? fmt::format("m64n{}k16.f32.bf16.bf16", n)
                                                  : fmt::format("m64n{}k16.f32.f16.f16", n);
  const std::string trans =
      l_.elem == 4 ? "" : fmt::format(", {}, {}", a_k_contiguous_ ? 0 : 1, b_k_contiguous_ ? 0 : 1);
  std::string text;
  std::vector<llvm::Type*> types;
  std::vector<Value*> args;
  for (std::size_t i = 0; i < products.size(); ++i) {
    std::string outputs;
    for (auto* cell : products[i].cells)
      outputs += fmt::format("{}${}", outputs.empty() ? "" : ", ", std::find(cells.begin(), cells.end(), cell) - cells.begin());
    const int a = count + 2 * static_cast<int>(i);
    text += fmt::format(
        "{}{{ .reg .pred isaac_scale; setp.ne.b32 isaac_scale, ${}, 0; "
        "wgmma.mma_async.sync.aligned.{} {{{}}}, ${}, ${}, isaac_scale, 1, 1{}; }}",
        i ? "\n\t" : "", scale, shape, outputs, a, a + 1, trans);
    types.insert(types.end(), {i64_, i64_});
    args.insert(args.end(), {products[i].a, products[i].b});
  }
  types.push_back(i32_);
  args.push_back(c32(1));
  for (auto* cell : cells) {
    types.push_back(acc_);
    args.push_back(b_.CreateLoad(acc_, cell));
  }
  auto* result = llvm::StructType::get(ctx_, std::vector<llvm::Type*>(count, acc_));
  auto* call = b_.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(result, types, false), text, constraints, true),
                             args);
  call->addFnAttr(llvm::Attribute::Convergent);
  for (int d = 0; d < count; ++d) b_.CreateStore(b_.CreateExtractValue(call, d), cells[d]);
}

llvm::Value* TiledKernelBuilder::wgmma_descriptor(Value* offset, int width, int leading) {
  // Bits 0-13: start address / 16; 16-29: leading byte offset / 16 (between column blocks; unused
  // by K-contiguous operands); 32-45: stride byte offset / 16 (between groups of eight rows); 62-63:
  // the swizzle, 1 for 128-byte rows, 2 for 64, 3 for 32.
  const std::int64_t mode = width == 128 ? 1 : width == 64 ? 2 : 3;
  Value* address = b_.CreatePtrToInt(gep(elem_, smem_, offset), i64_);
  Value* start = b_.CreateAnd(b_.CreateLShr(address, c64(4)), c64(0x3fff));
  return b_.CreateOr(start, c64((std::int64_t(leading / 16) << 16) | (std::int64_t(8 * width / 16) << 32) | (mode << 62)));
}

void TiledKernelBuilder::wgmma_op(const std::string& op) {
  auto* call = b_.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), false), op, "~{memory}", true));
  call->addFnAttr(llvm::Attribute::Convergent);
}

void TiledKernelBuilder::pin_accumulators() {
  auto* pin = llvm::InlineAsm::get(llvm::FunctionType::get(acc_, {acc_}, false), "", "=f,0", true);
  for (auto* cell : acc_cells_) b_.CreateStore(b_.CreateCall(pin, {b_.CreateLoad(acc_, cell)}), cell);
}

void TiledKernelBuilder::compute_stage(Value* stage) {
  if (t_.tc == 2) return compute_stage_wgmma(stage);
  if (t_.tc) return compute_stage_mma(stage);
  int steps = t_.u / t_.kl;
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
  // The fence keeps each group of KS steps' shared-memory loads after the previous group's
  // arithmetic, so that LLVM does not hoist a whole stage of fragments into registers.
  for (int step = 0; step < steps; step += t_.ks) {
    if (step > 0) memory_fence();
    std::vector<std::vector<Value*>> a(t_.ks), bv(t_.ks);
    for (int s = 0; s < t_.ks; ++s) {
      a[s] = fragment(a_base, step + s, l_.pitch_a, t_.ml, t_.ms, l_.fvm);
      bv[s] = fragment(b_base, step + s, l_.pitch_b, t_.nl, t_.ns, l_.fvn);
    }
    for (int s = 0; s < t_.ks; ++s) {
      for (int j = 0; j < t_.ns; ++j) {
        if (half_acc_) {
          Value* b_pair = b_.CreateVectorSplat(2, bv[s][j]);
          for (int i = 0; i < t_.ms; i += 2) {
            Value* a_pair = b_.CreateInsertElement(b_.CreateInsertElement(llvm::PoisonValue::get(acc_), a[s][i], c32(0)),
                                                   a[s][i + 1], c32(1));
            auto* cell = acc_cells_[(i / 2) * t_.ns + j];
            Value* sum = b_.CreateIntrinsic(llvm::Intrinsic::fma, {acc_}, {a_pair, b_pair, b_.CreateLoad(acc_, cell)});
            b_.CreateStore(sum, cell);
          }
        } else {
          for (int i = 0; i < t_.ms; ++i) {
            auto* cell = acc_cells_[i * t_.ns + j];
            Value* sum = b_.CreateIntrinsic(llvm::Intrinsic::fma, {acc_},
                                            {to_scalar(a[s][i]), to_scalar(bv[s][j]), b_.CreateLoad(acc_, cell)});
            b_.CreateStore(sum, cell);
          }
        }
      }
    }
  }
}

void TiledKernelBuilder::recompute_nan_cells_with(const std::function<CellReader()>& reader) {
  Value* any_nan = b_.getFalse();
  for (auto* cell : acc_cells_) {
    Value* v = b_.CreateLoad(acc_, cell);
    any_nan = b_.CreateOr(any_nan, b_.CreateFCmpUNO(v, v));
  }
  if_then(any_nan, [&] {
    const int columns = cell_columns(), steps = t_.u / t_.kl;
    const CellReader read = reader();
    for (auto* cell : acc_cells_) b_.CreateStore(zero(acc_), cell);
    Value* tiles = b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(k_end_, k_begin_), c32(t_.u - 1)), c32(t_.u));
    Value* first = b_.CreateAdd(k_begin_, b_.CreateMul(tk_, c32(steps)));
    for_loop(tiles, [&](Value* t) {
      for_loop(c32(steps), [&](Value* s) {
        Value* k = b_.CreateAdd(first, b_.CreateAdd(b_.CreateMul(t, c32(t_.u)), s));
        if_then(b_.CreateICmpSLT(k, k_end_), [&] {
          const CellOperands x = read(k);
          for (std::size_t i = 0; i < x.rows.size(); ++i)
            for (std::size_t j = 0; j < x.columns.size(); ++j) {
              llvm::AllocaInst* cell = acc_cells_[i * std::size_t(columns) + j];
              b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fma, {scalar_},
                                                {x.rows[i], x.columns[j], b_.CreateLoad(acc_, cell)}),
                             cell);
            }
        });
      });
    });
  });
}

void TiledKernelBuilder::accumulate_and_store(Value* full, Value* total, bool overlap_previous) {
  allocate_accumulators();
  if (tile_loop_) return tile_loop_tma(total);
  main_loop(full, total);
  recompute_nan_cells();
  reduce_warp_groups();
  if (overlap_previous) {
    // The output is touched only after this point: a split's reduce kernel may start now, and the
    // prepare kernel that scaled the output by beta must have finished.
    grid_dependency("launch_dependents");
    grid_dependency("wait");
  }
  if (t_.kl > 1) {
    if_then(b_.CreateICmpEQ(tk_, c32(0)), [&] { epilogue(); });
  } else {
    epilogue();
  }
  b_.CreateRetVoid();
}

void TiledKernelBuilder::reduce_warp_groups() {
  if (t_.kl == 1) return;
  int group = (t_.ml / t_.ms) * (t_.nl / t_.ns);
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
    for (int g = 0; g < t_.kl - 1; ++g)
      for (int e = 0; e < cells; ++e) {
        Value* sum = b_.CreateFAdd(b_.CreateLoad(acc_, acc_cells_[e]), b_.CreateLoad(acc_, slot(c32(g), e)));
        b_.CreateStore(sum, acc_cells_[e]);
      }
  });
}

void KernelBuilder::async_commit() { ptx_statement("cp.async.commit_group;", "", {}); }

void KernelBuilder::async_wait(int pending) { ptx_statement(fmt::format("cp.async.wait_group {};", pending), "", {}); }

void KernelBuilder::async_copy(Value* shared_address, Value* global_ptr, int bytes, Value* source_bytes) {
  // .cg (L2 only) takes 16-byte copies; 4- and 8-byte copies need .ca.
  // The shared address goes in as wide as the caller computed it: the GEMM keeps its addresses in
  // 32 bits, while widening the CONV's to fit would cost it registers (f16 Conv11: 168 -> 171, one block
  // fewer per SM).
  const bool narrow = shared_address->getType() == i32_;
  ptx_statement(fmt::format("cp.async.{}.shared.global [$0], [$1], {}, $2;", bytes == 16 ? "cg" : "ca", bytes),
                narrow ? "r,l,r" : "l,l,r", {shared_address, b_.CreatePtrToInt(global_ptr, i64_), source_bytes});
}

void KernelBuilder::mbarrier_init(Value* barrier, int arrivals) {
  ptx_statement("mbarrier.init.shared::cta.b64 [$0], $1;", "r,r", {barrier, c32(arrivals)});
}

void KernelBuilder::mbarrier_expect_bytes(Value* barrier, int bytes) {
  ptx_statement("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r", {barrier, c32(bytes)});
}

void KernelBuilder::mbarrier_wait(Value* barrier, Value* parity) {
  // try_wait returns after a time-out the hardware chooses; the loop asks again. Labels inside braces
  // are local to them, so the statement may appear many times in a kernel.
  ptx_statement("{ .reg .pred isaac_done; isaac_wait: mbarrier.try_wait.parity.shared::cta.b64 isaac_done, [$0], $1; "
                "@!isaac_done bra isaac_wait; }",
                "r,r", {barrier, parity});
}

void KernelBuilder::mbarrier_arrive(Value* barrier) {
  ptx_statement("mbarrier.arrive.shared::cta.b64 _, [$0];", "r", {barrier});
}

void KernelBuilder::tensor_copy(Value* shared_address, Value* map, const std::vector<Value*>& coordinates,
                                Value* barrier) {
  tensor_copy_im2col(shared_address, map, coordinates, {}, barrier);
}

void KernelBuilder::tensor_copy_im2col(Value* shared_address, Value* map, const std::vector<Value*>& coordinates,
                                       const std::vector<Value*>& offsets, Value* barrier) {
  // Operands: $0 shared address, $1 map, the coordinates, the barrier, then the offsets.
  const std::size_t n = coordinates.size();
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back(fmt::format("${}", i + 2));
  std::string text = fmt::format("cp.async.bulk.tensor.{}d.shared::cluster.global{}.mbarrier::complete_tx::bytes "
                                 "[$0], [$1, {{{}}}], [${}]",
                                 n, offsets.empty() ? "" : ".im2col", fmt::join(names, ", "), n + 2);
  std::string constraints = "r,l";
  for (std::size_t i = 0; i < n; ++i) constraints += ",r";
  constraints += ",r";
  std::vector<Value*> args{shared_address, map};
  args.insert(args.end(), coordinates.begin(), coordinates.end());
  args.push_back(barrier);
  if (!offsets.empty()) {
    std::vector<std::string> offset_names;
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      offset_names.push_back(fmt::format("${}", n + 3 + i));
      constraints += ",h";
    }
    text += fmt::format(", {{{}}}", fmt::join(offset_names, ", "));
    args.insert(args.end(), offsets.begin(), offsets.end());
  }
  ptx_statement(text + ";", constraints, args);
}

std::vector<llvm::Value*> KernelBuilder::tensor_map_parameters(int first, int count) {
  auto* map_type = llvm::ArrayType::get(b_.getInt8Ty(), 128);
  std::vector<int> indices;
  std::vector<Value*> addresses;
  for (int i = first; i < first + count; ++i) {
    llvm::Argument* map = function_->getArg(i);
    map->removeAttr(llvm::Attribute::NoAlias);
    map->addAttr(llvm::Attribute::getWithByValType(ctx_, map_type));
    map->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    indices.push_back(i);
    addresses.push_back(b_.CreatePtrToInt(map, i64_));
  }
  mark_grid_constants(*function_, indices);
  return addresses;
}

void TiledKernelBuilder::copy_tile_tma(Value*, Value*, Value*) {
  throw Error("internal error: this template has no TMA copies");
}

// TMA=1: the TC=2 pipeline with its copies made by the Tensor Memory Accelerator. Buffer b has an
// mbarrier, "filled", whose phase completes when the bytes of a stage copied into b have landed;
// stage t waits for phase t / S of its buffer's. The copies and the tensor cores both use the async
// proxy, and the mbarriers order them: no proxy fence. Who issues the copies:
//  - a producer warp of its own (producer_warp_; one of its threads issues). Buffer b has a second
//    mbarrier, "emptied", which completes when every consumer warp has seen the wgmma that read b
//    complete; the producer refills b for stage t once phase t / S - 1 of it has completed. The
//    consumers never wait for each other: no block barrier per stage, and the copies run S - 1
//    stages ahead.
//  - else thread 0, S - 2 stages ahead, into the buffer of stage t - 2, after a block barrier per
//    stage: every warp group has then waited for its wgmma of stage t - 2 (wait_group 1 after
//    issuing stage t - 1).
llvm::Value* TiledKernelBuilder::filled_barrier(Value* buffer) {
  return b_.CreateAdd(stage_barriers_, b_.CreateMul(buffer, c32(8)));
}

llvm::Value* TiledKernelBuilder::emptied_barrier(Value* buffer) {
  return b_.CreateAdd(filled_barrier(buffer), c32(8 * l_.stages));
}

void TiledKernelBuilder::copy_stage_tma(Value* tile, Value* buffer) {
  mbarrier_expect_bytes(filled_barrier(buffer), stage_bytes());
  copy_tile_tma(tile, buffer, filled_barrier(buffer));
}

llvm::Value* TiledKernelBuilder::ring_buffer(Value* stage) { return b_.CreateURem(stage, c32(ring_size())); }

llvm::Value* TiledKernelBuilder::ring_use(Value* stage) { return b_.CreateUDiv(stage, c32(ring_size())); }

void TiledKernelBuilder::wait_stage_filled(Value* stage) {
  mbarrier_wait(filled_barrier(ring_buffer(stage)), b_.CreateAnd(ring_use(stage), c32(1)));
}

void TiledKernelBuilder::init_stage_barriers() {
  stage_barriers_ = b_.CreatePtrToInt(gep(b_.getInt8Ty(), smem_, c32(barriers_offset())), i32_);
  Value* leader = b_.CreateICmpEQ(tid_, c32(0));
  if_then(leader, [&] {
    for (int buffer = 0; buffer < l_.stages; ++buffer) {
      mbarrier_init(filled_barrier(c32(buffer)), 1);
      if (producer_warp_) mbarrier_init(emptied_barrier(c32(buffer)), l_.threads / 32);
    }
    init_epilogue_barriers();
    // Makes the initialisation visible to the async proxy, which the copies' completions use.
    ptx_statement("fence.mbarrier_init.release.cluster;", "", {});
  });
  barrier();
}

void TiledKernelBuilder::main_loop_tma(Value* total) {
  const int s = l_.stages;
  auto copy = [&](Value* tile) { copy_stage_tma(tile, b_.CreateURem(tile, c32(s))); };
  init_stage_barriers();
  Value* leader = b_.CreateICmpEQ(tid_, c32(0));

  if (producer_warp_) {
    barrier_threads_ = l_.threads;  // the barriers after the main loop are the consumers' alone
    auto* producer = llvm::BasicBlock::Create(ctx_, "producer", function_);
    auto* consumer = llvm::BasicBlock::Create(ctx_, "consumer", function_);
    b_.CreateCondBr(b_.CreateICmpUGE(tid_, c32(l_.threads)), producer, consumer);
    b_.SetInsertPoint(producer);
    if_then(b_.CreateICmpEQ(tid_, c32(l_.threads)), [&] { produce_stages(total, nullptr); });
    b_.CreateRetVoid();
    b_.SetInsertPoint(consumer);
    consume_stages(total, nullptr);
  } else if (s <= gemm_max_shallow_stages) {
    // ST=1 or 2: the block's tiles (at most s, legality says) each have their buffer: all are copied
    // at once, and no buffer is refilled, so no stage waits for another warp.
    if_then(leader, [&] {
      for (int t = 0; t < s; ++t) if_then(b_.CreateICmpSLT(c32(t), total), [&] { copy(c32(t)); });
    });
    for_loop(total, [&](Value* t) {
      wait_stage_filled(t);
      compute_stage(t);
    });
  } else {
    const int ahead = s - 2;
    auto issue = [&](Value* tile) { if_then(b_.CreateAnd(leader, b_.CreateICmpSLT(tile, total)), [&] { copy(tile); }); };
    for (int t = 0; t < ahead; ++t) issue(c32(t));
    for_loop(total, [&](Value* t) {
      wait_stage_filled(t);
      barrier();
      issue(b_.CreateAdd(t, c32(ahead)));
      compute_stage(b_.CreateURem(t, c32(s)));
    });
  }
  wgmma_op("wgmma.wait_group.sync.aligned 0;");
  pin_accumulators();
}

void TiledKernelBuilder::produce_stages(Value* total, Value* first) {
  for_loop(total, [&](Value* t) {
    Value* stage = first ? b_.CreateAdd(first, t) : t;
    Value* use = ring_use(stage);
    if_then(b_.CreateICmpNE(use, c32(0)), [&] {
      mbarrier_wait(emptied_barrier(ring_buffer(stage)), b_.CreateAnd(b_.CreateSub(use, c32(1)), c32(1)));
    });
    copy_stage_tma(t, ring_buffer(stage));
  });
}

void TiledKernelBuilder::consume_stages(Value* total, Value* first) {
  for_loop(total, [&](Value* t) {
    Value* stage = first ? b_.CreateAdd(first, t) : t;
    wait_stage_filled(stage);
    compute_stage(ring_buffer(stage));  // ends with wait_group 1: the wgmma of stage - 1 is done
    if_then(b_.CreateAnd(b_.CreateICmpNE(t, c32(0)), b_.CreateICmpEQ(lane_, c32(0))),
            [&] { mbarrier_arrive(emptied_barrier(ring_buffer(b_.CreateAdd(stage, c32(ring_size() - 1))))); });
  });
}

// The block runs tiles ctaid.x, ctaid.x + nctaid.x, ... of tile_count(), through one ring of stages
// whose count runs on from tile to tile, so that the producer warp copies the next tile's operands
// while the consumers stage and store this one's C. A buffer read by a tile's last stage is handed
// back once its wgmma is done (wait_group 0), before the epilogue; the others as in main_loop_tma.
// Legality keeps one buffer (ST=1) to one K tile per block's tile, so no stage waits for a buffer
// that only a later stage of its own tile would free.
//
// A ping-pong loop's two consumer groups take the tiles in turn, tile i of the block to group i % 2,
// and their main loops take turns too: a group issues its tile's first wgmma once the other group has
// issued its previous tile's last (turn_barrier), and then stages and stores its C while the other
// group's wgmma run. The ring is one for both, filled in the order of the block's tiles, so the
// producer runs the whole ring ahead of the group whose turn it is (with a half of the ring each, it
// ran half of it ahead, which starved loops over many K tiles). The turns also keep an mbarrier's
// parity unambiguous: a group waits for a stage only after every earlier stage of the ring was filled.
void TiledKernelBuilder::tile_loop_tma(Value* total) {
  const int consumers = (ping_pong_ ? 2 : 1) * l_.threads;
  init_stage_barriers();
  barrier_threads_ = l_.threads;  // the producer warp takes no part in the epilogues' barriers
  Value* first_tile = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  Value* step = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  Value* tiles = tile_count();
  auto* producer = llvm::BasicBlock::Create(ctx_, "producer", function_);
  auto* consumer = llvm::BasicBlock::Create(ctx_, "consumer", function_);
  b_.CreateCondBr(b_.CreateICmpUGE(tid_, c32(consumers)), producer, consumer);
  b_.SetInsertPoint(producer);
  if_then(b_.CreateICmpEQ(tid_, c32(consumers)), [&] {
    llvm::AllocaInst* done = local(i32_, "stages_done");
    b_.CreateStore(c32(0), done);
    for_range(first_tile, tiles, step, [&](Value* tile) {
      enter_tile(tile);
      Value* first = b_.CreateLoad(i32_, done);
      produce_stages(total, first);
      b_.CreateStore(b_.CreateAdd(first, total), done);
    });
  });
  b_.CreateRetVoid();
  b_.SetInsertPoint(consumer);
  // The stage count of the group's next tile: a ping-pong group skips the other group's tiles.
  llvm::AllocaInst* stages_done = local(i32_, "stages_done");
  tile_parity_ = local(i32_, "tile_parity");
  b_.CreateStore(c32(0), tile_parity_);
  if (ping_pong_) {
    consumer_group_ = b_.CreateUDiv(tid_, c32(l_.threads));
    barrier_id_ = b_.CreateAdd(consumer_group_, c32(1));
    b_.CreateStore(b_.CreateMul(consumer_group_, total), stages_done);
    for_range(b_.CreateAdd(first_tile, b_.CreateMul(consumer_group_, step)), tiles, b_.CreateMul(step, c32(2)), [&](Value* tile) {
      consume_tile(tile, total, stages_done, b_.CreateICmpNE(tile, first_tile), b_.CreateICmpULT(b_.CreateAdd(tile, step), tiles));
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i32_, stages_done), total), stages_done);
    });
  } else {
    b_.CreateStore(c32(0), stages_done);
    for_range(first_tile, tiles, step, [&](Value* tile) { consume_tile(tile, total, stages_done, nullptr, nullptr); });
  }
  finish_tile_stores();
  b_.CreateRetVoid();
}

// Named barriers 3 and 4, one per consumer group, each completed by the 128 threads of the group
// that waits (bar.sync) and the 128 of the group that gives the turn (bar.arrive).
void TiledKernelBuilder::turn_barrier(bool arrive, Value* group) {
  ptx_statement(arrive ? "bar.arrive $0, $1;" : "bar.sync $0, $1;", "r,r", {b_.CreateAdd(group, c32(3)), c32(2 * l_.threads)});
}

void TiledKernelBuilder::consume_tile(Value* tile, Value* total, llvm::AllocaInst* stages_done, Value* wait_turn,
                                      Value* give_turn) {
  // The addresses of the wgmma operands and of the epilogue derive from the thread's coordinates.
  // Left loop-invariant, LLVM computes them once before the loop and keeps them live beside the
  // accumulators (a 128 x 128 tile took 201 registers, 167 without, 154 outside a loop). Read here
  // through inline asm, which nothing moves, the thread's index makes them this tile's, computed
  // where they are used.
  const auto coordinates = std::tuple(tid_, tm_, tn_, tk_, wm_, wn_, warp_, lane_, group_, quad_);
  tid_ = b_.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(i32_, false), "mov.u32 $0, %tid.x;", "=r", true));
  if (ping_pong_) tid_ = b_.CreateURem(tid_, c32(l_.threads));
  thread_coordinates();
  enter_tile(tile);
  zero_accumulators();
  Value* first = b_.CreateLoad(i32_, stages_done);
  if (wait_turn) if_then(wait_turn, [&] { turn_barrier(false, consumer_group_); });
  consume_stages(total, first);
  if (give_turn) if_then(give_turn, [&] { turn_barrier(true, b_.CreateXor(consumer_group_, c32(1))); });
  wgmma_op("wgmma.wait_group.sync.aligned 0;");
  pin_accumulators();
  Value* done = b_.CreateAdd(first, total);
  b_.CreateStore(done, stages_done);
  if_then(b_.CreateAnd(b_.CreateICmpNE(total, c32(0)), b_.CreateICmpEQ(lane_, c32(0))),
          [&] { mbarrier_arrive(emptied_barrier(ring_buffer(b_.CreateAdd(done, c32(ring_size() - 1))))); });
  epilogue();
  std::tie(tid_, tm_, tn_, tk_, wm_, wn_, warp_, lane_, group_, quad_) = coordinates;
  b_.CreateStore(b_.CreateXor(b_.CreateLoad(i32_, tile_parity_), c32(1)), tile_parity_);
}

// TC=1: a pipeline of `stages` shared-memory buffers filled by cp.async. Stage t is copied S - 1
// iterations ahead; one commit group per iteration (empty ones too) keeps wait_group's count exact,
// and the barrier after the wait also tells every warp that the buffer about to be refilled is no
// longer read.
//
// TC=2: the copy runs S - 2 stages ahead, into the buffer of stage t - 2, whose wgmma every warp
// group waited for (wait_group 1 after issuing stage t - 1) before this iteration's barrier. The
// tensor cores read shared memory through the async proxy: each thread fences its cp.async writes
// into it before the barrier.
//
// TC=2 f32: the stage is split (split_stage) into the split buffer of its parity between two
// barriers, then its buffer is free and the copy runs S - 1 stages ahead, as with TC=1. The split
// buffer written at stage t was last read by the wgmma of stage t - 2, done before the first barrier.
void TiledKernelBuilder::main_loop_async(Value* full, Value* total) {
  const int s = l_.stages;
  const bool warp_groups = t_.tc == 2, split = warp_groups && l_.split_size > 0;
  const int ahead = warp_groups && !split ? s - 2 : s - 1;
  auto copy_any = [&](Value* tile) {
    Value* buffer = b_.CreateURem(tile, c32(s));
    if_else(b_.CreateICmpSLT(tile, full), [&] { copy_tile_async(tile, buffer, false); },
            [&] { copy_tile_async(tile, buffer, true); });
  };
  for (int t = 0; t < ahead; ++t) {
    if_then(b_.CreateICmpSLT(c32(t), total), [&] { copy_any(c32(t)); });
    async_commit();
  }
  for_loop(total, [&](Value* t) {
    async_wait(ahead - 1);
    if (warp_groups && !split) wgmma_op("fence.proxy.async.shared::cta;");
    barrier();
    Value* split_buffer = split ? b_.CreateAnd(t, c32(1)) : nullptr;
    if (split) {
      split_stage(b_.CreateURem(t, c32(s)), split_buffer);
      wgmma_op("fence.proxy.async.shared::cta;");
      barrier();
    }
    Value* next = b_.CreateAdd(t, c32(ahead));
    if_then(b_.CreateICmpSLT(next, total), [&] { copy_any(next); });
    async_commit();
    if (split) compute_stage_wgmma_tf32(split_buffer);
    else compute_stage(b_.CreateURem(t, c32(s)));
  });
  async_wait(0);
  if (warp_groups) {
    wgmma_op("wgmma.wait_group.sync.aligned 0;");
    pin_accumulators();
  }
}

void TiledKernelBuilder::main_loop(Value* full, Value* total) {
  if (t_.tma) return main_loop_tma(total);
  if (t_.tc) return main_loop_async(full, total);
  auto load_any = [&](Value* tile) {
    if_else(b_.CreateICmpSLT(tile, full), [&] { load_tile(tile, false); }, [&] { load_tile(tile, true); });
  };
  if (t_.db) {
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
}

}  // namespace isaac::lower
