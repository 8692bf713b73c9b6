// attn-to-linalg, core family. Every computation becomes a linalg.generic over static
// shapes (so later stages can vectorize it) and every shape op a tensor op.
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "compiler/Conversion/AttnToLinalg/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {
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
Value sqrtBody(OpBuilder &b, Location l, ValueRange a) { return b.create<math::SqrtOp>(l, a[0]); }
Value erfBody(OpBuilder &b, Location l, ValueRange a) { return b.create<math::ErfOp>(l, a[0]); }
// x (1 + erf(x / sqrt 2)) / 2
Value geluBody(OpBuilder &b, Location l, ValueRange a) {
  Value e = b.create<math::ErfOp>(l, b.create<arith::MulFOp>(l, a[0], cstF(b, l, 0.70710678118654752f)));
  Value half = b.create<arith::MulFOp>(l, a[0], cstF(b, l, 0.5f));
  return b.create<arith::MulFOp>(l, half, b.create<arith::AddFOp>(l, cstF(b, l, 1.0f), e));
}
Value identityBody(OpBuilder &, Location, ValueRange a) { return a[0]; }
Value eqBody(OpBuilder &b, Location l, ValueRange a) {
  return indicator(b, l, arith::CmpFPredicate::OEQ, a[0], a[1]);
}
Value stepBody(OpBuilder &b, Location l, ValueRange a) {
  return indicator(b, l, arith::CmpFPredicate::OGT, a[0], cstF(b, l, 0.0f));
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
    Value v = op.getInput();
    // A single element: rank 0 <-> all-ones shapes, with an empty reassociation.
    if (in.getRank() == 0) {
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, out, v,
                                                         ArrayRef<ReassociationIndices>{});
      return success();
    }
    if (out.getRank() == 0) {
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, out, v,
                                                           ArrayRef<ReassociationIndices>{});
      return success();
    }
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

// out[i..., d] = table[ids[i...], d], or 0 for an id outside the table
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
          // An id outside [0, V) reads a zero vector (and gets no gradient).
          Value id = b.create<arith::IndexCastOp>(l, b.getIndexType(), args[0]);
          Value lo = b.create<arith::ConstantIndexOp>(l, 0);
          Value hi = b.create<arith::ConstantIndexOp>(l, vocab - 1);
          Value inRange = b.create<arith::AndIOp>(
              l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, id, lo),
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sle, id, hi));
          Value safe = b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, id, lo), hi);
          Value d = b.create<linalg::IndexOp>(l, rank - 1);
          Value row = b.create<tensor::ExtractOp>(l, table, ValueRange{safe, d});
          b.create<linalg::YieldOp>(
              l, b.create<arith::SelectOp>(l, inRange, row, cstF(b, l, 0.0f)).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

// Zeros, with the input inserted at offsets `low`.
struct PadLowering : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rewriter) const override {
    auto shape = op.getInput().getType().getShape();
    SmallVector<int64_t> strides(shape.size(), 1);
    Value zeros = filled(rewriter, op.getLoc(), op.getType().getShape(), 0.0f);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(op, op.getInput(), zeros, ValueRange{},
                                                       ValueRange{}, ValueRange{}, op.getLow(),
                                                       shape, strides);
    return success();
  }
};

