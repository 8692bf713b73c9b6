// attn-to-linalg, core family. Every computation becomes a linalg.generic over static
// shapes (so later stages can vectorize it) and every shape op a tensor op.
#include "compiler/Conversion/AttnToLinalg/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

namespace {
using BodyFn = Value (*)(OpBuilder &, Location, ValueRange);

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Value emptyOf(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  return b.create<tensor::EmptyOp>(loc, shape, b.getF32Type());
}

Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, float value) {
  Value cst = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(value));
  return b.create<linalg::FillOp>(loc, cst, emptyOf(b, loc, shape)).getResult(0);
}

SmallVector<utils::IteratorType> iterators(int64_t rank, ArrayRef<bool> reduced = {}) {
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
Value negBody(OpBuilder &b, Location l, ValueRange a) { return b.create<arith::NegFOp>(l, a[0]); }
Value tanhBody(OpBuilder &b, Location l, ValueRange a) { return b.create<math::TanhOp>(l, a[0]); }
Value expBody(OpBuilder &b, Location l, ValueRange a) { return b.create<math::ExpOp>(l, a[0]); }
Value logBody(OpBuilder &b, Location l, ValueRange a) { return b.create<math::LogOp>(l, a[0]); }
Value reluBody(OpBuilder &b, Location l, ValueRange a) {
  return b.create<arith::MaximumFOp>(l, a[0], cstF(b, l, 0.0f));
}
Value sigmoidBody(OpBuilder &b, Location l, ValueRange a) {
  Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, a[0]));
  return b.create<arith::DivFOp>(l, cstF(b, l, 1.0f), b.create<arith::AddFOp>(l, cstF(b, l, 1.0f), e));
}
Value expDiffBody(OpBuilder &b, Location l, ValueRange a) {
  return b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]));
}

// Elementwise ops, matched by name so one pattern serves the whole family.
struct ElementwiseToGeneric : RewritePattern {
  ElementwiseToGeneric(StringRef opName, MLIRContext *ctx, BodyFn body)
      : RewritePattern(opName, 1, ctx), body(body) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    auto shape = tensorOf(op->getResult(0)).getShape();
    rewriter.replaceOp(op, elementwise(rewriter, op->getLoc(), op->getOperands(), shape, body));
    return success();
  }
  BodyFn body;
};

struct SoftmaxToGeneric : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<bool> reduced(op.getType().getRank(), false);
    reduced[op.getPositiveAxis()] = true;
    Value x = op.getInput();
    // Subtracting the max keeps exp in range: softmax is invariant to the shift.
    Value max = reduce(rewriter, loc, x, reduced, -std::numeric_limits<float>::infinity(),
                       maxBody);
    Value e = withReduced(rewriter, loc, x, max, reduced, expDiffBody);
    Value sum = reduce(rewriter, loc, e, reduced, 0.0f, sumBody);
    rewriter.replaceOp(op, withReduced(rewriter, loc, e, sum, reduced, divBody));
    return success();
  }
};

template <typename Op, BodyFn Combine, bool IsMax, bool Mean>
struct ReduceToGeneric : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto shape = op.getInput().getType().getShape();
    SmallVector<bool> reduced(shape.size(), false);
    int64_t count = 1;
    for (int64_t a : op.getAxes()) {
      reduced[a] = true;
      count *= shape[a];
    }
    float init = IsMax ? -std::numeric_limits<float>::infinity() : 0.0f;
    Value r = reduce(rewriter, loc, op.getInput(), reduced, init, Combine);
    if (Mean) {
      Value n = rewriter.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getF32Type()),
                                      rewriter.getF32FloatAttr((float)count)));
      r = elementwise(rewriter, loc, {r, n}, tensorOf(r).getShape(), divBody);
    }
    if (op.getKeepdims())
      r = rewriter.create<ReshapeOp>(loc, op.getType(), r);
    rewriter.replaceOp(op, r);
    return success();
  }
};
using ReduceSumLowering = ReduceToGeneric<ReduceSumOp, sumBody, false, false>;
using ReduceMeanLowering = ReduceToGeneric<ReduceMeanOp, sumBody, false, true>;
using ReduceMaxLowering = ReduceToGeneric<ReduceMaxOp, maxBody, true, false>;

