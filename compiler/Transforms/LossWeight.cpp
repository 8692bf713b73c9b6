// attn-loss-weight: @loss -> @loss_weight, the number of terms @loss averages over, so that
// the mean losses (and gradients) of a batch's shards combine into the whole batch's.
#include "attn/Names.h"
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOSSWEIGHT
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
// The mean a loss value is built from: the value's op, or through a chain of add / sub the
// first operand of each (terms added to a mean and normalised like it).
Operation *meanOf(Value loss) {
  Operation *op = loss.getDefiningOp();
  while (op && isa<AddOp, SubOp>(op))
    op = op->getOperand(0).getDefiningOp();
  return op;
}

struct LossWeight : mlir::attn::impl::AttnLossWeightBase<LossWeight> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto loss = module.lookupSymbol<func::FuncOp>("loss");
    if (!loss) {
      module.emitError("attn-loss-weight: no @loss");
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(loss.front().getTerminator());
    Operation *mean = ret.getNumOperands() ? meanOf(ret.getOperand(0)) : nullptr;
    if (!mean || !isa<CrossEntropyOp, MseOp>(mean)) {
      (mean ? mean : ret.getOperation())->emitError("attn-loss-weight: @loss returns ")
          << (mean ? mean->getName().getStringRef() : StringRef("a function argument"))
          << "; a shard's weight is known for attn.cross_entropy and attn.mse only";
      return signalPassFailure();
    }

    OpBuilder b(loss);
    b.setInsertionPointAfter(loss);
    auto weight = cast<func::FuncOp>(b.clone(*loss));
    weight.setSymName("loss_weight");
    auto newRet = cast<func::ReturnOp>(weight.front().getTerminator());
    b.setInsertionPoint(newRet);
    Location loc = newRet.getLoc();
    Value w;
    if (auto ce = dyn_cast<CrossEntropyOp>(meanOf(newRet.getOperand(0)))) {
      int64_t classes = cast<RankedTensorType>(ce.getLogits().getType()).getShape().back();
      w = b.create<LabelCountOp>(loc, ce.getLabels(), b.getI64IntegerAttr(classes),
                                 ce.getIgnoreIndexAttr());
    } else {
      w = scalarOf(b, loc, 1.0f); // mse: every shard has as many elements
    }
    b.create<func::ReturnOp>(loc, w);
    newRet.erase();
    weight.setFunctionType(b.getFunctionType(weight.getArgumentTypes(), {w.getType()}));
    weight.setResultAttr(0, "attn.name", b.getStringAttr(::attn::names::kWeight));
    // The forward computation is dead now; only the labels' count is left.
    IRRewriter rewriter(b);
    (void)runRegionDCE(rewriter, weight.getBody());
  }
};
} // namespace
