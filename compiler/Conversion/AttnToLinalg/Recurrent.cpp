// attn-to-linalg, recurrent family: attn.scan becomes an scf.for over time. The loop carries
// the scan's carried values plus one tensor per stacked output, into which each step's
// output is inserted; the body's ops move into the loop unchanged (they are lowered by the
// other patterns of this pass).
#include "compiler/Conversion/AttnToLinalg/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
// Offsets/sizes/strides selecting step `t` of `type` along `axis` (a box of size 1 there).
struct StepBox {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
StepBox stepBox(OpBuilder &b, RankedTensorType type, int64_t axis, Value t) {
  StepBox box;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    box.offsets.push_back(d == axis ? OpFoldResult(t) : b.getIndexAttr(0));
    box.sizes.push_back(b.getIndexAttr(d == axis ? 1 : type.getDimSize(d)));
    box.strides.push_back(b.getIndexAttr(1));
  }
  return box;
}

struct ScanToFor : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScanOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t steps = op.getNumSteps();
    unsigned nInits = op.getInits().size();

    SmallVector<Value> iterInits(op.getInits());
    for (Value stacked : op.getStackedOutputs()) {
      auto type = cast<RankedTensorType>(stacked.getType());
      iterInits.push_back(
          rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType()));
    }
    Value lb = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value ub = rewriter.create<arith::ConstantIndexOp>(loc, steps);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = rewriter.create<scf::ForOp>(loc, lb, ub, one, iterInits);
    Block *loopBody = loop.getBody();

    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loopBody);
    Value t = loop.getInductionVar();
    if (op.getReverse()) {
      Value last = rewriter.create<arith::ConstantIndexOp>(loc, steps - 1);
      t = rewriter.create<arith::SubIOp>(loc, last, t);
    }
    // Block arguments of the scan body: carried values, then step slices of the inputs.
    SmallVector<Value> bodyArgs(loop.getRegionIterArgs().take_front(nInits));
    for (auto [x, arg] : llvm::zip(op.getXs(), op.getStepArgs())) {
      auto xType = cast<RankedTensorType>(x.getType());
      StepBox box = stepBox(rewriter, xType, axis, t);
      bodyArgs.push_back(rewriter.create<tensor::ExtractSliceOp>(
          loc, cast<RankedTensorType>(arg.getType()), x, box.offsets, box.sizes, box.strides));
    }
    // Loop-invariant consts are used as they are.
    bodyArgs.append(op.getConsts().begin(), op.getConsts().end());
    auto yield = cast<YieldOp>(op.getBodyBlock().getTerminator());
    rewriter.inlineBlockBefore(&op.getBodyBlock(), loopBody, loopBody->end(), bodyArgs);

    rewriter.setInsertionPoint(yield);
    SmallVector<Value> next(yield.getValues().take_front(nInits));
    for (auto [y, acc] : llvm::zip(yield.getValues().drop_front(nInits),
                                   loop.getRegionIterArgs().drop_front(nInits))) {
      StepBox box = stepBox(rewriter, cast<RankedTensorType>(acc.getType()), axis, t);
      next.push_back(rewriter.create<tensor::InsertSliceOp>(loc, y, acc, box.offsets,
                                                            box.sizes, box.strides));
    }
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, next);
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};
} // namespace

void mlir::attn::linalg_lowering::populateRecurrentPatterns(RewritePatternSet &patterns) {
  patterns.add<ScanToFor>(patterns.getContext());
}
