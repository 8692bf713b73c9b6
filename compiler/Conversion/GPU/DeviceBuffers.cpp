// attn-device-buffers: a buffer that only the GPU touches comes from device memory, a small one
// only the host touches from the host's stack (see Passes.td).
#include "attn/Names.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <map>
#include <tuple>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDEVICEBUFFERS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

// The most a buffer on the host's stack may hold (buffer deallocation's arrays hold a few
// pointers and flags).
constexpr int64_t kMostStackBytes = 1024;

// Which side reads and writes a buffer's contents.
enum class Side { Gpu, Host };

// Who touches a buffer's contents, followed through views and into the program's functions.
class Touches {
public:
  explicit Touches(ModuleOp module) : module(module) {}

  // Whether only `side` reads or writes the contents of `buffer`. Its frees are added to
  // `frees`; null: `buffer` is a parameter, which the function must not free (its caller's
  // buffer may be the runtime's).
  bool only(Side side, Value buffer, SmallVectorImpl<memref::DeallocOp> *frees) {
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      // A generated kernel's access, or a copy queued on the stream.
      if (user->getParentOfType<gpu::LaunchOp>() || isa<gpu::MemcpyOp>(user)) {
        if (side != Side::Gpu)
          return false;
        continue;
      }
      // The host's own loads and stores (buffer deallocation's bookkeeping arrays).
      if (isa<memref::LoadOp, memref::StoreOp>(user)) {
        if (side != Side::Host)
          return false;
        continue;
      }
      if (auto free = dyn_cast<memref::DeallocOp>(user)) {
        if (!frees)
          return false;
        frees->push_back(free);
        continue;
      }
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        if (!only(side, meta.getBaseBuffer(), frees))
          return false;
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != buffer)
          return false; // (another operand: memref.reshape's shape, say)
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()) && !only(side, result, frees))
            return false;
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(user)) {
        // The CUDA runtime queues its work on the GPU, which gathers and scatters device
        // memory itself.
        if (call.getCallee().starts_with(::attn::names::kCudaKernelPrefix)) {
          if (side != Side::Gpu)
            return false;
          continue;
        }
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (!callee || callee.isExternal() || !parameterOnly(side, callee, use.getOperandNumber()))
          return false;
        continue;
      }
      // The buffer's shape or address (the deallocation's pointer comparisons).
      if (isa<memref::DimOp, memref::RankOp, memref::ExtractAlignedPointerAsIndexOp>(user))
        continue;
      // Anything else: a copy on the host, a CPU kernel, a buffer a loop carries or a function
      // returns (which this walk does not follow).
      return false;
    }
    return true;
  }

private:
  bool parameterOnly(Side side, func::FuncOp callee, unsigned index) {
    auto key = std::make_tuple(side, callee.getOperation(), index);
    if (auto it = known.find(key); it != known.end())
      return it->second;
    known[key] = false; // a recursive call: the other side's, to be safe
    return known[key] = only(side, callee.getArgument(index), nullptr);
  }

  ModuleOp module;
  std::map<std::tuple<Side, Operation *, unsigned>, bool> known;
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

// memref.alloc -> memref.alloca at the start of its function (hoisted out of loops: the frees
// are in the allocation's block, so no two lifetimes overlap), its frees gone.
void moveToStack(memref::AllocOp alloc, ArrayRef<memref::DeallocOp> frees) {
  auto func = alloc->getParentOfType<func::FuncOp>();
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  Value stack =
      b.create<memref::AllocaOp>(alloc.getLoc(), alloc.getType(), alloc.getAlignmentAttr());
  alloc.replaceAllUsesWith(stack);
  alloc.erase();
  SmallPtrSet<Operation *, 4> done;
  for (memref::DeallocOp free : frees)
    if (done.insert(free).second)
      free.erase();
}

// Whether a buffer only the host touches may live on its function's stack: small, of a static
// shape, and freed only in the block that allocates it.
bool fitsTheStack(memref::AllocOp alloc, ArrayRef<memref::DeallocOp> frees) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getElementType().isIntOrIndexOrFloat())
    return false;
  // (An index is 64 bits here.)
  unsigned bits = type.getElementType().isIndex() ? 64 : type.getElementTypeBitWidth();
  if (type.getNumElements() * std::max(bits, 8u) > kMostStackBytes * 8)
    return false;
  return llvm::all_of(
      frees, [&](memref::DeallocOp free) { return free->getBlock() == alloc->getBlock(); });
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
    using Move = std::pair<memref::AllocOp, SmallVector<memref::DeallocOp>>;
    SmallVector<Move> toDevice, toStack;
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](memref::AllocOp alloc) {
        if (alloc->getParentOfType<gpu::LaunchOp>() || !alloc.getType().getLayout().isIdentity())
          return;
        SmallVector<memref::DeallocOp> frees;
        if (touches.only(Side::Gpu, alloc.getResult(), &frees)) {
          toDevice.push_back({alloc, std::move(frees)});
          return;
        }
        frees.clear();
        if (touches.only(Side::Host, alloc.getResult(), &frees) && fitsTheStack(alloc, frees))
          toStack.push_back({alloc, std::move(frees)});
      });
    for (auto &[alloc, frees] : toDevice)
      moveToDevice(alloc, frees);
    for (auto &[alloc, frees] : toStack)
      moveToStack(alloc, frees);
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
