#include "compiler/Target/Object.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace attn::target {

static std::unique_ptr<llvm::TargetMachine> hostMachine(std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::SubtargetFeatures features;
  for (auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature, enabled);
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

std::unique_ptr<llvm::Module> toOptimizedLLVMIR(mlir::ModuleOp llvmModule,
                                                llvm::LLVMContext &context) {
  auto module = mlir::translateModuleToLLVMIR(llvmModule, context);
  if (!module)
    return nullptr;
  std::string error;
  auto machine = hostMachine(error);
  if (!machine) {
    llvm::errs() << "attnc: no target for the host: " << error << "\n";
    return nullptr;
  }
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(machine->getTargetTriple().str());
  if (auto err = mlir::makeOptimizingTransformer(3, 0, machine.get())(module.get())) {
    llvm::errs() << "attnc: LLVM optimisation failed: " << llvm::toString(std::move(err))
                 << "\n";
    return nullptr;
  }
  return module;
}

std::string writeObject(mlir::ModuleOp llvmModule, const std::string &path) {
  llvm::LLVMContext context;
  auto module = toOptimizedLLVMIR(llvmModule, context);
  if (!module)
    return "cannot translate the module to LLVM IR";
  std::string error;
  auto machine = hostMachine(error);
  if (!machine)
    return error;
  // Write to a temporary file and rename, so a failed build never leaves a half object.
  std::string tmp = path + ".tmp";
  std::error_code ec;
  llvm::raw_fd_ostream out(tmp, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write " + tmp + ": " + ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    return "the host target cannot emit object files";
  pm.run(*module);
  out.close();
  if (auto rc = llvm::sys::fs::rename(tmp, path))
    return "cannot rename " + tmp + " to " + path + ": " + rc.message();
  return "";
}

} // namespace attn::target
