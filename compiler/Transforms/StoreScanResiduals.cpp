// attn-store-scan-residuals: the backward scan attn-autodiff builds recomputes its forward
// step from the saved carried values. Here the forward scan stores, as per-step outputs, the
// values the gradient ops read (the residuals), within a memory budget, and the backward
// reads them as sequences instead of recomputing them.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"
#include "dialect/FlopCount.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSTORESCANRESIDUALS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr StringLiteral kSavedCarries = "attn.saved_carries";

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

int64_t bytesOf(Value v) {
  RankedTensorType t = typeOf(v);
  return t.getNumElements() * std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

// The forward scan whose saved carries `bwd` reads: the pair attn-autodiff builds.
ScanOp forwardOf(ScanOp bwd) {
  for (Value x : bwd.getXs()) {
    auto fwd = x.getDefiningOp<ScanOp>();
    if (fwd && fwd->hasAttr(kSavedCarries) && fwd->getBlock() == bwd->getBlock() &&
        fwd.getAxis() == bwd.getAxis() && fwd.getNumSteps() == bwd.getNumSteps() &&
        fwd.getReverse() != bwd.getReverse())
      return fwd;
  }
  return ScanOp();
}

// What of the backward body is a recomputation of the forward step: the values computed,
// by pure ops, from the forward's carries, step inputs and consts only. `forward` maps each
// such value of the backward body to where it is (or will be) in the forward body.
struct Primal {
  IRMapping forward;
  llvm::SetVector<Operation *> ops; // in body order
};

Primal primalOf(ScanOp fwd, ScanOp bwd) {
  Primal p;
  // The forward's results: carries (n), per-step outputs, saved carries (the last n).
  unsigned n = fwd.getInits().size(), saved = fwd.getNumResults() - n;
  Operation *fwdYield = fwd.getBodyBlock().getTerminator();
  for (auto [seq, arg] : llvm::zip(bwd.getXs(), bwd.getStepArgs())) {
    if (auto r = dyn_cast<OpResult>(seq); r && r.getOwner() == fwd.getOperation()) {
      unsigned i = r.getResultNumber();
      if (i >= saved) // the carry entering the step
        p.forward.map(arg, fwd.getCarryArgs()[i - saved]);
      else if (i >= n) // what the step yields
        p.forward.map(arg, fwdYield->getOperand(i));
      continue;
    }
    for (auto [x, fx] : llvm::zip(fwd.getXs(), fwd.getStepArgs()))
      if (x == seq)
        p.forward.map(arg, fx);
  }
  for (auto [c, arg] : llvm::zip(bwd.getConsts(), bwd.getConstArgs()))
    for (auto [fc, fa] : llvm::zip(fwd.getConsts(), fwd.getConstArgs()))
      if (fc == c)
        p.forward.map(arg, fa);

  Block &body = bwd.getBodyBlock();
  for (Operation &op : body.without_terminator()) {
    if (!isMemoryEffectFree(&op))
      continue;
    bool primal = llvm::all_of(op.getOperands(), [&](Value v) {
      return p.forward.contains(v) || (v.getDefiningOp() && p.ops.contains(v.getDefiningOp()));
    });
    // A nested region may read values of the body; they must be primal too.
    for (Region &r : op.getRegions()) {
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(r, above);
      for (Value v : above)
        primal = primal && (p.forward.contains(v) ||
                            (v.getDefiningOp() && p.ops.contains(v.getDefiningOp())));
    }
    if (primal)
      p.ops.insert(&op);
  }
  return p;
}

// A primal value worth storing: one a gradient op (or the yield) reads. Constants are
// cheaper to rematerialise than to store.
SmallVector<Value> frontierOf(ScanOp bwd, const Primal &p) {
  Block &body = bwd.getBodyBlock();
  SmallVector<Value> frontier;
  for (Operation *op : p.ops) {
    if (op->getNumOperands() == 0)
      continue;
    for (Value v : op->getResults()) {
      bool read = llvm::any_of(v.getUsers(), [&](Operation *user) {
        return !p.ops.contains(body.findAncestorOpInBlock(*user));
      });
      if (read && (int64_t)bwd.getAxis() <= typeOf(v).getRank())
        frontier.push_back(v);
    }
  }
  return frontier;
}

// What recomputing `v` costs in one step: the primal ops it is computed from (FLOPs of the
// matmuls, one per element elsewhere).
double recomputeCost(Value v, const Primal &p) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Operation *op = work.pop_back_val().getDefiningOp();
    if (!op || !p.ops.contains(op) || !slice.insert(op))
      continue;
    work.append(op->getOperands().begin(), op->getOperands().end());
  }
  double cost = 0;
  for (Operation *op : slice) {
    if (isa<ReshapeOp>(op)) // a view: nothing to recompute
      continue;
    cost += countFlops(op);
    for (Value r : op->getResults())
      cost += typeOf(r).getNumElements();
  }
  return cost;
}