struct LayerNormToGeneric : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto shape = op.getType().getShape();
    SmallVector<bool> reduced(shape.size(), false);
    reduced.back() = true;
    Value x = op.getInput();
    float inv = 1.0f / (float)shape.back();
    Value mean = reduce(rewriter, loc, x, reduced, 0.0f, sumBody);
    Value invD = rewriter.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getF32Type()),
                                    rewriter.getF32FloatAttr(inv)));
    mean = elementwise(rewriter, loc, {mean, invD}, tensorOf(mean).getShape(), mulBody);
    Value centered = withReduced(rewriter, loc, x, mean, reduced, subBody);
    Value sq = elementwise(rewriter, loc, {centered, centered}, shape, mulBody);
    Value var = reduce(rewriter, loc, sq, reduced, 0.0f, sumBody);
    // rstd = 1 / sqrt(var / D + eps)
    Value eps = rewriter.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getF32Type()),
                                    op.getEpsilonAttr()));
    var = elementwise(rewriter, loc, {var, invD}, tensorOf(var).getShape(), mulBody);
    var = elementwise(rewriter, loc, {var, eps}, tensorOf(var).getShape(), addBody);
    Value rstd = elementwise(rewriter, loc, {var}, tensorOf(var).getShape(),
                             [](OpBuilder &b, Location l, ValueRange a) -> Value {
                               return b.create<math::RsqrtOp>(l, a[0]);
                             });
    Value normed = withReduced(rewriter, loc, centered, rstd, reduced, mulBody);
    Value scaled = elementwise(rewriter, loc, {normed, op.getGamma()}, shape, mulBody);
    rewriter.replaceOp(op, elementwise(rewriter, loc, {scaled, op.getBeta()}, shape, addBody));
    return success();
  }
};

struct ConstantLowering : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

// Row-major reshape of static shapes: collapse to 1-D, expand to the target. Both are views
// after bufferization, so nothing is copied.
struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = op.getInput().getType(), out = op.getType();
    if (in.getRank() == 0 || out.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "rank-0 reshape");
    Value v = op.getInput();
    if (in.getRank() > 1) {
      ReassociationIndices all(in.getRank());
      std::iota(all.begin(), all.end(), 0);
      v = rewriter.create<tensor::CollapseShapeOp>(loc, v, ArrayRef<ReassociationIndices>{all});
    }
    if (out.getRank() > 1) {
      ReassociationIndices all(out.getRank());
      std::iota(all.begin(), all.end(), 0);
      v = rewriter.create<tensor::ExpandShapeOp>(loc, out, v, ArrayRef<ReassociationIndices>{all});
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};

struct TransposeLowering : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    Value init = emptyOf(rewriter, op.getLoc(), op.getType().getShape());
    rewriter.replaceOp(op, rewriter.create<linalg::TransposeOp>(op.getLoc(), op.getInput(),
                                                                init, op.getPerm())
                               ->getResult(0));
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t axis = *normalizeAxis(op.getAxis(), type.getRank());
    Value acc = emptyOf(rewriter, loc, type.getShape());
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    for (Value in : op.getInputs()) {
      auto shape = tensorOf(in).getShape();
      acc = rewriter.create<tensor::InsertSliceOp>(
          loc, in, acc, ValueRange{}, ValueRange{}, ValueRange{}, offsets, shape, strides);
      offsets[axis] += shape[axis];
    }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

struct SliceLowering : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op, PatternRewriter &rewriter) const override {
    SmallVector<int64_t> strides(op.getType().getRank(), 1);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
        op.getOffsets(), op.getSizes(), strides);
    return success();
  }
};

// out[i..., d] = table[clamp(ids[i...]), d]
struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto shape = op.getType().getShape();
    int64_t rank = shape.size();
    int64_t vocab = op.getTable().getType().getShape()[0];
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> idExprs;
    for (int64_t i = 0; i + 1 < rank; ++i)
      idExprs.push_back(getAffineDimExpr(i, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, idExprs, ctx),
                                   rewriter.getMultiDimIdentityMap(rank)};
    Value table = op.getTable();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{op.getType()}, ValueRange{op.getIds()},
        ValueRange{emptyOf(rewriter, loc, shape)}, maps, iterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value id = b.create<arith::IndexCastOp>(l, b.getIndexType(), args[0]);
          Value lo = b.create<arith::ConstantIndexOp>(l, 0);
          Value hi = b.create<arith::ConstantIndexOp>(l, vocab - 1);
          id = b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, id, lo), hi);
          Value d = b.create<linalg::IndexOp>(l, rank - 1);
          b.create<linalg::YieldOp>(l, b.create<tensor::ExtractOp>(l, table, ValueRange{id, d})
                                           .getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};
} // namespace

void mlir::attn::linalg_lowering::populateCorePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  const std::pair<StringRef, BodyFn> elementwiseOps[] = {
      {AddOp::getOperationName(), addBody},         {SubOp::getOperationName(), subBody},
      {MulOp::getOperationName(), mulBody},         {DivOp::getOperationName(), divBody},
      {NegOp::getOperationName(), negBody},         {TanhOp::getOperationName(), tanhBody},
      {SigmoidOp::getOperationName(), sigmoidBody}, {ReluOp::getOperationName(), reluBody},
      {ExpOp::getOperationName(), expBody},         {LogOp::getOperationName(), logBody},
  };
  for (auto [name, body] : elementwiseOps)
    patterns.add<ElementwiseToGeneric>(name, ctx, body);
  patterns.add<SoftmaxToGeneric, ReduceSumLowering, ReduceMeanLowering, ReduceMaxLowering,
               LayerNormToGeneric, ConstantLowering, ReshapeLowering, TransposeLowering,
               ConcatLowering, SliceLowering, EmbeddingLowering>(ctx);
}
