// attn-decompose: composite ops (cells) into the core ops the lowerings know.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
// tanh(x w_ax + b + h w_aa): the input projection carries the bias so it maps onto one
// oneDNN matmul-with-bias.
struct DecomposeRnnCell : OpRewritePattern<RnnCellOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RnnCellOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = rewriter.create<DenseOp>(loc, op.getInput(), op.getWAx(), op.getBias());
    Value rec = rewriter.create<MatmulOp>(loc, op.getHidden(), op.getWAa());
    Value sum = rewriter.create<AddOp>(loc, in, rec);
    rewriter.replaceOpWithNewOp<TanhOp>(op, sum);
    return success();
  }
};

struct Decompose : mlir::attn::impl::AttnDecomposeBase<Decompose> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeRnnCell>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