// Scatter-add as a loop over positions: table[id] += grad[i] for each in-range id.
struct EmbeddingGradLowering : OpRewritePattern<EmbeddingGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingGradOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tableShape = op.getType().getShape();
    int64_t vocab = tableShape[0], dim = tableShape[1];
    int64_t count = op.getIds().getType().getNumElements();
    Value ids = rewriter.create<ReshapeOp>(
        loc, RankedTensorType::get({count}, rewriter.getI32Type()), op.getIds());
    Value grad = rewriter.create<ReshapeOp>(
        loc, RankedTensorType::get({count, dim}, rewriter.getF32Type()), op.getGrad());
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value n = rewriter.create<arith::ConstantIndexOp>(loc, count);
    Value v = rewriter.create<arith::ConstantIndexOp>(loc, vocab);
    auto rowType = RankedTensorType::get({1, dim}, rewriter.getF32Type());
    SmallVector<OpFoldResult> rowSizes = {rewriter.getIndexAttr(1), rewriter.getIndexAttr(dim)};
    SmallVector<OpFoldResult> unit = {rewriter.getIndexAttr(1), rewriter.getIndexAttr(1)};
    auto loop = rewriter.create<scf::ForOp>(
        loc, zero, n, one, ValueRange{filled(rewriter, loc, tableShape, 0.0f)},
        [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
          Value id = b.create<arith::IndexCastOp>(
              l, b.getIndexType(), b.create<tensor::ExtractOp>(l, ids, ValueRange{i}));
          Value inRange = b.create<arith::AndIOp>(
              l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, id, zero),
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, id, v));
          auto ifOp = b.create<scf::IfOp>(
              l, inRange,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<OpFoldResult> src = {i, tb.getIndexAttr(0)};
                SmallVector<OpFoldResult> dst = {id, tb.getIndexAttr(0)};
                Value row = tb.create<tensor::ExtractSliceOp>(tl, rowType, grad, src,
                                                              rowSizes, unit);
                Value cur = tb.create<tensor::ExtractSliceOp>(tl, rowType, acc[0], dst,
                                                              rowSizes, unit);
                Value sum = elementwise(tb, tl, {cur, row}, {1, dim}, addBody);
                tb.create<scf::YieldOp>(tl, tb.create<tensor::InsertSliceOp>(
                                                tl, sum, acc[0], dst, rowSizes, unit)
                                                .getResult());
              },
              [&](OpBuilder &eb, Location el) { eb.create<scf::YieldOp>(el, acc[0]); });
          b.create<scf::YieldOp>(l, ifOp.getResult(0));
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};
} // namespace

namespace {
// The elementwise attn ops and their scalar bodies: one table for the linalg.generics here and
// for the attention kernels generated around score regions (Attention.cpp).
ArrayRef<std::pair<StringRef, BodyFn>> elementwiseTable() {
  static const std::pair<StringRef, BodyFn> table[] = {
      {AddOp::getOperationName(), addBody},         {SubOp::getOperationName(), subBody},
      {MulOp::getOperationName(), mulBody},         {DivOp::getOperationName(), divBody},
      {NegOp::getOperationName(), negBody},         {TanhOp::getOperationName(), tanhBody},
      {SigmoidOp::getOperationName(), sigmoidBody}, {ReluOp::getOperationName(), reluBody},
      {ExpOp::getOperationName(), expBody},         {LogOp::getOperationName(), logBody},
      {SqrtOp::getOperationName(), sqrtBody},       {StepOp::getOperationName(), stepBody},
      {MaximumOp::getOperationName(), maxBody},     {EqOp::getOperationName(), eqBody},
      {ErfOp::getOperationName(), erfBody},         {GeluOp::getOperationName(), geluBody},
      {BroadcastOp::getOperationName(), identityBody},
  };
  return table;
}
} // namespace

BodyFn mlir::attn::linalg_lowering::elementwiseBody(StringRef opName) {
  for (auto [name, body] : elementwiseTable())
    if (name == opName)
      return body;
  return nullptr;
}

void mlir::attn::linalg_lowering::populateCorePatterns(RewritePatternSet &patterns,
                                                       bool embeddingGrad) {
  MLIRContext *ctx = patterns.getContext();
  for (auto [name, body] : elementwiseTable())
    patterns.add<ElementwiseToGeneric>(name, ctx, body);
  patterns.add<SoftmaxToGeneric, ReduceSumLowering, ReduceMeanLowering, ReduceMaxLowering,
               LayerNormToGeneric, ConstantLowering, ReshapeLowering, TransposeLowering,
               ConcatLowering, SliceLowering, EmbeddingLowering, PadLowering>(ctx);
  if (embeddingGrad)
    patterns.add<EmbeddingGradLowering>(ctx);
}
