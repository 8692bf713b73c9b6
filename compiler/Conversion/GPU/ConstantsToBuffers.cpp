// attn-constants-to-buffers: each memref.get_global becomes a runtime buffer holding a copy of
// the global, queued on the GPU's stream (see Passes.td), so that a GPU kernel never reads the
// program's host memory.
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
      if (!get->getParentOfType<gpu::GPUModuleOp>() && !get->getParentOfType<gpu::LaunchOp>())
        reads.push_back(get);
    });
    for (memref::GetGlobalOp get : reads) {
      OpBuilder b(get->getContext());
      b.setInsertionPointAfter(get);
      // Globals have static shapes and the identity layout: the copy is one transfer, queued.
      // (Its synchronous form, whose memory effects buffer deallocation reads; gpu.wait has
      // none, so attn-device-buffers gives it the asynchronous form gpu-to-llvm lowers.)
      Value buffer = b.create<memref::AllocOp>(get.getLoc(), get.getType());
      auto copy =
          b.create<gpu::MemcpyOp>(get.getLoc(), TypeRange{}, ValueRange{}, buffer, get.getResult());
      get.getResult().replaceAllUsesExcept(buffer, copy);
    }
  }
};
} // namespace
