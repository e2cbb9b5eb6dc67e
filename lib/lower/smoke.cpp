#include <isaac/lower/smoke.hpp>

#include "lower/nvptx_backend.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace isaac::lower {

std::string emit_axpy_ptx(const Target& target) {
  llvm::LLVMContext ctx;
  auto module = make_nvptx_module(ctx, "isaac_axpy", target);
  llvm::IRBuilder<> b(ctx);
  auto* f32 = b.getFloatTy();
  auto* global_ptr = llvm::PointerType::get(ctx, 1);
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {f32, global_ptr, global_ptr, b.getInt32Ty()}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, axpy_kernel_name, *module);
  mark_kernel(*fn);
  auto args = fn->arg_begin();
  llvm::Value* a = args++;
  llvm::Value* x = args++;
  llvm::Value* y = args++;
  llvm::Value* n = args++;

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* body = llvm::BasicBlock::Create(ctx, "body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.SetInsertPoint(entry);
  auto sreg = [&](llvm::Intrinsic::ID id) { return b.CreateIntrinsic(id, {}, {}); };
  llvm::Value* i = b.CreateAdd(
      b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
      sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  b.CreateCondBr(b.CreateICmpSLT(i, n), body, exit);
  b.SetInsertPoint(body);
  llvm::Value* offset = b.CreateSExt(i, b.getInt64Ty());
  llvm::Value* xi = b.CreateLoad(f32, b.CreateGEP(f32, x, offset));
  llvm::Value* yp = b.CreateGEP(f32, y, offset);
  b.CreateStore(b.CreateFAdd(b.CreateFMul(a, xi), b.CreateLoad(f32, yp)), yp);
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return compile_to_ptx(*module, target, Optimisation::full);
}

}  // namespace isaac::lower
