// attn-constants-to-buffers: each memref.get_global becomes a runtime buffer holding a copy of
// the global (see Passes.td), so that a GPU kernel never reads the program's host memory.
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCONSTANTSTOBUFFERS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct ConstantsToBuffers : mlir::attn::impl::AttnConstantsToBuffersBase<ConstantsToBuffers> {
  void runOnOperation() override {
    SmallVector<memref::GetGlobalOp> reads;
    getOperation()->walk([&](memref::GetGlobalOp get) {
      // (A kernel's own code, if any, reads device memory already.)
      if (!get->getParentOfType<gpu::GPUModuleOp>())
        reads.push_back(get);
    });
    for (memref::GetGlobalOp get : reads) {
      OpBuilder b(get->getContext());
      b.setInsertionPointAfter(get);
      // Globals have static shapes and the identity layout: the copy is one memcpy.
      Value buffer = b.create<memref::AllocOp>(get.getLoc(), get.getType());
      auto copy = b.create<memref::CopyOp>(get.getLoc(), get.getResult(), buffer);
      get.getResult().replaceAllUsesExcept(buffer, copy);
    }
  }
};
} // namespace
