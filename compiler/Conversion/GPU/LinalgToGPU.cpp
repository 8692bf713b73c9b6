// attn-linalg-to-gpu: every linalg op on buffers becomes a gpu.launch of one thread per
// point of its parallel iteration space (see Passes.td).
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLINALGTOGPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

// The loop order with the parallel loops first, each group in its own order: the reductions
// then run innermost, in a thread, in the order the CPU's loops take them.
std::optional<SmallVector<unsigned>> parallelFirst(linalg::LinalgOp op) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? parallel : reduction).push_back(i);
  SmallVector<unsigned> order(parallel);
  order.append(reduction);
  bool identity = llvm::equal(order, llvm::seq<unsigned>(0, order.size()));
  return identity ? std::nullopt : std::optional(order);
}

struct LinalgToGPU : mlir::attn::impl::AttnLinalgToGPUBase<LinalgToGPU> {
  using AttnLinalgToGPUBase::AttnLinalgToGPUBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && !op->getParentOfType<gpu::LaunchOp>() &&
          !op->getParentOfType<gpu::GPUModuleOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      if (failed(launch(rewriter, op)))
        return signalPassFailure();
  }

  // A zero-dimensional op (a scalar's fill or update) in a launch of one thread.
  LogicalResult oneThread(IRRewriter &rewriter, linalg::LinalgOp op) {
    Location loc = op.getLoc();
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto launch = rewriter.create<gpu::LaunchOp>(loc, one, one, one, one, one, one);
    rewriter.setInsertionPointToStart(&launch.getBody().front());
    rewriter.moveOpBefore(op, rewriter.create<gpu::TerminatorOp>(loc));
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
      return op->emitOpError("has no loop form");
    rewriter.eraseOp(op);
    return success();
  }

  LogicalResult launch(IRRewriter &rewriter, linalg::LinalgOp op) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    if (std::optional<SmallVector<unsigned>> order = parallelFirst(op)) {
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
        if (failed(g))
          return op->emitOpError("has a reduction before a parallel loop and no generic form");
        generic = *g;
      }
      FailureOr<linalg::GenericOp> swapped =
          linalg::interchangeGenericOp(rewriter, generic, *order);
      if (failed(swapped))
        return generic->emitOpError("cannot put its parallel loops first");
      op = *swapped;
    }
    if (op.getNumLoops() == 0) // one element: one thread
      return oneThread(rewriter, op);
    // The loops the CPU would run, as scf.parallel (the parallel loops, outermost) around
    // scf.for (the reductions).
    FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToParallelLoops(rewriter, op);
    if (failed(loops))
      return op->emitOpError("has no loop form");
    rewriter.eraseOp(op);
    Operation *outer = loops->front();
    auto parallel = dyn_cast<scf::ParallelOp>(outer);

    rewriter.setInsertionPoint(outer);
    auto index = [&](int64_t v) { return rewriter.create<arith::ConstantIndexOp>(loc, v); };
    Value one = index(1);
    // Points of the parallel space: trip counts of the scf.parallel's loops, multiplied.
    SmallVector<Value> trips;
    Value points = one;
    if (parallel)
      for (auto [lb, ub, step] :
           llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(), parallel.getStep())) {
        // ceil((ub - lb) / step) in the ops every lowering has (linalg's steps are 1).
        Value span = rewriter.create<arith::SubIOp>(loc, ub, lb);
        if (!matchPattern(step, m_One()))
          span = rewriter.create<arith::DivUIOp>(
              loc,
              rewriter.create<arith::AddIOp>(loc, span,
                                             rewriter.create<arith::SubIOp>(loc, step, one)),
              step);
        trips.push_back(span);
        points = rewriter.create<arith::MulIOp>(loc, points, trips.back());
      }
    // Without parallel loops (a reduction to one value) one thread runs the whole nest.
    Value threads = parallel ? index(blockSize) : one;
    // A grid of at least one block: CUDA refuses an empty launch, and the guard below keeps
    // the extra threads idle.
    Value blocks = one;
    if (parallel) {
      Value last = rewriter.create<arith::SubIOp>(loc, points, one);
      Value full = rewriter.create<arith::DivUIOp>(
          loc, rewriter.create<arith::MaxSIOp>(loc, last, index(0)), threads);
      blocks = rewriter.create<arith::AddIOp>(loc, full, one);
    }
    auto launch = rewriter.create<gpu::LaunchOp>(loc, blocks, one, one, threads, one, one);
    Block &body = launch.getBody().front();
    rewriter.setInsertionPointToStart(&body);
    auto terminator = rewriter.create<gpu::TerminatorOp>(loc);
    if (!parallel) {
      rewriter.moveOpBefore(outer, terminator);
      return success();
    }
    rewriter.setInsertionPoint(terminator);
    // point = block * blockDim + thread; the threads past the last point do nothing.
    Value point = rewriter.create<arith::AddIOp>(
        loc, rewriter.create<arith::MulIOp>(loc, launch.getBlockIds().x, launch.getBlockSize().x),
        launch.getThreadIds().x);
    Value inside = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, point, points);
    auto guard = rewriter.create<scf::IfOp>(loc, inside, /*withElseRegion=*/false);
    rewriter.setInsertionPointToStart(guard.thenBlock());
    // The point's loop indices, the last loop varying fastest (row-major, as the CPU's
    // loops walk it: neighbouring threads touch neighbouring elements).
    IRMapping map;
    Value rest = point;
    for (int64_t d = (int64_t)trips.size() - 1; d >= 0; --d) {
      Value k = d == 0 ? rest : rewriter.create<arith::RemUIOp>(loc, rest, trips[d]);
      if (d > 0)
        rest = rewriter.create<arith::DivUIOp>(loc, rest, trips[d]);
      Value iv = rewriter.create<arith::AddIOp>(
          loc, parallel.getLowerBound()[d],
          rewriter.create<arith::MulIOp>(loc, k, parallel.getStep()[d]));
      map.map(parallel.getInductionVars()[d], iv);
    }
    for (Operation &inner : parallel.getBody()->without_terminator())
      rewriter.clone(inner, map);
    rewriter.eraseOp(parallel);
    return success();
  }
};
} // namespace
