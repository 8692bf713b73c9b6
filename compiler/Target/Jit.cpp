#include "compiler/Target/Jit.h"

#include "attn/Alloc.h"
#include "attn/kernels.h"
#ifdef ATTN_HAVE_CUDA
#include "attn/cuda/Offload.h"
#endif

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

namespace attn::target {

JitProgram::~JitProgram() = default;

llvm::Expected<std::unique_ptr<JitProgram>>
JitProgram::load(const std::vector<std::string> &objects, const Manifest &manifest) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto lljit = llvm::orc::LLJITBuilder().create();
  if (!lljit)
    return lljit.takeError();
  llvm::orc::JITDylib &lib = (*lljit)->getMainJITDylib();
  // libc and libm (memcpy, expf, ...) from the process ...
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*lljit)->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  lib.addGenerator(std::move(*process));
  // ... and the runtime's kernels by address: no reliance on the tool exporting its symbols.
  llvm::orc::MangleAndInterner interner((*lljit)->getExecutionSession(), (*lljit)->getDataLayout());
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
  add("_mlir_ciface_attn_rt_matmul_bf16", (void *)&_mlir_ciface_attn_rt_matmul_bf16);
  add("_mlir_ciface_attn_rt_dense_bf16", (void *)&_mlir_ciface_attn_rt_dense_bf16);
  add("_mlir_ciface_attn_rt_dense_int8", (void *)&_mlir_ciface_attn_rt_dense_int8);
  add("_mlir_ciface_attn_rt_matmul_int8", (void *)&_mlir_ciface_attn_rt_matmul_int8);
  add("_mlir_ciface_attn_rt_rnn_forward", (void *)&_mlir_ciface_attn_rt_rnn_forward);
  add("_mlir_ciface_attn_rt_rnn_backward", (void *)&_mlir_ciface_attn_rt_rnn_backward);
  add("_mlir_ciface_attn_rt_rnn_forward_bf16", (void *)&_mlir_ciface_attn_rt_rnn_forward_bf16);
  add("_mlir_ciface_attn_rt_rnn_backward_bf16", (void *)&_mlir_ciface_attn_rt_rnn_backward_bf16);
  add("_mlir_ciface_attn_rt_flash_attention", (void *)&_mlir_ciface_attn_rt_flash_attention);
  add("_mlir_ciface_attn_rt_flash_attention_bf16",
      (void *)&_mlir_ciface_attn_rt_flash_attention_bf16);
  add("_mlir_ciface_attn_rt_flash_attention_backward_bf16",
      (void *)&_mlir_ciface_attn_rt_flash_attention_backward_bf16);
  add("_mlir_ciface_attn_rt_flash_attention_backward",
      (void *)&_mlir_ciface_attn_rt_flash_attention_backward);
  add("_mlir_ciface_attn_rt_flash_attention_regions",
      (void *)&_mlir_ciface_attn_rt_flash_attention_regions);
  add("_mlir_ciface_attn_rt_flash_attention_regions_bf16",
      (void *)&_mlir_ciface_attn_rt_flash_attention_regions_bf16);
  add("_mlir_ciface_attn_rt_flash_attention_regions_backward",
      (void *)&_mlir_ciface_attn_rt_flash_attention_regions_backward);
  add("_mlir_ciface_attn_rt_flash_attention_regions_backward_bf16",
      (void *)&_mlir_ciface_attn_rt_flash_attention_regions_backward_bf16);
#ifdef ATTN_HAVE_CUDA
  // --device cuda (attn-to-cuda): the products, ...
  add("_mlir_ciface_attn_rt_cuda_matmul", (void *)&_mlir_ciface_attn_rt_cuda_matmul);
  add("_mlir_ciface_attn_rt_cuda_dense", (void *)&_mlir_ciface_attn_rt_cuda_dense);
  add("_mlir_ciface_attn_rt_cuda_matmul_bf16", (void *)&_mlir_ciface_attn_rt_cuda_matmul_bf16);
  add("_mlir_ciface_attn_rt_cuda_dense_bf16", (void *)&_mlir_ciface_attn_rt_cuda_dense_bf16);
  // ... the fused attention ...
  add("_mlir_ciface_attn_rt_cuda_flash_attention",
      (void *)&_mlir_ciface_attn_rt_cuda_flash_attention);
  add("_mlir_ciface_attn_rt_cuda_flash_attention_backward",
      (void *)&_mlir_ciface_attn_rt_cuda_flash_attention_backward);
  // ... the recurrent layers ...
  add("_mlir_ciface_attn_rt_cuda_rnn_forward", (void *)&_mlir_ciface_attn_rt_cuda_rnn_forward);
  add("_mlir_ciface_attn_rt_cuda_rnn_backward", (void *)&_mlir_ciface_attn_rt_cuda_rnn_backward);
  // ... and the launches of the generated kernels (runtime/cuda/launch.cpp).
  add("mgpuModuleLoadJIT", (void *)&mgpuModuleLoadJIT);
  add("mgpuModuleLoad", (void *)&mgpuModuleLoad);
  add("mgpuModuleUnload", (void *)&mgpuModuleUnload);
  add("mgpuModuleGetFunction", (void *)&mgpuModuleGetFunction);
  add("mgpuStreamCreate", (void *)&mgpuStreamCreate);
  add("mgpuStreamDestroy", (void *)&mgpuStreamDestroy);
  add("mgpuStreamSynchronize", (void *)&mgpuStreamSynchronize);
  add("mgpuLaunchKernel", (void *)&mgpuLaunchKernel);
  add("mgpuMemAlloc", (void *)&mgpuMemAlloc);
  add("mgpuMemFree", (void *)&mgpuMemFree);
  add("mgpuMemcpy", (void *)&mgpuMemcpy);
  add("attn_rt_cuda_synchronize", (void *)&attn_rt_cuda_synchronize);
#endif
  if (llvm::Error e = lib.define(llvm::orc::absoluteSymbols(std::move(symbols))))
    return std::move(e);
  for (size_t i = 0; i < objects.size(); ++i)
    if (llvm::Error e = (*lljit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
            objects[i], manifest.cname + "." + std::to_string(i) + ".o")))
      return std::move(e);

  auto jit = std::unique_ptr<JitProgram>(new JitProgram());
  llvm::Error lookupError = llvm::Error::success();
  jit->program = std::make_unique<ProgramInfo>(manifest, [&](const std::string &symbol) {
    auto fn = (*lljit)->lookup(symbol);
    if (!fn) {
      lookupError = llvm::joinErrors(std::move(lookupError), fn.takeError());
      return attn_entry_fn(nullptr);
    }
    return fn->toPtr<attn_entry_fn>();
  });
  if (lookupError)
    return std::move(lookupError);
  jit->jit = std::move(*lljit);
  return jit;
}

} // namespace attn::target