// Clones the primal slice of each stored value into the forward body and yields it as a
// per-step output (before the saved carries, which stay last); one the forward yields already
// is read from its output. Returns the stacked sequence of each stored value.
SmallVector<Value> storeInForward(ScanOp fwd, ArrayRef<Value> stored, Primal &p) {
  Block &body = fwd.getBodyBlock();
  auto yield = cast<YieldOp>(body.getTerminator());
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> work(stored);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *op = v.getDefiningOp();
    if (p.forward.contains(v) || !op || !p.ops.contains(op) || !needed.insert(op))
      continue;
    work.append(op->getOperands().begin(), op->getOperands().end());
    for (Region &r : op->getRegions()) {
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(r, above);
      work.append(above.begin(), above.end());
    }
  }
  OpBuilder b(yield);
  for (Operation *op : p.ops) // in body order, so operands come first
    if (needed.contains(op))
      b.clone(*op, p.forward);

  // Yield the clones for now, so that CSE (the clones repeat the step's own ops) keeps the
  // yield up to date; then each stored value is the yield's operand.
  unsigned n = fwd.getInits().size(), before = fwd.getNumResults() - n, k = stored.size();
  SmallVector<Value> values(yield.getValues());
  for (Value v : stored)
    values.push_back(p.forward.lookup(v));
  yield->setOperands(values);
  IRRewriter rewriter(fwd.getContext());
  DominanceInfo dominance(fwd);
  eliminateCommonSubExpressions(rewriter, dominance, fwd);
  values.assign(yield.getValues().begin(), yield.getValues().end());

  // Per stored value: the result that holds it, an existing output or a new one.
  SmallVector<Value> kept(values.begin(), values.begin() + before), added;
  SmallVector<int> where; // >= 0: existing output; < 0: -1 - index into `added`
  for (unsigned j = 0; j < k; ++j) {
    Value y = values[before + n + j];
    auto at = llvm::find(ArrayRef<Value>(kept).drop_front(n), y);
    if (at != kept.end()) {
      where.push_back(at - kept.begin());
      continue;
    }
    auto again = llvm::find(added, y);
    if (again == added.end())
      added.push_back(y);
    where.push_back(-1 - int(llvm::find(added, y) - added.begin()));
  }
  SmallVector<Value> yielded(kept);
  yielded.append(added.begin(), added.end());
  yielded.append(values.begin() + before, values.begin() + before + n); // the saved carries
  yield->setOperands(yielded);

  SmallVector<Type> types(TypeRange(fwd.getResultTypes()).take_front(before));
  for (Value v : added)
    types.push_back(fwd.getStackedType(v.getType()));
  llvm::append_range(types, TypeRange(fwd.getResultTypes()).take_back(n));
  OpBuilder outer(fwd);
  auto next =
      outer.create<ScanOp>(fwd.getLoc(), types, fwd.getInits(), fwd.getXs(), fwd.getConsts(),
                           fwd.getAxisAttr(), fwd.getReverseAttr(), fwd.getLengthAttr());
  for (NamedAttribute a : fwd->getDiscardableAttrs())
    next->setAttr(a.getName(), a.getValue());
  next.getBody().takeBody(fwd.getBody());
  for (unsigned i = 0; i < fwd.getNumResults(); ++i)
    fwd.getResult(i).replaceAllUsesWith(next.getResult(i < before ? i : i + added.size()));
  fwd.erase();
  SmallVector<Value> sequences;
  for (int w : where)
    sequences.push_back(w >= 0 ? next.getResult(w) : next.getResult(before + (-1 - w)));
  return sequences;
}

