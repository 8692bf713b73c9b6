// Gradient rules of the recurrent family (ops/Recurrent.td): the vanilla cell, and
// back-propagation through time for attn.scan.
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"

#include "mlir/IR/IRMapping.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::attn;

//===- rnn_cell ------------------------------------------------------------------------===//

// h = tanh(x W_ax + h_prev W_aa + b): with d = g (1 - h^2),
// dx = d W_ax^T, dh_prev = d W_aa^T, dW_ax = x^T d, dW_aa = h_prev^T d, db = sum_rows d.
LogicalResult RnnCellOp::buildGradient(OpBuilder &b, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  Location l = getLoc();
  Value h = getResult();
  Value one = scalarOf(b, l, 1.0f);
  Value d = b.create<MulOp>(l, grads[0], b.create<SubOp>(l, one, b.create<MulOp>(l, h, h)));
  auto mm = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<MatmulOp>(l, x, y, b.getBoolAttr(tx), b.getBoolAttr(ty));
  };
  out.push_back(mm(d, getWAx(), false, true));
  out.push_back(mm(d, getWAa(), false, true));
  out.push_back(mm(getInput(), d, true, false));
  out.push_back(mm(getHidden(), d, true, false));
  out.push_back(b.create<ReduceSumOp>(l, d, b.getDenseI64ArrayAttr({0}), b.getBoolAttr(false)));
  return success();
}

//===- scan ----------------------------------------------------------------------------===//

namespace {
constexpr StringLiteral kSavedCarries = "attn.saved_carries";

bool isFloat(Type t) { return isa<FloatType>(cast<RankedTensorType>(t).getElementType()); }
} // namespace

// The backward scan needs the carried values entering every step: the forward scan yields
// them as extra stacked outputs (marked kSavedCarries). Captures become explicit consts so
// their gradients can be accumulated.
Operation *ScanOp::prepareForGradient(OpBuilder &b) {
  ScanOp scan = makeCapturesExplicit(b);
  bool canStack = llvm::all_of(scan.getInits(), [&](Value v) {
    return (int64_t)scan.getAxis() <= cast<RankedTensorType>(v.getType()).getRank();
  });
  if (scan->hasAttr(kSavedCarries) || !canStack)
    return scan;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(scan);
  SmallVector<Type> types(scan.getResultTypes());
  for (Value init : scan.getInits())
    types.push_back(scan.getStackedType(init.getType()));
  auto saved = b.create<ScanOp>(scan.getLoc(), types, scan.getInits(), scan.getXs(),
                                scan.getConsts(), scan.getAxisAttr(), scan.getReverseAttr(),
                                scan.getLengthAttr());
  saved.getBody().takeBody(scan.getBody());
  auto yield = cast<YieldOp>(saved.getBodyBlock().getTerminator());
  SmallVector<Value> values(yield.getValues());
  values.append(saved.getCarryArgs().begin(), saved.getCarryArgs().end());
  yield->setOperands(values);
  saved->setAttr(kSavedCarries, b.getUnitAttr());
  scan.replaceAllUsesWith(saved.getResults().take_front(scan.getNumResults()));
  scan.erase();
  return saved;
}

