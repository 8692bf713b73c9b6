#include "dialect/Autodiff.h"

#include "dialect/AttnOps.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::attn {

namespace {
// Whether `op` reads an active value, as an operand or from inside its regions.
bool readsActive(Operation *op, const llvm::DenseSet<Value> &active) {
  bool found = false;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (active.contains(v) && !op->isAncestor(v.getParentRegion()->getParentOp()))
        found = true;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

// Forward activity: the ops that read values depending on `wrt`, and those values.
struct Activity {
  llvm::DenseSet<Value> values;
  llvm::DenseSet<Operation *> ops;
};
Activity activity(ArrayRef<Operation *> ops, ArrayRef<Value> wrt) {
  Activity a;
  a.values.insert(wrt.begin(), wrt.end());
  for (Operation *op : ops)
    if (readsActive(op, a.values)) {
      a.ops.insert(op);
      a.values.insert(op->result_begin(), op->result_end());
    }
  return a;
}

bool isFloatTensor(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && isa<FloatType>(tensor.getElementType());
}
} // namespace

SmallVector<Operation *> prepareForGradient(OpBuilder &b, ArrayRef<Operation *> ops,
                                            ArrayRef<Value> wrt) {
  llvm::DenseSet<Value> active(wrt.begin(), wrt.end());
  SmallVector<Operation *> out;
  for (Operation *op : ops) {
    if (readsActive(op, active))
      if (auto diff = dyn_cast<DifferentiableOpInterface>(op))
        op = diff.prepareForGradient(b);
    if (readsActive(op, active))
      active.insert(op->result_begin(), op->result_end());
    out.push_back(op);
  }
  return out;
}

FailureOr<SmallVector<Value>> buildBackward(OpBuilder &b, ArrayRef<Operation *> ops,
                                            ArrayRef<std::pair<Value, Value>> seeds,
                                            ArrayRef<Value> wrt) {
  Activity act = activity(ops, wrt);
  const llvm::DenseSet<Value> &active = act.values;
  DenseMap<Value, Value> grads;
  auto accumulate = [&](Value v, Value g) {
    if (!g || !active.contains(v))
      return;
    auto [it, inserted] = grads.try_emplace(v, g);
    if (!inserted)
      it->second = b.create<AddOp>(g.getLoc(), it->second, g);
  };
  for (auto [v, g] : seeds)
    accumulate(v, g);

  for (Operation *op : llvm::reverse(ops)) {
    // Only ops that read an active value pass gradients on (a parameter read is a source).
    if (!act.ops.contains(op) ||
        llvm::none_of(op->getResults(), [&](Value r) { return grads.count(r); }))
      continue;
    auto diff = dyn_cast<DifferentiableOpInterface>(op);
    if (!diff)
      return op->emitError("'") << op->getName()
                                << "' has no gradient rule (DifferentiableOpInterface), but "
                                   "it lies between the parameters and the loss";
    SmallVector<Value> resultGrads;
    for (Value r : op->getResults()) {
      Value g = grads.lookup(r);
      if (!g && isFloatTensor(r.getType()))
        g = zerosOf(b, op->getLoc(), r.getType());
      resultGrads.push_back(g);
    }
    SmallVector<Value> operandGrads;
    if (failed(diff.buildGradient(b, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError("gradient rule returned ")
             << operandGrads.size() << " gradients for " << op->getNumOperands()
             << " operands";
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (g && g.getType() != operand.getType())
        return op->emitError("gradient rule gave ")
               << g.getType() << " for an operand of type " << operand.getType();
      accumulate(operand, g);
    }
  }
  SmallVector<Value> result;
  for (Value v : wrt)
    result.push_back(grads.lookup(v));
  return result;
}

LogicalResult buildGradientByDecomposition(Operation *op, OpBuilder &b, ValueRange resultGrads,
                                           SmallVectorImpl<Value> &operandGrads) {
  // Records the ops the decomposition creates: they are what gets differentiated.
  struct Recorder : OpBuilder::Listener {
    SmallVector<Operation *> ops;
    void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
  } recorder;
  OpBuilder::Listener *previous = b.getListener();
  b.setListener(&recorder);
  SmallVector<Value> results = cast<DecomposableOpInterface>(op).decompose(b);
  b.setListener(previous);
  SmallVector<std::pair<Value, Value>> seeds;
  for (auto [r, g] : llvm::zip(results, resultGrads))
    seeds.push_back({r, g});
  SmallVector<Value> wrt(op->getOperands());
  auto grads = buildBackward(b, recorder.ops, seeds, wrt);
  if (failed(grads))
    return failure();
  // An operand passed twice (self-attention's query and memory) already has its whole
  // gradient at its first position: the caller sums per position, so later ones get none.
  for (auto [i, g] : llvm::enumerate(*grads))
    operandGrads.push_back(llvm::is_contained(ArrayRef<Value>(wrt).take_front(i), wrt[i]) ? Value() : g);
  return success();
}

Value zerosOf(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(tensor, b.getFloatAttr(tensor.getElementType(), 0.0)));
}

Value scalarOf(OpBuilder &b, Location loc, float value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

Value sumToType(OpBuilder &b, Location loc, Value grad, Type type) {
  auto from = cast<RankedTensorType>(grad.getType());
  auto to = cast<RankedTensorType>(type);
  if (from == to)
    return grad;
  int64_t lead = from.getRank() - to.getRank();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < from.getRank(); ++i)
    if (i < lead || (to.getShape()[i - lead] == 1 && from.getShape()[i] != 1))
      axes.push_back(i);
  Value summed = axes.empty() ? grad
                              : b.create<ReduceSumOp>(loc, grad, b.getDenseI64ArrayAttr(axes),
                                                      b.getBoolAttr(false))
                                    .getResult();
  if (summed.getType() == to)
    return summed;
  return b.create<ReshapeOp>(loc, to, summed);
}

} // namespace mlir::attn
