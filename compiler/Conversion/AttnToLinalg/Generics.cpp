#include "compiler/Conversion/AttnToLinalg/Generics.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn::linalg_lowering {

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Value emptyOf(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  return b.create<tensor::EmptyOp>(loc, shape, b.getF32Type());
}

Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, float value) {
  Value cst = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(value));
  return b.create<linalg::FillOp>(loc, cst, emptyOf(b, loc, shape)).getResult(0);
}

SmallVector<utils::IteratorType> iterators(int64_t rank, ArrayRef<bool> reduced) {
  SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
  for (auto [i, r] : llvm::enumerate(reduced))
    if (r)
      its[i] = utils::IteratorType::reduction;
  return its;
}

// Map from the iteration space of `outShape` to an operand of `inShape` under NumPy
// broadcasting: trailing dims align, a size-1 dim against a larger one reads index 0.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape) {
  SmallVector<AffineExpr> exprs;
  int64_t lead = outShape.size() - inShape.size();
  for (auto [j, d] : llvm::enumerate(inShape)) {
    int64_t i = j + lead;
    exprs.push_back(d == 1 && outShape[i] != 1 ? getAffineConstantExpr(0, ctx)
                                               : getAffineDimExpr(i, ctx));
  }
  return AffineMap::get(outShape.size(), 0, exprs, ctx);
}

// Map from a rank-`rank` iteration space to a tensor that lacks the `reduced` dims.
AffineMap dropDimsMap(MLIRContext *ctx, ArrayRef<bool> reduced) {
  SmallVector<AffineExpr> exprs;
  for (auto [i, r] : llvm::enumerate(reduced))
    if (!r)
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(reduced.size(), 0, exprs, ctx);
}

SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape, ArrayRef<bool> reduced) {
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape))
    if (!reduced[i])
      out.push_back(d);
  return out;
}

// out[i...] = body(inputs[broadcast(i)]...) over the iteration space `outShape`.
Value elementwise(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> outShape,
                  BodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(ctx, tensorOf(in).getShape(), outShape));
  maps.push_back(b.getMultiDimIdentityMap(outShape.size()));
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{RankedTensorType::get(outShape, b.getF32Type())}, inputs,
      ValueRange{emptyOf(b, loc, outShape)}, maps, iterators(outShape.size()),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args.drop_back()));
      });
  return generic.getResult(0);
}

// Reduces `input` over the `reduced` dims with `combine(element, accumulator)`, starting
// from `init`; the result drops the reduced dims.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<bool> reduced, float init,
             BodyFn combine) {
  MLIRContext *ctx = b.getContext();
  auto shape = tensorOf(input).getShape();
  SmallVector<int64_t> outShape = dropDims(shape, reduced);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(shape.size()),
                                 dropDimsMap(ctx, reduced)};
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{RankedTensorType::get(outShape, b.getF32Type())}, ValueRange{input},
      ValueRange{filled(b, loc, outShape, init)}, maps, iterators(shape.size(), reduced),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, combine(nb, nloc, args));
      });
  return generic.getResult(0);
}

// body(x, r) over x's shape where r lacks the `reduced` dims (broadcast back).
Value withReduced(OpBuilder &b, Location loc, ValueRange full, Value reducedValue,
                  ArrayRef<bool> reduced, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  auto shape = tensorOf(full[0]).getShape();
  SmallVector<Value> inputs(full);
  inputs.push_back(reducedValue);
  SmallVector<AffineMap> maps(full.size(), b.getMultiDimIdentityMap(shape.size()));
  maps.push_back(dropDimsMap(ctx, reduced));
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{RankedTensorType::get(shape, b.getF32Type())}, inputs,
      ValueRange{emptyOf(b, loc, shape)}, maps, iterators(shape.size()),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args.drop_back()));
      });
  return generic.getResult(0);
}

Value cstF(OpBuilder &b, Location loc, float v) {
  return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(v));
}

Value addBody(OpBuilder &b, Location l, ValueRange a) { return b.create<arith::AddFOp>(l, a[0], a[1]); }
Value subBody(OpBuilder &b, Location l, ValueRange a) { return b.create<arith::SubFOp>(l, a[0], a[1]); }
Value mulBody(OpBuilder &b, Location l, ValueRange a) { return b.create<arith::MulFOp>(l, a[0], a[1]); }
Value divBody(OpBuilder &b, Location l, ValueRange a) { return b.create<arith::DivFOp>(l, a[0], a[1]); }
Value maxBody(OpBuilder &b, Location l, ValueRange a) { return b.create<arith::MaximumFOp>(l, a[0], a[1]); }
// Sums of reductions may be reassociated: that is what lets LLVM vectorize them.
Value sumBody(OpBuilder &b, Location l, ValueRange a) {
  return b.create<arith::AddFOp>(l, a[0], a[1], arith::FastMathFlags::reassoc);
}
// 1 where `pred` holds, else 0.
Value indicator(OpBuilder &b, Location l, arith::CmpFPredicate pred, Value x, Value y) {
  Value c = b.create<arith::CmpFOp>(l, pred, x, y);
  return b.create<arith::SelectOp>(l, c, cstF(b, l, 1.0f), cstF(b, l, 0.0f));
}

} // namespace mlir::attn::linalg_lowering