// Back-propagation through time: a scan in the opposite direction carrying the gradient of
// the carried values and the accumulated gradients of the (float) consts. Each step
// recomputes the forward body from the saved carry and applies the body ops' rules.
LogicalResult ScanOp::buildGradient(OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  if (!(*this)->hasAttr(kSavedCarries))
    return emitOpError("cannot be differentiated: its carried values of rank < axis ")
           << getAxis() << " cannot be saved per step";
  Location l = getLoc();
  unsigned n = getInits().size(), m = getXs().size(), p = getConsts().size();
  unsigned q = getResults().size() - 2 * n; // per-step outputs, without the saved carries
  ValueRange saved = getResults().take_back(n);
  ValueRange finalGrads = grads.take_front(n), stepGrads = grads.slice(n, q);

  SmallVector<unsigned> floatConsts;
  for (unsigned i = 0; i < p; ++i)
    if (isFloat(getConsts()[i].getType()))
      floatConsts.push_back(i);

  // Operands of the backward scan.
  SmallVector<Value> inits(finalGrads);
  for (unsigned i : floatConsts)
    inits.push_back(zerosOf(b, l, getConsts()[i].getType()));
  SmallVector<Value> xs(saved);
  xs.append(getXs().begin(), getXs().end());
  xs.append(stepGrads.begin(), stepGrads.end());
  SmallVector<Type> resultTypes;
  for (Value v : inits)
    resultTypes.push_back(v.getType());
  for (Value x : getXs())
    resultTypes.push_back(x.getType());
  auto bwd = b.create<ScanOp>(l, resultTypes, inits, xs, getConsts(), getAxisAttr(),
                              getReverse() ? UnitAttr() : b.getUnitAttr(), getLengthAttr());

  // Its body: (dcarry..., dconst_acc..., carry_t..., x_t..., dy_t..., const...).
  SmallVector<Type> argTypes;
  for (Value v : inits)
    argTypes.push_back(v.getType());
  for (BlockArgument a : getCarryArgs())
    argTypes.push_back(a.getType());
  for (BlockArgument a : getStepArgs())
    argTypes.push_back(a.getType());
  for (Value y : getBodyBlock().getTerminator()->getOperands().slice(n, q))
    argTypes.push_back(y.getType());
  for (BlockArgument a : getConstArgs())
    argTypes.push_back(a.getType());
  SmallVector<Location> locs(argTypes.size(), l);
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&bwd.getBody(), {}, argTypes, locs);
  ValueRange args = body->getArguments();
  ValueRange dCarry = args.take_front(n), dConstAcc = args.slice(n, floatConsts.size());
  ValueRange carryT = args.slice(n + floatConsts.size(), n);
  ValueRange xT = args.slice(n + floatConsts.size() + n, m);
  ValueRange dyT = args.slice(n + floatConsts.size() + n + m, q);
  ValueRange constArgs = args.take_back(p);

  // Recompute the step.
  IRMapping map;
  map.map(getCarryArgs(), carryT);
  map.map(getStepArgs(), xT);
  map.map(getConstArgs(), constArgs);
  SmallVector<Operation *> recomputed;
  for (Operation &op : getBodyBlock().without_terminator())
    recomputed.push_back(b.clone(op, map));
  ValueRange yielded = getBodyBlock().getTerminator()->getOperands();
  SmallVector<std::pair<Value, Value>> seeds;
  for (unsigned i = 0; i < n; ++i)
    seeds.push_back({map.lookupOrDefault(yielded[i]), dCarry[i]});
  for (unsigned j = 0; j < q; ++j)
    seeds.push_back({map.lookupOrDefault(yielded[n + j]), dyT[j]});

  SmallVector<Value> wrt(carryT);
  wrt.append(xT.begin(), xT.end());
  wrt.append(constArgs.begin(), constArgs.end());
  recomputed = mlir::attn::prepareForGradient(b, recomputed, wrt);
  auto stepGradsOrFail = buildBackward(b, recomputed, seeds, wrt);
  if (failed(stepGradsOrFail))
    return failure();
  ArrayRef<Value> g = *stepGradsOrFail;
  auto orZeros = [&](Value grad, Value like) {
    return grad ? grad : zerosOf(b, l, like.getType());
  };
  SmallVector<Value> yields;
  for (unsigned i = 0; i < n; ++i)
    yields.push_back(orZeros(g[i], carryT[i]));
  for (auto [k, i] : llvm::enumerate(floatConsts)) {
    Value gk = g[n + m + i]; // wrt = carries (n), step inputs (m), consts (p)
    yields.push_back(gk ? b.create<AddOp>(l, dConstAcc[k], gk).getResult() : dConstAcc[k]);
  }
  for (unsigned j = 0; j < m; ++j)
    yields.push_back(orZeros(g[n + j], xT[j]));
  b.create<YieldOp>(l, yields);

  // Gradients of the forward scan's operands: inits, xs, consts.
  for (unsigned i = 0; i < n; ++i)
    out.push_back(bwd.getResult(i));
  for (unsigned j = 0; j < m; ++j)
    out.push_back(bwd.getResult(n + floatConsts.size() + j));
  unsigned next = 0;
  for (unsigned i = 0; i < p; ++i)
    out.push_back(next < floatConsts.size() && floatConsts[next] == i
                      ? bwd.getResult(n + next++)
                      : Value());
  return success();
}

//===- lstm_cell, gru_cell ---------------------------------------------------------------===//

LogicalResult LstmCellOp::buildGradient(OpBuilder &b, ValueRange grads,
                                        SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}

LogicalResult GruCellOp::buildGradient(OpBuilder &b, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}

//===- rnn, gru, lstm ----------------------------------------------------------------------===//

// A sequence op's gradient is its backward op (oneDNN's RNN backward): it takes the forward's
// operands, results and result gradients. The forward is marked `training` first, so that it
// runs in oneDNN's training mode and keeps the workspace the backward reads.
namespace {
template <typename GradOp, typename Op>
LogicalResult buildSequenceGradient(Op op, OpBuilder &b, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  Operation *grad;
  if constexpr (std::is_same_v<Op, LstmOp>) {
    // The builder with named operands: it sets the operand segments the shape rule reads.
    ValueRange r = op->getResults();
    grad = b.create<LstmGradOp>(op.getLoc(), op.getInput(), op.getH0(), op.getC0(), op.getWIh(),
                                op.getWHh(), op.getBias(), r[0], r[1], r[2], grads[0], grads[1],
                                grads[2], op.getWPeephole(), op.getWProj(), op.getMask(),
                                op.getReverse(), /*precision=*/nullptr);
  } else {
    // The forward's operands but the mask, its results and their gradients, then the mask.
    SmallVector<Value> operands(op->getOperands());
    if (op.getMask())
      operands.pop_back();
    operands.append(op->getResults().begin(), op->getResults().end());
    operands.append(grads.begin(), grads.end());
    if (op.getMask())
      operands.push_back(op.getMask());
    grad = b.create<GradOp>(op.getLoc(), operands);
    if (op.getReverse())
      grad->setAttr("reverse", b.getUnitAttr());
  }
  // The backward computes in the forward's precision (its bf16 primitive reads the bf16
  // workspace the forward kept).
  cast<PrecisionOpInterface>(grad).setComputePrecision(op.getComputePrecision());
  // The operands' gradients in the forward's order; the mask (data) has none.
  out.append(grad->getResults().begin(), grad->getResults().end());
  if (op.getMask())
    out.push_back(Value());
  return success();
}
} // namespace

#define ATTN_SEQUENCE_GRADIENT(Op, GradOp)                                                         \
  Operation *Op::prepareForGradient(OpBuilder &b) {                                               \
    setTraining(true);                                                                             \
    return getOperation();                                                                         \
  }                                                                                                \
  LogicalResult Op::buildGradient(OpBuilder &b, ValueRange grads, SmallVectorImpl<Value> &out) { \
    return buildSequenceGradient<GradOp>(*this, b, grads, out);                                   \
  }
ATTN_SEQUENCE_GRADIENT(RnnOp, RnnGradOp)
ATTN_SEQUENCE_GRADIENT(GruOp, GruGradOp)
ATTN_SEQUENCE_GRADIENT(LstmOp, LstmGradOp)
#undef ATTN_SEQUENCE_GRADIENT
