// Scalar code for score regions (see ScoreEmitter.h).
#include "compiler/Conversion/AttnToLinalg/ScoreEmitter.h"
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {
// The value of a constant that the region contract allows: a scalar or a splat row.
float constantValue(ConstantOp c) {
  return cast<DenseElementsAttr>(c.getValue()).getSplatValue<APFloat>().convertToFloat();
}

bool isRow(Value v) { return !score_region::isScalar(v.getType()); }

// The scalar body of an elementwise op of the region (stop_gradient: the identity).
BodyFn bodyOf(Operation *op) {
  if (isa<StopGradientOp>(op))
    return [](OpBuilder &, Location, ValueRange a) { return a[0]; };
  return elementwiseBody(op->getName().getStringRef());
}
} // namespace

void ScoreEmitter::emitScalars(Block &block) {
  for (Operation &op : block.without_terminator()) {
    if (isRow(op.getResult(0)))
      continue; // rows are computed where a loop over d reads them
    if (scalars.contains(op.getResult(0)))
      continue; // bound by the caller (a tile's product q . k)
    Value r;
    if (auto c = dyn_cast<ConstantOp>(op))
      r = cstF(b, loc, constantValue(c));
    else if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
      r = reduce(&op);
    else if (isa<BroadcastOp, ReshapeOp>(op))
      r = scalar(op.getOperand(0));
    else {
      SmallVector<Value> operands;
      for (Value v : op.getOperands())
        operands.push_back(scalar(v));
      r = bodyOf(&op)(b, loc, operands);
    }
    scalars.map(op.getResult(0), r);
  }
}

Value ScoreEmitter::scalar(Value v) {
  Value s = scalars.lookupOrNull(v);
  assert(s && "a scalar of the region used before it was emitted");
  return s;
}

void ScoreEmitter::forEachElement(function_ref<void(Value d)> body) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value end = b.create<arith::ConstantIndexOp>(loc, width);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(loc, zero, end, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  cache.clear();
  body(loop.getInductionVar());
  cache.clear();
}

Value ScoreEmitter::element(Value v, Value d) {
  if (!isRow(v))
    return scalar(v);
  if (auto it = rows.find(v); it != rows.end())
    return it->second(b, loc, d);
  if (Value cached = cache.lookup(v))
    return cached;
  Operation *op = v.getDefiningOp();
  Value r;
  if (auto c = dyn_cast<ConstantOp>(op))
    r = cstF(b, loc, constantValue(c));
  else if (isa<BroadcastOp, ReshapeOp>(op))
    r = element(op->getOperand(0), d);
  else {
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(element(operand, d));
    r = bodyOf(op)(b, loc, operands);
  }
  cache[v] = r;
  return r;
}

Value ScoreEmitter::sum(Value v) {
  return isRow(v) ? fold(v, 0.0f, sumBody) : scalar(v);
}

Value ScoreEmitter::fold(Value row, float init, BodyFn combine) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value end = b.create<arith::ConstantIndexOp>(loc, width);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(loc, zero, end, one, ValueRange{cstF(b, loc, init)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    cache.clear();
    Value x = element(row, loop.getInductionVar());
    b.create<scf::YieldOp>(loc, combine(b, loc, {loop.getRegionIterArgs()[0], x}));
  }
  cache.clear();
  return loop.getResult(0);
}

// A reduction of a row to a scalar (of a scalar: the scalar itself, or its mean / max).
Value ScoreEmitter::reduce(Operation *op) {
  Value input = op->getOperand(0);
  if (!isRow(input))
    return scalar(input);
  if (isa<ReduceSumOp>(op))
    return sum(input);
  if (isa<ReduceMeanOp>(op))
    return b.create<arith::MulFOp>(loc, sum(input), cstF(b, loc, 1.0f / (float)width));
  return fold(input, -std::numeric_limits<float>::infinity(), maxBody);
}
