// Inlines a fused attention's score region (dialect/ops/ScoreRegion.h) into scalar code: the
// body of the attention kernels attn-to-onednn generates (Attention.h). Scalars of the region are emitted in
// program order where the emitter stands; rows ([D]) stay lazy and are computed one element
// at a time inside whatever loop over d needs them (a reduction, or the accumulation of a row
// gradient), so a chain like `v . tanh(q + k)` becomes one loop with no row buffer.
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace mlir::attn::linalg_lowering {

class ScoreEmitter {
public:
  /// Loads element `d` (an index) of a row argument.
  using RowLoad = std::function<Value(OpBuilder &, Location, Value d)>;

  ScoreEmitter(OpBuilder &b, Location loc, int64_t width) : b(b), loc(loc), width(width) {}

  /// A region argument that is a scalar, as the f32 `value`; or a scalar op's result, which
  /// emitScalars then leaves out.
  void bindScalar(Value arg, Value value) { scalars.map(arg, value); }
  /// A region argument that is a row, read through `load`.
  void bindRow(Value arg, RowLoad load) { rows[arg] = std::move(load); }

  /// Emits the scalar ops of `block` (its arguments bound) at the builder's insertion point.
  void emitScalars(Block &block);
  /// The f32 of a scalar region value (after emitScalars).
  Value scalar(Value v);
  /// `for d in [0, width): body(d)`, with a fresh element cache for the loop's body.
  void forEachElement(function_ref<void(Value d)> body);
  /// Element `d` of `v` (a row or a scalar) inside a loop of forEachElement.
  Value element(Value v, Value d);
  /// sum_d element(v, d), as one loop whose adds may be reassociated (vectorised).
  Value sum(Value v);

private:
  Value reduce(Operation *op);
  /// One loop over d: acc = combine(acc, element(row, d)) from `init`.
  Value fold(Value row, float init, Value (*combine)(OpBuilder &, Location, ValueRange));

  OpBuilder &b;
  Location loc;
  int64_t width;
  IRMapping scalars;
  llvm::DenseMap<Value, RowLoad> rows;
  llvm::DenseMap<Value, Value> cache; // elements of the current loop over d
};

} // namespace mlir::attn::linalg_lowering
