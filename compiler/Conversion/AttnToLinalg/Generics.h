// Building blocks of attn-to-linalg's patterns: linalg.generics over static shapes, and the
// scalar bodies shared by several op families.
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::linalg_lowering {

/// The scalar computation of an elementwise generic, from its input elements.
using BodyFn = Value (*)(OpBuilder &, Location, ValueRange);

RankedTensorType tensorOf(Value v);
Value emptyOf(OpBuilder &b, Location loc, ArrayRef<int64_t> shape);
/// A new tensor of `shape` filled with `value`.
Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, float value);
Value cstF(OpBuilder &b, Location loc, float v);

/// Parallel iterators, `reduction` where `reduced` says so.
SmallVector<utils::IteratorType> iterators(int64_t rank, ArrayRef<bool> reduced = {});
/// Map from the iteration space of `outShape` to an operand of `inShape` under NumPy
/// broadcasting: trailing dims align, a size-1 dim against a larger one reads index 0.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape);
/// Map from a rank-`reduced.size()` iteration space to a tensor that lacks the reduced dims.
AffineMap dropDimsMap(MLIRContext *ctx, ArrayRef<bool> reduced);
SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape, ArrayRef<bool> reduced);

/// out[i...] = body(inputs[broadcast(i)]...) over the iteration space `outShape`.
Value elementwise(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> outShape,
                  BodyFn body);
/// Reduces `input` over the `reduced` dims with `combine(element, accumulator)` from `init`;
/// the result drops the reduced dims.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<bool> reduced, float init,
             BodyFn combine);
/// body(full..., r) over full[0]'s shape, where r lacks the `reduced` dims (broadcast back).
Value withReduced(OpBuilder &b, Location loc, ValueRange full, Value reducedValue,
                  ArrayRef<bool> reduced, BodyFn body);

Value addBody(OpBuilder &b, Location l, ValueRange a);
Value subBody(OpBuilder &b, Location l, ValueRange a);
Value mulBody(OpBuilder &b, Location l, ValueRange a);
Value divBody(OpBuilder &b, Location l, ValueRange a);
Value maxBody(OpBuilder &b, Location l, ValueRange a);
/// a[0] + a[1], reassociable: what lets LLVM vectorize the sums of reductions.
Value sumBody(OpBuilder &b, Location l, ValueRange a);
/// The scalar body of the elementwise attn op named `opName` (attn.broadcast: the identity);
/// null for any other op.
BodyFn elementwiseBody(StringRef opName);
/// 1.0 where `pred(x, y)` holds, else 0.0.
Value indicator(OpBuilder &b, Location l, arith::CmpFPredicate pred, Value x, Value y);

} // namespace mlir::attn::linalg_lowering
