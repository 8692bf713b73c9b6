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
      if (user->getParentOfType<gpu::LaunchOp>())
        continue; // a generated kernel's access
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

// memref.alloc -> gpu.alloc, and its frees gpu.dealloc, each in the asynchronous form
// (gpu-to-llvm lowers no other) between gpu.waits: the runtime's one stream.
void moveToDevice(memref::AllocOp alloc, ArrayRef<memref::DeallocOp> frees) {
  OpBuilder b(alloc);
  Location loc = alloc.getLoc();
  Type token = b.getType<gpu::AsyncTokenType>();
  Value start = b.create<gpu::WaitOp>(loc, token, ValueRange{}).getAsyncToken();
  auto device = b.create<gpu::AllocOp>(loc, alloc.getType(), token, ValueRange{start},
                                       alloc.getDynamicSizes(), alloc.getSymbolOperands());
  b.create<gpu::WaitOp>(loc, Type(), ValueRange{device.getAsyncToken()});
  alloc.replaceAllUsesWith(device.getMemref());
  alloc.erase();
  SmallPtrSet<Operation *, 4> done; // (a free reached through two views is one free)
  for (memref::DeallocOp free : frees) {
    if (!done.insert(free).second)
      continue;
    b.setInsertionPoint(free);
    Value ready = b.create<gpu::WaitOp>(free.getLoc(), token, ValueRange{}).getAsyncToken();
    auto freed =
        b.create<gpu::DeallocOp>(free.getLoc(), token, ValueRange{ready}, free.getMemref());
    b.create<gpu::WaitOp>(free.getLoc(), Type(), ValueRange{freed.getAsyncToken()});
    free.erase();
  }
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
  }
};
} // namespace