// The backward reads each stored value as a step slice of its sequence; the recomputation
// that no longer has readers goes.
void readInBackward(ScanOp bwd, ArrayRef<Value> stored, ArrayRef<Value> sequences) {
  Block &body = bwd.getBodyBlock();
  unsigned at = bwd.getInits().size() + bwd.getXs().size();
  for (auto [k, v] : llvm::enumerate(stored)) {
    BlockArgument arg = body.insertArgument(at + k, v.getType(), v.getLoc());
    Value(v).replaceAllUsesWith(arg);
  }
  bwd.getXsMutable().append(sequences);
  // Users first; a reverse iterator would point at the op it erases.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && isMemoryEffectFree(op))
      op->erase();
}

struct StoreScanResiduals : mlir::attn::impl::AttnStoreScanResidualsBase<StoreScanResiduals> {
  using Base::Base;
  void runOnOperation() override {
    // @loss_grad and @train_step hold the same layers: remarks for the first of them only.
    bool remarked = false;
    // The budget holds for each function: it is what one call keeps alive.
    getOperation()->walk([&](func::FuncOp f) {
      bool remarking = remarks && !remarked;
      // Scans remarked at each spec location: the layers of a stacked or bidirectional rnn
      // share their line, and each says what it stores (the driver prints a repeated remark
      // once).
      DenseMap<Location, unsigned> atLine;
      int64_t left = budgetMb * (int64_t(1) << 20);
      SmallVector<ScanOp> scans;
      f.walk([&](ScanOp scan) { scans.push_back(scan); });
      for (ScanOp bwd : scans) {
        ScanOp fwd = forwardOf(bwd);
        if (!fwd)
          continue;
        Primal p = primalOf(fwd, bwd);
        SmallVector<Value> frontier = frontierOf(bwd, p);
        // The most recomputation saved per byte first, while the budget lasts.
        SmallVector<std::pair<double, Value>> ranked;
        for (Value v : frontier)
          if (double cost = recomputeCost(v, p); cost > 0)
            ranked.push_back({cost / bytesOf(v), v});
        llvm::stable_sort(ranked, [](auto &a, auto &b) { return a.first > b.first; });
        SmallVector<Value> stored;
        int64_t storedBytes = 0;
        for (auto [score, v] : ranked) {
          int64_t bytes = bytesOf(v) * bwd.getNumSteps();
          if (bytes <= left) {
            stored.push_back(v);
            left -= bytes;
            storedBytes += bytes;
          }
        }
        if (remarking && !ranked.empty()) {
          remarked = true;
          unsigned nth = ++atLine[fwd.getLoc()];
          InFlightDiagnostic remark = fwd.emitRemark(nth == 1 ? "a scan of " : "another scan of ")
                                      << fwd.getNumSteps() << " steps";
          if (nth > 1)
            remark << " (the " << nth
                   << llvm::StringRef(nth == 2   ? "nd"
                                      : nth == 3 ? "rd"
                                                 : "th")
                   << " at this line)";
          remark << " whose backward reads " << ranked.size() << " values of each step: stores "
                 << stored.size() << " (" << llvm::formatv("{0:F1}", storedBytes / 1048576.0).str()
                 << " MiB)";
          if (stored.size() < ranked.size())
            remark << ", recomputes " << ranked.size() - stored.size()
                   << " (over the budget, train.scan_memory " << budgetMb.getValue() << " MiB)";
        }
        if (stored.empty())
          continue;
        // Body order, so the new outputs read like the body.
        llvm::sort(stored, [](Value a, Value b) {
          return a.getDefiningOp()->isBeforeInBlock(b.getDefiningOp());
        });
        readInBackward(bwd, stored, storeInForward(fwd, stored, p));
      }
    });
  }
};
} // namespace
