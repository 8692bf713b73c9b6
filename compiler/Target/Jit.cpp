#include "compiler/Target/Jit.h"
#include "compiler/Target/Object.h"

#include "attn/Alloc.h"
#include "attn/kernels.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

namespace attn::target {

llvm::Expected<std::unique_ptr<JitProgram>> JitProgram::create(mlir::ModuleOp llvmModule,
                                                               const Manifest &manifest) {
  configureLLVM();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // The host machine (CPU name and features): without it LLVM's cost model assumes scalar
  // code and vectorizes nothing.
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  // A named std::function: the engine keeps only a function_ref to it (TOOLCHAIN.md).
  std::function<llvm::Error(llvm::Module *)> optimize =
      mlir::makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, machine->get());
  mlir::ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = mlir::ExecutionEngine::create(llvmModule, options, std::move(*machine));
  if (!engine)
    return engine.takeError();
  // The runtime's kernels, by address: no reliance on the tool exporting its symbols.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](const char *name, void *addr) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(addr),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("_mlir_memref_to_llvm_alloc", (void *)&_mlir_memref_to_llvm_alloc);
    add("_mlir_memref_to_llvm_aligned_alloc", (void *)&_mlir_memref_to_llvm_aligned_alloc);
    add("_mlir_memref_to_llvm_free", (void *)&_mlir_memref_to_llvm_free);
    add("_mlir_ciface_attn_rt_matmul", (void *)&_mlir_ciface_attn_rt_matmul);
    add("_mlir_ciface_attn_rt_dense", (void *)&_mlir_ciface_attn_rt_dense);
    add("_mlir_ciface_attn_rt_rnn_forward", (void *)&_mlir_ciface_attn_rt_rnn_forward);
    add("_mlir_ciface_attn_rt_rnn_backward", (void *)&_mlir_ciface_attn_rt_rnn_backward);
    add("_mlir_ciface_attn_rt_additive_attention",
        (void *)&_mlir_ciface_attn_rt_additive_attention);
    add("_mlir_ciface_attn_rt_additive_attention_backward",
        (void *)&_mlir_ciface_attn_rt_additive_attention_backward);
    add("_mlir_ciface_attn_rt_flash_attention", (void *)&_mlir_ciface_attn_rt_flash_attention);
    add("_mlir_ciface_attn_rt_flash_attention_backward",
        (void *)&_mlir_ciface_attn_rt_flash_attention_backward);
    return symbols;
  });
  auto jit = std::unique_ptr<JitProgram>(new JitProgram());
  llvm::Error lookupError = llvm::Error::success();
  jit->program = std::make_unique<ProgramInfo>(manifest, [&](const std::string &symbol) {
    auto fn = (*engine)->lookup(symbol);
    if (!fn) {
      lookupError = llvm::joinErrors(std::move(lookupError), fn.takeError());
      return attn_entry_fn(nullptr);
    }
    return reinterpret_cast<attn_entry_fn>(*fn);
  });
  if (lookupError)
    return std::move(lookupError);
  jit->engine = std::move(*engine);
  return jit;
}

} // namespace attn::target
