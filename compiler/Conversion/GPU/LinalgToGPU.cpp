// attn-linalg-to-gpu: every linalg op on buffers becomes a gpu.launch of one thread per
// point of its parallel iteration space (see Passes.td).
#include "compiler/Conversion/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

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

// The identity of a reduction's combiner (the value `x` with combine(x, y) = y), or null for a
// combiner this pass does not split.
TypedAttr combinerIdentity(Operation *combiner, Type type) {
  auto f = dyn_cast<FloatType>(type);
  if (!f)
    return {};
  auto value = [&](double v) { return FloatAttr::get(f, v); };
  if (isa<arith::AddFOp>(combiner))
    return value(-0.0); // x + -0 = x, also for x = -0
  if (isa<arith::MulFOp>(combiner))
    return value(1.0);
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
    return value(-std::numeric_limits<double>::infinity());
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
    return value(std::numeric_limits<double>::infinity());
  return {};
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

  // A reduction of many elements to one value (a gradient's squared norm, say) in two
  // launches instead of one thread: `parts` threads each combine a strided share of the
  // points (thread p: p, p + parts, ...: neighbouring threads read neighbouring elements)
  // from the combiner's identity, then one thread combines the output's value with the
  // shares in order. The sum so reassociates as the CPU's vectorised loops may. Fails,
  // changing nothing, for an op this does not split: a parallel loop, a dynamic or small
  // size, more than one output, a body that is not `out <combiner> f(inputs)`.
  LogicalResult splitReduction(IRRewriter &rewriter, linalg::LinalgOp op) {
    if (op.getNumParallelLoops() != 0 || op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
      return failure();
    std::optional<SmallVector<int64_t>> bounds = op.getStaticLoopRanges();
    if (!bounds || llvm::is_contained(*bounds, ShapedType::kDynamic))
      return failure();
    int64_t points = 1;
    for (int64_t n : *bounds)
      points *= n;
    if (points < kSplitAbove)
      return failure();
    Block &body = op->getRegion(0).front();
    SmallVector<Operation *> combiners;
    BlockArgument out = body.getArguments().back();
    if (!matchReduction({out}, 0, combiners) || combiners.size() != 1)
      return failure();
    Type element = out.getType();
    TypedAttr identity = combinerIdentity(combiners[0], element);
    if (!identity)
      return failure();

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    auto index = [&](int64_t v) { return rewriter.create<arith::ConstantIndexOp>(loc, v); };
    // At least kPointsPerThread points a thread, in whole blocks.
    int64_t blocks = std::min<int64_t>(
        kMaxSplitBlocks, std::max<int64_t>(1, points / (kPointsPerThread * blockSize)));
    int64_t parts = blocks * blockSize;
    Value partial = rewriter.create<memref::AllocOp>(loc, MemRefType::get({parts}, element),
                                                     rewriter.getI64IntegerAttr(64));
    Value one = index(1);
    Value outBuffer = op.getDpsInitOperand(0)->get();
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));

    // Launch 1: thread p's share.
    auto shares =
        rewriter.create<gpu::LaunchOp>(loc, index(blocks), one, one, index(blockSize), one, one);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&shares.getBody().front());
      rewriter.setInsertionPoint(rewriter.create<gpu::TerminatorOp>(loc));
      Value p = rewriter.create<arith::AddIOp>(
          loc, rewriter.create<arith::MulIOp>(loc, shares.getBlockIds().x, index(blockSize)),
          shares.getThreadIds().x);
      Value start = rewriter.create<arith::ConstantOp>(loc, identity);
      auto loop =
          rewriter.create<scf::ForOp>(loc, p, index(points), index(parts), ValueRange{start});
      rewriter.setInsertionPointToStart(loop.getBody());
      // The point's loop indices, the last loop fastest.
      SmallVector<Value> at(bounds->size());
      Value rest = loop.getInductionVar();
      for (int64_t d = (int64_t)bounds->size() - 1; d >= 0; --d) {
        at[d] = d == 0 ? rest : rewriter.create<arith::RemUIOp>(loc, rest, index((*bounds)[d]));
        if (d > 0)
          rest = rewriter.create<arith::DivUIOp>(loc, rest, index((*bounds)[d]));
      }
      // The body at those indices, the accumulator in place of the output's element.
      IRMapping map;
      for (OpOperand *input : op.getDpsInputOperands()) {
        AffineMap m = op.getMatchingIndexingMap(input);
        Value value = input->get();
        if (auto memref = dyn_cast<MemRefType>(value.getType())) {
          SmallVector<Value> where;
          for (unsigned r = 0; r < m.getNumResults(); ++r)
            where.push_back(affine::makeComposedAffineApply(rewriter, loc, m.getSubMap({r}),
                                                            getAsOpFoldResult(at))
                                ->getResult(0));
          value = rewriter.create<memref::LoadOp>(loc, value, where);
        }
        map.map(op.getMatchingBlockArgument(input), value);
      }
      map.map(out, loop.getRegionIterArgs()[0]);
      for (Operation &inner : body.without_terminator()) {
        if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
          map.map(idx.getResult(), at[idx.getDim()]);
          continue;
        }
        rewriter.clone(inner, map);
      }
      Value next = map.lookup(body.getTerminator()->getOperand(0));
      rewriter.create<scf::YieldOp>(loc, next);
      rewriter.setInsertionPointAfter(loop);
      rewriter.create<memref::StoreOp>(loc, loop.getResult(0), partial, ValueRange{p});
    }
    // Launch 2: the output's value and the shares, combined in order by one thread.
    auto total = rewriter.create<gpu::LaunchOp>(loc, one, one, one, one, one, one);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&total.getBody().front());
      rewriter.setInsertionPoint(rewriter.create<gpu::TerminatorOp>(loc));
      SmallVector<Value> outAt(outMap.getNumResults(), index(0));
      Value init = rewriter.create<memref::LoadOp>(loc, outBuffer, outAt);
      auto loop = rewriter.create<scf::ForOp>(loc, index(0), index(parts), one, ValueRange{init});
      rewriter.setInsertionPointToStart(loop.getBody());
      IRMapping map;
      Operation *combiner = combiners[0];
      Value share = rewriter.create<memref::LoadOp>(loc, partial, loop.getInductionVar());
      // combine(acc, share), in the combiner's operand order (acc where the output was).
      SmallVector<Value> operands;
      for (Value v : combiner->getOperands())
        operands.push_back(v == out ? loop.getRegionIterArgs()[0] : share);
      Operation *combined = rewriter.create(loc, combiner->getName().getIdentifier(), operands,
                                            combiner->getResultTypes(), combiner->getAttrs());
      rewriter.create<scf::YieldOp>(loc, combined->getResult(0));
      rewriter.setInsertionPointAfter(loop);
      rewriter.create<memref::StoreOp>(loc, loop.getResult(0), outBuffer, outAt);
    }
    rewriter.setInsertionPointAfter(total);
    rewriter.create<memref::DeallocOp>(loc, partial);
    rewriter.eraseOp(op);
    return success();
  }

  // Reductions to one value of more points than this are split (splitReduction); each
  // thread then combines at least kPointsPerThread of them, in at most kMaxSplitBlocks blocks.
  static constexpr int64_t kSplitAbove = 1 << 14, kPointsPerThread = 16, kMaxSplitBlocks = 264;

  LogicalResult launch(IRRewriter &rewriter, linalg::LinalgOp op) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    if (succeeded(splitReduction(rewriter, op)))
      return success();
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
