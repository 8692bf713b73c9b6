// attn-internalize: only the packed entry points are visible outside a compiled model.
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNINTERNALIZE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct Internalize : mlir::attn::impl::AttnInternalizeBase<Internalize> {
  using AttnInternalizeBase::AttnInternalizeBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      if (func.isExternal() || func.getSymName().starts_with(prefix))
        continue;
      func.setLinkage(LLVM::Linkage::Internal);
    }
  }
};
} // namespace
