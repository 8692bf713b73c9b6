// Shape rules and gradient rules of the losses (ops/Loss.td).
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"

using namespace mlir;
using namespace mlir::attn;

static RankedTensorType scalarType(MLIRContext *ctx) {
  return RankedTensorType::get({}, Float32Type::get(ctx));
}

LogicalResult MseOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                      ValueRange operands, DictionaryAttr, OpaqueProperties,
                                      RegionRange, SmallVectorImpl<Type> &results) {
  if (operands[0].getType() != operands[1].getType())
    return emitOptionalError(loc, "'attn.mse' prediction ", typeStr(operands[0].getType()),
                             " and target ", typeStr(operands[1].getType()),
                             " must have the same shape");
  results.push_back(scalarType(ctx));
  return success();
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                               ValueRange operands, DictionaryAttr,
                                               OpaqueProperties, RegionRange,
                                               SmallVectorImpl<Type> &results) {
  auto logits = cast<RankedTensorType>(operands[0].getType());
  auto labels = cast<RankedTensorType>(operands[1].getType());
  if (logits.getRank() < 1 || logits.getShape().drop_back() != labels.getShape())
    return emitOptionalError(loc, "'attn.cross_entropy' needs logits [..., C] and labels [...], got ",
                             typeStr(logits), " and ", typeStr(labels));
  results.push_back(scalarType(ctx));
  return success();
}

LogicalResult LabelCountOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location>, ValueRange,
                                             DictionaryAttr, OpaqueProperties, RegionRange,
                                             SmallVectorImpl<Type> &results) {
  results.push_back(scalarType(ctx));
  return success();
}

LogicalResult LabelCountOp::verify() {
  if (getClasses() < 1)
    return emitOpError("needs classes >= 1, got ") << getClasses();
  return success();
}

void CrossEntropyGradOp::build(OpBuilder &b, OperationState &state, CrossEntropyOp forward,
                               Value grad) {
  build(b, state, forward.getLogits().getType(), forward.getLogits(), forward.getLabels(), grad,
        forward.getIgnoreIndexAttr(), forward.getLabelSmoothingAttr());
}

// d mean((p - t)^2) = 2 (p - t) / n
LogicalResult MseOp::buildGradient(OpBuilder &b, ValueRange grads, SmallVectorImpl<Value> &out) {
  Location l = getLoc();
  float scale = 2.0f / (float)getPrediction().getType().getNumElements();
  Value diff = b.create<SubOp>(l, getPrediction(), getTarget());
  Value g = b.create<MulOp>(l, grads[0], scalarOf(b, l, scale));
  Value dp = b.create<MulOp>(l, diff, g);
  out.push_back(dp);
  out.push_back(b.create<NegOp>(l, dp));
  return success();
}

LogicalResult CrossEntropyOp::buildGradient(OpBuilder &b, ValueRange grads,
                                            SmallVectorImpl<Value> &out) {
  out.push_back(b.create<CrossEntropyGradOp>(getLoc(), *this, grads[0]));
  out.push_back(Value());
  return success();
}
