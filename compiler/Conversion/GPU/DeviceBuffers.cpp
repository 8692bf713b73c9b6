// attn-device-buffers: a buffer that only the GPU touches comes from device memory (see
// Passes.td).
#include "attn/Names.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDEVICEBUFFERS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

// Who touches a buffer's contents, followed through views and into the program's functions.
class Touches {
public:
  explicit Touches(ModuleOp module) : module(module) {}

  // Whether only the GPU reads or writes the contents of `buffer`. Its frees are added to
  // `frees`; null: `buffer` is a parameter, which the function must not free (its caller's
  // buffer may be the runtime's).
  bool onlyByTheGpu(Value buffer, SmallVectorImpl<memref::DeallocOp> *frees) {
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      if (user->getParentOfType<gpu::LaunchOp>() || isa<gpu::MemcpyOp>(user))
        continue; // a generated kernel's access, or a copy queued on the stream
      if (auto free = dyn_cast<memref::DeallocOp>(user)) {
        if (!frees)
          return false;
        frees->push_back(free);
        continue;
      }
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        if (!onlyByTheGpu(meta.getBaseBuffer(), frees))
          return false;
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != buffer)
          return false; // (an offset or size operand: not a memref)
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()) && !onlyByTheGpu(result, frees))
            return false;
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(user)) {
        if (call.getCallee().starts_with(::attn::names::kCudaKernelPrefix))
          continue; // queued on the GPU, which gathers and scatters device memory itself
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (!callee || callee.isExternal() ||
            !parameterOnlyByTheGpu(callee, use.getOperandNumber()))
          return false;
        continue;
      }
      // The buffer's shape or address (memref.dim, the deallocation's pointer comparisons):
      // an op with no effect that passes no buffer on. A yield, a return or a branch has no
      // effect either, but hands the buffer to code this walk does not follow.
      bool passesBuffers =
          user->hasTrait<OpTrait::IsTerminator>() || user->getNumRegions() ||
          llvm::any_of(user->getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); });
      if (isMemoryEffectFree(user) && !passesBuffers)
        continue;
      return false; // the host's: a load, a store, a copy, a CPU kernel, a loop's carried value
    }
    return true;
  }

private:
  bool parameterOnlyByTheGpu(func::FuncOp callee, unsigned index) {
    auto key = std::make_pair(callee.getOperation(), index);
    if (auto it = known.find(key); it != known.end())
      return it->second;
    known[key] = false; // a recursive call: the host's, to be safe
    return known[key] = onlyByTheGpu(callee.getArgument(index), nullptr);
  }

  ModuleOp module;
  DenseMap<std::pair<Operation *, unsigned>, bool> known;
};

// Builds, at `b`'s point, the asynchronous form of a gpu op (the only one gpu-to-llvm lowers)
// between gpu.waits: `make(token type, dependencies)` creates it. Its stream is the runtime's
// one stream; the closing wait does not wait there (runtime/cuda/launch.cpp).
template <typename Make> Operation *queued(OpBuilder &b, Location loc, Make make) {
  Type token = b.getType<gpu::AsyncTokenType>();
  Value start = b.create<gpu::WaitOp>(loc, token, ValueRange{}).getAsyncToken();
  Operation *op = make(token, ValueRange{start});
  b.create<gpu::WaitOp>(loc, Type(), ValueRange{op->getResults().back()});
  return op;
}

// memref.alloc -> gpu.alloc, and its frees gpu.dealloc.
void moveToDevice(memref::AllocOp alloc, ArrayRef<memref::DeallocOp> frees) {
  OpBuilder b(alloc);
  auto device = cast<gpu::AllocOp>(queued(b, alloc.getLoc(), [&](Type token, ValueRange deps) {
    return b.create<gpu::AllocOp>(alloc.getLoc(), alloc.getType(), token, deps,
                                  alloc.getDynamicSizes(), alloc.getSymbolOperands());
  }));
  alloc.replaceAllUsesWith(device.getMemref());
  alloc.erase();
  SmallPtrSet<Operation *, 4> done; // (a free reached through two views is one free)
  for (memref::DeallocOp free : frees) {
    if (!done.insert(free).second)
      continue;
    b.setInsertionPoint(free);
    queued(b, free.getLoc(), [&](Type token, ValueRange deps) {
      return b.create<gpu::DeallocOp>(free.getLoc(), token, deps, free.getMemref());
    });
    free.erase();
  }
}

// attn-constants-to-buffers' copies, made before buffer deallocation (which cannot take
// gpu.wait), in their asynchronous form.
void queueCopy(gpu::MemcpyOp copy) {
  OpBuilder b(copy);
  queued(b, copy.getLoc(), [&](Type token, ValueRange deps) {
    return b.create<gpu::MemcpyOp>(copy.getLoc(), token, deps, copy.getDst(), copy.getSrc());
  });
  copy.erase();
}

struct DeviceBuffers : mlir::attn::impl::AttnDeviceBuffersBase<DeviceBuffers> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Touches touches(module);
    SmallVector<std::pair<memref::AllocOp, SmallVector<memref::DeallocOp>>> moves;
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](memref::AllocOp alloc) {
        if (alloc->getParentOfType<gpu::LaunchOp>() || !alloc.getType().getLayout().isIdentity())
          return;
        SmallVector<memref::DeallocOp> frees;
        if (touches.onlyByTheGpu(alloc.getResult(), &frees))
          moves.push_back({alloc, std::move(frees)});
      });
    for (auto &[alloc, frees] : moves)
      moveToDevice(alloc, frees);
    SmallVector<gpu::MemcpyOp> copies;
    module.walk([&](gpu::MemcpyOp copy) {
      if (!copy.getAsyncToken())
        copies.push_back(copy);
    });
    for (gpu::MemcpyOp copy : copies)
      queueCopy(copy);
  }
};
} // namespace
