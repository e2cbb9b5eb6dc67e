#include "lower/nvptx_backend.hpp"

#include "lower/pass_pipelines.hpp"

#include <isaac/error.hpp>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <mutex>

namespace isaac::lower {

namespace {

constexpr const char* nvptx_triple = "nvptx64-nvidia-cuda";

const llvm::Target& nvptx_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // CodeGenPrepare starts again from the function's first block after every change to the
    // dominator tree, unless it counts the function as huge; then it revisits only the blocks it
    // changed. Our kernels are a few large blocks, so the restarts cost up to 45 ms a kernel (a
    // third of llc's time on the largest) for PTX that came out byte for byte the same on 502 GEMM
    // and CONV kernels (docs/emission.md).
    const char* options[] = {"isaac", "-cgpp-huge-func=0"};
    std::string errors;
    llvm::raw_string_ostream error_stream(errors);
    if (!llvm::cl::ParseCommandLineOptions(2, options, "", &error_stream))
      throw Error("internal error: LLVM refuses isaac's codegen options: " + errors);
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(nvptx_triple, error);
  if (!target) throw Error("LLVM has no NVPTX backend: " + error);
  return *target;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target, Optimisation level) {
  parse_target(target.name());  // a Target built by hand: LLVM would warn about an unknown one and go on
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // contractions are a*b+c chains: fuse them
  // LLVM 19 picks the oldest PTX that knows the target. The epilogues need newer: movmatrix
  // (TC=1 f16) PTX 7.8, and sm_90's vector reductions (red.global.add.v4.f32) PTX 8.1.
  std::string features = target.sm >= 90 ? "+ptx81" : "+ptx78";
  return std::unique_ptr<llvm::TargetMachine>(nvptx_target().createTargetMachine(
      nvptx_triple, target.name(), features, options, std::nullopt, std::nullopt,
      level == Optimisation::full ? llvm::CodeGenOptLevel::Aggressive : llvm::CodeGenOptLevel::Default));
}

}  // namespace

std::unique_ptr<llvm::Module> make_nvptx_module(llvm::LLVMContext& context, const std::string& name,
                                                const Target& target) {
  auto module = std::make_unique<llvm::Module>(name, context);
  module->setTargetTriple(nvptx_triple);
  module->setDataLayout(make_target_machine(target, Optimisation::full)->createDataLayout());
  return module;
}

void mark_kernel(llvm::Function& fn, int max_threads, int min_blocks) {
  llvm::Module& m = *fn.getParent();
  llvm::LLVMContext& ctx = m.getContext();
  auto* annotations = m.getOrInsertNamedMetadata("nvvm.annotations");
  auto add = [&](const char* key, int value) {
    llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(&fn), llvm::MDString::get(ctx, key),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
    annotations->addOperand(llvm::MDNode::get(ctx, md));
  };
  add("kernel", 1);
  if (max_threads > 0) add("maxntidx", max_threads);
  if (min_blocks > 0) add("minctasm", min_blocks);
}

void mark_grid_constants(llvm::Function& fn, const std::vector<int>& params) {
  llvm::LLVMContext& ctx = fn.getContext();
  std::vector<llvm::Metadata*> indices;  // counted from 1
  for (int p : params)
    indices.push_back(llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), p + 1)));
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(&fn), llvm::MDString::get(ctx, "grid_constant"),
                          llvm::MDNode::get(ctx, indices)};
  fn.getParent()->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
}

std::string compile_to_ptx(llvm::Module& module, const Target& target, Optimisation level) {
  std::string verify_errors;
  llvm::raw_string_ostream verify_stream(verify_errors);
  if (llvm::verifyModule(module, &verify_stream))
    throw Error("internal error: generated LLVM IR is invalid: " + verify_errors);

  auto machine = make_target_machine(target, level);
  module.setDataLayout(machine->createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine.get());
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes;
  if (auto error = builder.parsePassPipeline(passes, pass_pipeline(level)))
    throw Error("internal error: LLVM cannot parse isaac's pass pipeline: " + llvm::toString(std::move(error)));
  passes.run(module, mam);

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream ptx_stream(ptx);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, ptx_stream, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw Error("LLVM's NVPTX backend cannot emit PTX for " + target.name());
  codegen.run(module);
  return std::string(ptx.str());
}

}  // namespace isaac::lower
