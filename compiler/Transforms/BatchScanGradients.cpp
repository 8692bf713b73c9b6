// attn-batch-scan-gradients: a backward scan accumulates a weight's gradient one step at a
// time, `acc + a_t^T b_t` with K = batch rows. The scan yields a_t and b_t instead (stacked
// over the steps) and one GEMM after it, with K = steps x batch, makes the sum.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "llvm/ADT/BitVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBATCHSCANGRADIENTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

// A carried accumulator `acc_next = acc + a_t^T b_t` (a_t [M, H], b_t [M, G]) that nothing
// else in the body reads.
struct Accumulation {
  unsigned carry;
  AddOp add;
  MatmulOp product;
  Value a, b; // its factors
};

std::optional<Accumulation> accumulation(ScanOp scan, unsigned carry) {
  BlockArgument acc = scan.getCarryArgs()[carry];
  Value next = scan.getBodyBlock().getTerminator()->getOperand(carry);
  auto add = next.getDefiningOp<AddOp>();
  if (!add || !acc.hasOneUse() || !next.hasOneUse() || add->getBlock() != &scan.getBodyBlock())
    return std::nullopt;
  Value other = add.getLhs() == acc ? add.getRhs() : add.getRhs() == acc ? add.getLhs() : Value();
  auto mm = other ? other.getDefiningOp<MatmulOp>() : MatmulOp();
  if (!mm || !other.hasOneUse() || !mm.getTransposeLhs() || mm.getTransposeRhs() ||
      typeOf(mm.getLhs()).getRank() != 2 || typeOf(mm.getRhs()).getRank() != 2 ||
      typeOf(other) != acc.getType() || scan.getAxis() > 2)
    return std::nullopt;
  return Accumulation{carry, add, mm, mm.getLhs(), mm.getRhs()};
}

// Rewrites the accumulations of `scan`: their carries leave the scan, their factors become
// per-step outputs, and each final value is `init + A^T B` over the stacked factors.
void batch(ScanOp scan, ArrayRef<Accumulation> accs) {
  Block &body = scan.getBodyBlock();
  auto yield = cast<YieldOp>(body.getTerminator());
  unsigned n = scan.getInits().size();
  llvm::BitVector removed(n);
  for (const Accumulation &a : accs)
    removed.set(a.carry);

  // Per-step outputs: the factors (a step slice is read from its own sequence instead).
  SmallVector<Value> yielded, factors;
  for (unsigned i = 0; i < n; ++i)
    if (!removed.test(i))
      yielded.push_back(yield.getOperand(i));
  yielded.append(yield.getOperands().begin() + n, yield.getOperands().end());
  for (const Accumulation &a : accs)
    for (Value f : {a.a, a.b})
      if (!scan.getSequenceOf(f) && !llvm::is_contained(factors, f))
        factors.push_back(f);
  yielded.append(factors.begin(), factors.end());

  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (unsigned i = 0; i < n; ++i)
    if (!removed.test(i)) {
      inits.push_back(scan.getInits()[i]);
      types.push_back(scan.getInits()[i].getType());
    }
  for (Value y : scan.getStackedOutputs())
    types.push_back(y.getType());
  for (Value f : factors)
    types.push_back(scan.getStackedType(f.getType()));

  OpBuilder b(scan);
  auto next = b.create<ScanOp>(scan.getLoc(), types, inits, scan.getXs(), scan.getConsts(),
                               scan.getAxisAttr(), scan.getReverseAttr(), scan.getLengthAttr());
  for (NamedAttribute attr : scan->getDiscardableAttrs())
    next->setAttr(attr.getName(), attr.getValue());
  next.getBody().takeBody(scan.getBody());
  b.setInsertionPoint(yield);
  b.create<YieldOp>(yield.getLoc(), yielded);
  yield.erase();
  for (const Accumulation &a : accs) {
    a.add->erase();
    a.product->erase();
  }
  // The removed carries' arguments are unused now; without them the body's arguments match
  // the new scan's operands (getSequenceOf below).
  for (int i = n - 1; i >= 0; --i)
    if (removed.test(i))
      next.getBodyBlock().eraseArgument(i);

  // The final values: init + A^T B with A [steps * M, H] and B [steps * M, G].
  b.setInsertionPointAfter(next);
  unsigned firstStacked = n - removed.count();
  auto stackedOf = [&](Value f) -> Value {
    if (Value seq = next.getSequenceOf(f))
      return seq;
    auto it = llvm::find(factors, f);
    return next.getResult(firstStacked + scan.getNumOutputs() + (it - factors.begin()));
  };
  auto rows = [&](Value v) -> Value {
    auto t = typeOf(v);
    int64_t cols = t.getShape().back();
    return b.create<ReshapeOp>(
        v.getLoc(), RankedTensorType::get({t.getNumElements() / cols, cols}, t.getElementType()),
        v);
  };
  SmallVector<Value> finals(n);
  for (const Accumulation &a : accs) {
    Location l = scan.getLoc();
    Value product = b.create<MatmulOp>(l, rows(stackedOf(a.a)), rows(stackedOf(a.b)),
                                       b.getBoolAttr(true), b.getBoolAttr(false));
    finals[a.carry] = b.create<AddOp>(l, scan.getInits()[a.carry], product);
  }
  unsigned kept = 0;
  for (unsigned i = 0; i < n; ++i)
    scan.getResult(i).replaceAllUsesWith(removed.test(i) ? finals[i] : next.getResult(kept++));
  for (unsigned j = 0; j < scan.getNumOutputs(); ++j)
    scan.getResult(n + j).replaceAllUsesWith(next.getResult(kept + j));
  scan.erase();
}

struct BatchScanGradients : mlir::attn::impl::AttnBatchScanGradientsBase<BatchScanGradients> {
  void runOnOperation() override {
    SmallVector<ScanOp> scans;
    getOperation()->walk([&](ScanOp scan) { scans.push_back(scan); });
    for (ScanOp scan : scans) {
      SmallVector<Accumulation> accs;
      for (unsigned i = 0; i < scan.getInits().size(); ++i)
        if (auto a = accumulation(scan, i))
          accs.push_back(*a);
      if (!accs.empty())
        batch(scan, accs);
    }
  }
};
} // namespace
