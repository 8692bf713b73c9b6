// attn-round-bf16-factors: each factor of the bf16 products rounded to bf16 once, shared by
// every product that reads it (Passes.td has the why).
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNROUNDBF16FACTORS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
// `value` (an f32 tensor) rounded to bf16, elementwise, right after it is defined: the point
// that dominates every reader, so one rounding serves them all, and a loop-invariant value
// (a weight read by a scan's body) is rounded outside the loop.
Value roundToBf16(OpBuilder &b, Value value) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(value);
  Location loc = value.getLoc();
  auto type = cast<RankedTensorType>(value.getType());
  Value init =
      b.create<tensor::EmptyOp>(loc, tensor::getMixedSizes(b, loc, value), b.getBF16Type());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(), utils::IteratorType::parallel);
  auto round = b.create<linalg::GenericOp>(
      loc, init.getType(), value, init, ArrayRef<AffineMap>{identity, identity}, parallel,
      [](OpBuilder &nested, Location loc, ValueRange args) {
        Value bf16 = nested.create<arith::TruncFOp>(loc, nested.getBF16Type(), args[0]);
        nested.create<linalg::YieldOp>(loc, bf16);
      });
  return round.getResult(0);
}

// The bf16 roundings of f32 values, one per value. A reshape or a transpose moves values
// without changing them, so the rounding of its result is the same reshape or transpose of
// its source's rounding: an activation read as [B, T, D] by its layer and as [B T, D] by its
// weight's gradient, or a head's queries read through two transposes, is rounded once. The
// f32 view is left to its other readers, and to dead-code elimination where it has none.
class Roundings {
public:
  explicit Roundings(MLIRContext *ctx) : b(ctx) {}

  Value of(Value value) {
    Value &known = rounded[value];
    if (!known)
      known = make(value);
    return known;
  }

private:
  Value make(Value value) {
    Operation *def = value.getDefiningOp();
    auto bf16Type = [&](Value v) {
      return RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(), b.getBF16Type());
    };
    OpBuilder::InsertionGuard guard(b);
    if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
      Value source = of(collapse.getSrc());
      b.setInsertionPointAfter(collapse);
      return b.create<tensor::CollapseShapeOp>(collapse.getLoc(), bf16Type(value), source,
                                               collapse.getReassociationIndices());
    }
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
      Value source = of(expand.getSrc());
      b.setInsertionPointAfter(expand);
      return b.create<tensor::ExpandShapeOp>(expand.getLoc(), bf16Type(value), source,
                                             expand.getReassociation(), expand.getOutputShape(),
                                             expand.getStaticOutputShape());
    }
    if (auto transpose = dyn_cast_or_null<linalg::TransposeOp>(def)) {
      Value source = of(transpose.getInput());
      b.setInsertionPointAfter(transpose);
      Location loc = transpose.getLoc();
      Value init =
          b.create<tensor::EmptyOp>(loc, tensor::getMixedSizes(b, loc, value), b.getBF16Type());
      return b.create<linalg::TransposeOp>(loc, source, init, transpose.getPermutation())
          .getResult()[0];
    }
    return roundToBf16(b, value);
  }

  OpBuilder b;
  DenseMap<Value, Value> rounded;
};

struct RoundBf16Factors : mlir::attn::impl::AttnRoundBf16FactorsBase<RoundBf16Factors> {
  void runOnOperation() override {
    SmallVector<PrecisionOpInterface> products;
    getOperation()->walk([&](PrecisionOpInterface op) {
      if (op.getComputePrecision() == Precision::bf16)
        products.push_back(op);
    });
    Roundings roundings(&getContext());
    for (PrecisionOpInterface product : products)
      for (OpOperand *factor : product.getBf16Factors())
        if (cast<RankedTensorType>(factor->get().getType()).getElementType().isF32())
          factor->set(roundings.of(factor->get()));
  }
};
} // namespace
