// Reverse-mode differentiation over attn ops: the driver that applies each op's gradient rule
// (DifferentiableOpInterface), and the helpers those rules share. The attn-autodiff pass
// runs it on a whole function; attn.scan's rule runs it on its body.
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <utility>

namespace mlir::attn {

/// Lets every op of `ops` that is on a path from `wrt` rewrite itself for its gradient rule
/// (DifferentiableOpInterface::prepareForGradient). Returns the ops, replaced where they
/// were rewritten.
SmallVector<Operation *> prepareForGradient(OpBuilder &b, ArrayRef<Operation *> ops,
                                            ArrayRef<Value> wrt);

/// Builds, at `b`'s insertion point, the backward pass of `ops` (in program order, all in one
/// block) seeded with the cotangents `seeds` (accumulated when a value is seeded twice).
/// Returns the cotangent of each value of `wrt`, null where no gradient reached it. Fails,
/// naming the op, when an op between `wrt` and the seeds has no gradient rule.
FailureOr<SmallVector<Value>> buildBackward(OpBuilder &b, ArrayRef<Operation *> ops,
                                            ArrayRef<std::pair<Value, Value>> seeds,
                                            ArrayRef<Value> wrt);

/// The gradient rule of a composite op: builds its decomposition (DecomposableOpInterface)
/// at `b` and differentiates that. The forward value is recomputed, which is what a cell
/// inside a scan's backward step does anyway.
LogicalResult buildGradientByDecomposition(Operation *op, OpBuilder &b, ValueRange resultGrads,
                                           SmallVectorImpl<Value> &operandGrads);

//===- helpers for gradient rules ------------------------------------------------------===//

/// A zero tensor of `type`.
Value zerosOf(OpBuilder &b, Location loc, Type type);
/// A rank-0 f32 constant.
Value scalarOf(OpBuilder &b, Location loc, float value);
/// The adjoint of NumPy broadcasting: sums `grad` over the dimensions along which a value of
/// `type` was broadcast to grad's shape.
Value sumToType(OpBuilder &b, Location loc, Value grad, Type type);

} // namespace mlir::attn
