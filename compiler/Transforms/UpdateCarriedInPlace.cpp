// attn-update-carried-in-place: an elementwise op that reads a loop-carried tensor for the last
// time writes its result over it (see Passes.td).
//
//   %acc2 = linalg.generic ins(%acc, %x) outs(tensor.empty)   // %acc: an scf.for iter_arg
//   ->
//   %acc2 = linalg.generic ins(%x) outs(%acc)                 // the body reads %acc as %out
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNUPDATECARRIEDINPLACE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

// Whether the buffer behind `v`, an iter_arg of some scf.for, starts as one the function made
// (a constant, an empty tensor, a linalg result) rather than as a caller's argument.
// One-shot bufferization treats function arguments as writable, and the runtime's callers
// (parameters, inputs) never expect their buffers written, so a value that could alias one is
// left alone. Every other conflict (the initial value read after the loop, say) one-shot
// bufferization resolves itself, with a copy.
bool startsAsOwnBuffer(Value v) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg.getArgNumber() == 0) // a function argument, or the induction variable
        return false;
      v = loop.getInitArgs()[arg.getArgNumber() - 1];
    } else if (auto linalgOp = v.getDefiningOp<linalg::LinalgOp>()) {
      // Its result is written over its init, which this pass may have made a carried value.
      v = linalgOp.getDpsInitOperand(cast<OpResult>(v).getResultNumber())->get();
    } else {
      return v.getDefiningOp<arith::ConstantOp>() || v.getDefiningOp<tensor::EmptyOp>();
    }
  }
}

// The input of `op` to write the result over: a tensor that the loop around `op` carries, of
// the result's type, that `op` reads once, elementwise, and nothing else reads, and into whose
// slot the loop yields the result. (Elsewhere, in a nested loop or yielded into another
// slot, one-shot bufferization would copy the carried buffer at every step instead.)
OpOperand *carriedInput(linalg::GenericOp op) {
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  if (!loop || op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return nullptr;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!init->get().getDefiningOp<tensor::EmptyOp>() || op.payloadUsesValueFromOperand(init) ||
      !op.getMatchingIndexingMap(init).isIdentity())
    return nullptr;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto arg = dyn_cast<BlockArgument>(in->get());
    if (!arg || arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0)
      continue;
    if (arg.getType() == init->get().getType() && arg.hasOneUse() &&
        op.getMatchingIndexingMap(in).isIdentity() &&
        yield.getOperand(arg.getArgNumber() - 1) == op->getResult(0) && startsAsOwnBuffer(arg))
      return in;
  }
  return nullptr;
}

// `op` with `carried` moved from its inputs to its output: the same maps less the input's,
// and a body that reads the output's element where it read the input's.
void writeOver(IRRewriter &rewriter, linalg::GenericOp op, OpOperand *carried) {
  unsigned at = carried->getOperandNumber();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands())
    if (in != carried) {
      inputs.push_back(in->get());
      maps.push_back(op.getMatchingIndexingMap(in));
    }
  maps.push_back(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  rewriter.setInsertionPoint(op);
  auto updated = rewriter.create<linalg::GenericOp>(op.getLoc(), op.getResultTypes(), inputs,
                                                    ValueRange{carried->get()}, maps,
                                                    op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), updated.getRegion(), updated.getRegion().end());
  Block &body = updated.getRegion().front();
  rewriter.replaceAllUsesWith(body.getArgument(at), body.getArguments().back());
  body.eraseArgument(at);
  Value empty = op.getDpsInitOperand(0)->get();
  rewriter.replaceOp(op, updated.getResults());
  if (empty.use_empty())
    rewriter.eraseOp(empty.getDefiningOp());
}

struct UpdateCarriedInPlace : mlir::attn::impl::AttnUpdateCarriedInPlaceBase<UpdateCarriedInPlace> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, OpOperand *>> updates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (OpOperand *carried = carriedInput(op))
        updates.push_back({op, carried});
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, carried] : updates)
      writeOver(rewriter, op, carried);
  }
};

} // namespace
