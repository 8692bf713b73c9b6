// attn-gpu-host-sync: the host waits for the GPU only where it touches memory (see Passes.td).
#include "attn/Names.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUHOSTSYNC
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

// A call of the CUDA runtime, queued on the stream the launches use.
bool callsTheGpuRuntime(func::CallOp call) {
  return call.getCallee().starts_with(::attn::names::kCudaKernelPrefix);
}

// Work queued on the GPU: a launch, a copy (a constant's), a linalg op on buffers (a launch
// once attn-linalg-to-gpu has run), or a call of the CUDA runtime.
bool queuesGpuWork(Operation *op) {
  if (isa<gpu::LaunchOp, gpu::LaunchFuncOp, gpu::MemcpyOp>(op))
    return true;
  if (auto linalg = dyn_cast<linalg::LinalgOp>(op))
    return linalg.hasPureBufferSemantics();
  auto call = dyn_cast<func::CallOp>(op);
  return call && callsTheGpuRuntime(call);
}

// Whether `op` may leave GPU work queued: it queues some, or calls one of the program's own
// functions, which may.
bool mayQueueGpuWork(Operation *op, ModuleOp module) {
  if (queuesGpuWork(op))
    return true;
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  return callee && !callee.isExternal();
}

// Whether the host reads or writes memory the GPU may be using: a load, a store or a copy of a
// buffer's contents, or a call of a function outside the program (a CPU kernel of the
// runtime). Allocation and deallocation touch no contents.
bool touchesMemoryOnTheHost(Operation *op, ModuleOp module) {
  if (auto call = dyn_cast<func::CallOp>(op)) {
    if (callsTheGpuRuntime(call))
      return false;
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    return !callee || callee.isExternal();
  }
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  return effects.hasEffect<MemoryEffects::Read>() || effects.hasEffect<MemoryEffects::Write>();
}

struct GPUHostSync : mlir::attn::impl::AttnGPUHostSyncBase<GPUHostSync> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    const std::string name = std::string(::attn::names::kCudaKernelPrefix) + "synchronize";
    // Whether any wait was placed, and so the runtime function needs declaring.
    bool used = false;
    std::function<void(Block &)> process = [&](Block &block) {
      // Conservative at a block's start: the caller, or the loop's previous iteration, may
      // have left work queued.
      bool pending = true;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        if (queuesGpuWork(&op)) { // (device code inside a launch or a linalg op)
          pending = true;
          continue;
        }
        if (op.getNumRegions() > 0) {
          // A loop or a branch: its blocks wait for themselves; after it, work it queued may
          // still run.
          for (Region &region : op.getRegions())
            for (Block &inner : region)
              process(inner);
          bool queues = false;
          op.walk([&](Operation *inner) { queues = queues || mayQueueGpuWork(inner, module); });
          pending = pending || queues;
          continue;
        }
        if (mayQueueGpuWork(&op, module)) {
          // (A function of the program waits itself where it touches memory.)
          pending = true;
          continue;
        }
        // An entry returns to the runtime, which reads its results.
        bool returns = isa<func::ReturnOp>(op) && cast<func::FuncOp>(op.getParentOp()).isPublic();
        if (pending && (returns || touchesMemoryOnTheHost(&op, module))) {
          b.setInsertionPoint(&op);
          b.create<func::CallOp>(op.getLoc(), name, TypeRange{});
          used = true;
          pending = false;
        }
      }
    };
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        for (Block &block : func.getBody())
          process(block);
    if (used && !module.lookupSymbol(name)) {
      b.setInsertionPointToStart(module.getBody());
      auto decl = b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType({}, {}));
      decl.setPrivate();
    }
  }
};
} // namespace
