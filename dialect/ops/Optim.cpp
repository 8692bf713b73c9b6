// Verifiers of the optimizer updates (ops/Optim.td). Updates are not differentiable: they
// come after the gradient.
#include "dialect/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

static LogicalResult verifyScalar(Operation *op, Value v, StringRef name) {
  if (cast<RankedTensorType>(v.getType()).getRank() != 0)
    return op->emitOpError("'") << name << "' must be a rank-0 tensor, got " << v.getType();
  return success();
}

LogicalResult SgdUpdateOp::verify() { return verifyScalar(*this, getLr(), "lr"); }

LogicalResult AdamUpdateOp::verify() {
  if (failed(verifyScalar(*this, getLr(), "lr")) ||
      failed(verifyScalar(*this, getStep(), "step")))
    return failure();
  return success();
}
