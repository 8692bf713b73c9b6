// attn-gpu-launch-to-loops: a gpu.launch becomes the scf.parallel over its grid and blocks
// (see Passes.td).
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPULAUNCHTOLOOPS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

// Why `launch` has no loop form ("" when it has one): its threads must not need to run at
// the same time.
std::string whyNotLoops(gpu::LaunchOp launch) {
  if (!launch.getBody().hasOneBlock())
    return "its body has more than one block";
  if (launch.getNumWorkgroupAttributions() || !launch.getPrivateAttributions().empty())
    return "it has workgroup or private memory";
  if (launch.hasClusterSize() || launch.getAsyncToken() || launch.getDynamicSharedMemorySize())
    return "it has clusters, async tokens or dynamic shared memory";
  std::string why;
  launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::AllReduceOp, gpu::SubgroupReduceOp>(op))
      why = "its threads synchronise or exchange values ('" + op->getName().getStringRef().str() +
            "')";
  });
  return why;
}

struct GPULaunchToLoops : mlir::attn::impl::AttnGPULaunchToLoopsBase<GPULaunchToLoops> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(&getContext());
    for (gpu::LaunchOp launch : launches) {
      if (std::string why = whyNotLoops(launch); !why.empty()) {
        launch->emitOpError("has no loop form: ") << why;
        return signalPassFailure();
      }
      lower(rewriter, launch);
    }
    hostBuffers(rewriter);
  }

  // attn-device-buffers' device buffers and attn-constants-to-buffers' copies: the host's,
  // the gpu.waits around them gone.
  void hostBuffers(IRRewriter &rewriter) {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::WaitOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        // (64: bufferization's alignment, as the CPU's program has it.)
        Value host = rewriter.create<memref::AllocOp>(
            alloc.getLoc(), alloc.getType(), alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            rewriter.getI64IntegerAttr(64));
        rewriter.replaceAllUsesWith(alloc.getMemref(), host);
      } else if (auto free = dyn_cast<gpu::DeallocOp>(op)) {
        rewriter.create<memref::DeallocOp>(free.getLoc(), free.getMemref());
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        rewriter.create<memref::CopyOp>(copy.getLoc(), copy.getSrc(), copy.getDst());
      }
    }
    // Last first: a token's users come after it.
    for (Operation *op : llvm::reverse(ops))
      rewriter.eraseOp(op);
  }

  // gpu.launch blocks(bx, by, bz) in (gx, gy, gz) threads(tx, ty, tz) in (sx, sy, sz) {body}
  //   -> scf.parallel (bx, by, bz, tx, ty, tz) = (0...) to (gx, gy, gz, sx, sy, sz) {body}
  void lower(IRRewriter &rewriter, gpu::LaunchOp launch) {
    Location loc = launch.getLoc();
    rewriter.setInsertionPoint(launch);
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues(),
                    block = launch.getBlockSizeOperandValues();
    SmallVector<Value> upper = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto loops = rewriter.create<scf::ParallelOp>(loc, SmallVector<Value>(6, zero), upper,
                                                  SmallVector<Value>(6, one));
    IRMapping map;
    ValueRange ivs = loops.getInductionVars();
    gpu::KernelDim3 blockIds = launch.getBlockIds(), threadIds = launch.getThreadIds(),
                    gridSize = launch.getGridSize(), blockSize = launch.getBlockSize();
    map.map(SmallVector<Value>{blockIds.x, blockIds.y, blockIds.z, threadIds.x, threadIds.y,
                               threadIds.z, gridSize.x, gridSize.y, gridSize.z, blockSize.x,
                               blockSize.y, blockSize.z},
            SmallVector<Value>{ivs[0], ivs[1], ivs[2], ivs[3], ivs[4], ivs[5], grid.x, grid.y,
                               grid.z, block.x, block.y, block.z});
    rewriter.setInsertionPoint(loops.getBody()->getTerminator());
    for (Operation &op : launch.getBody().front().without_terminator())
      rewriter.clone(op, map);
    // The same indices spelled as ops (gpu.block_id x, ...), as kernel outlining leaves them.
    SmallVector<std::pair<Operation *, Value>> spelled;
    loops.getBody()->walk([&](Operation *op) {
      Value with;
      if (auto id = dyn_cast<gpu::BlockIdOp>(op))
        with = ivs[(unsigned)id.getDimension()];
      else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
        with = ivs[3 + (unsigned)id.getDimension()];
      else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
        with = upper[(unsigned)dim.getDimension()];
      else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
        with = upper[3 + (unsigned)dim.getDimension()];
      if (with)
        spelled.push_back({op, with});
    });
    for (auto [op, with] : spelled)
      rewriter.replaceOp(op, with);
    rewriter.eraseOp(launch);
  }
};
} // namespace
