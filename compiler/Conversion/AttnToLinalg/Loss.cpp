// attn-to-linalg, loss family: mse, and cross_entropy with its fused gradient and its count. Logits
// [..., C] are viewed as rows [N, C]; every row reduction is a linalg.generic.
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "compiler/Conversion/AttnToLinalg/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Value reshapeTo(OpBuilder &b, Location l, Value v, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, tensorOf(v).getElementType());
  return type == v.getType() ? v : b.create<ReshapeOp>(l, type, v).getResult();
}

Value expDiff(OpBuilder &b, Location l, ValueRange a) {
  return b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]));
}

// mean((p - t)^2) as one reduction over every element.
struct MseLowering : OpRewritePattern<MseOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MseOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto shape = op.getPrediction().getType().getShape();
    SmallVector<bool> all(shape.size(), true);
    Value sq = elementwise(rewriter, loc, {op.getPrediction(), op.getTarget()}, shape,
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             Value d = b.create<arith::SubFOp>(l, a[0], a[1]);
                             return b.create<arith::MulFOp>(l, d, d);
                           });
    Value sum = reduce(rewriter, loc, sq, all, 0.0f, sumBody);
    Value inv = rewriter.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getF32Type()),
                                    1.0f / (float)op.getPrediction().getType().getNumElements()));
    rewriter.replaceOp(op, elementwise(rewriter, loc, {sum, inv}, {}, mulBody));
    return success();
  }
};

// What the forward and the gradient of cross_entropy share, per row n of logits [N, C]:
// the row max, sum_c exp(x - max), and whether the row's label contributes.
struct Rows {
  Value logits, labels, max, sumExp, valid, count;
  int64_t n, c;
};

Value validLabel(OpBuilder &b, Location l, Value label, int64_t classes, int64_t ignore) {
  auto i32 = b.getI32Type();
  auto cmp = [&](arith::CmpIPredicate p, int64_t v) {
    return b.create<arith::CmpIOp>(l, p, label, b.create<arith::ConstantIntOp>(l, v, i32));
  };
  Value inRange = b.create<arith::AndIOp>(l, cmp(arith::CmpIPredicate::sge, 0),
                                          cmp(arith::CmpIPredicate::slt, classes));
  return b.create<arith::AndIOp>(l, inRange, cmp(arith::CmpIPredicate::ne, ignore));
}

// valid [N]: 1 where label [N] contributes to the loss, else 0.
Value validMask(OpBuilder &b, Location loc, Value labels, int64_t classes, int64_t ignore) {
  int64_t n = tensorOf(labels).getShape()[0];
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{RankedTensorType::get({n}, b.getF32Type())}, ValueRange{labels},
      ValueRange{emptyOf(b, loc, {n})},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(1), b.getMultiDimIdentityMap(1)},
      iterators(1), [&](OpBuilder &nb, Location l, ValueRange args) {
        Value ok = validLabel(nb, l, args[0], classes, ignore);
        nb.create<linalg::YieldOp>(
            l, nb.create<arith::SelectOp>(l, ok, cstF(nb, l, 1.0f), cstF(nb, l, 0.0f)).getResult());
      });
  return generic.getResult(0);
}

Rows rowsOf(OpBuilder &b, Location loc, Value logits, Value labels, int64_t ignore) {
  Rows r;
  auto shape = tensorOf(logits).getShape();
  r.c = shape.back();
  r.n = tensorOf(logits).getNumElements() / r.c;
  r.logits = reshapeTo(b, loc, logits, {r.n, r.c});
  r.labels = reshapeTo(b, loc, labels, {r.n});
  SmallVector<bool> lastAxis = {false, true};
  r.max = reduce(b, loc, r.logits, lastAxis, kNegInf, maxBody);
  Value e = withReduced(b, loc, r.logits, r.max, lastAxis, expDiff);
  r.sumExp = reduce(b, loc, e, lastAxis, 0.0f, sumBody);
  r.valid = validMask(b, loc, r.labels, r.c, ignore);
  r.count = reduce(b, loc, r.valid, {true}, 0.0f, sumBody);
  return r;
}

// count = sum_n valid_n, the denominator of cross_entropy with the same attributes.
struct LabelCountLowering : OpRewritePattern<LabelCountOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LabelCountOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t n = op.getLabels().getType().getNumElements();
    Value labels = reshapeTo(rewriter, loc, op.getLabels(), {n});
    Value valid = validMask(rewriter, loc, labels, op.getClasses(), op.getIgnoreIndex());
    rewriter.replaceOp(op, reduce(rewriter, loc, valid, {true}, 0.0f, sumBody));
    return success();
  }
};

// loss = sum_n valid_n (lse_n - (1 - e) x[n, y_n] - e/C sum_c x[n, c]) / count
struct CrossEntropyLowering : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Rows r = rowsOf(rewriter, loc, op.getLogits(), op.getLabels(), op.getIgnoreIndex());
    float eps = op.getLabelSmoothing().convertToFloat();
    Value sumX = reduce(rewriter, loc, r.logits, {false, true}, 0.0f, sumBody);
    Value logits = r.logits;
    int64_t classes = r.c;
    auto id = rewriter.getMultiDimIdentityMap(1);
    auto perRow = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{RankedTensorType::get({r.n}, rewriter.getF32Type())},
        ValueRange{r.max, r.sumExp, sumX, r.labels, r.valid},
        ValueRange{emptyOf(rewriter, loc, {r.n})}, SmallVector<AffineMap>(6, id), iterators(1),
        [&](OpBuilder &b, Location l, ValueRange a) {
          // x[n, clamp(label)]: an ignored label reads a valid element whose term is masked.
          Value label = b.create<arith::IndexCastOp>(l, b.getIndexType(), a[3]);
          Value lo = b.create<arith::ConstantIndexOp>(l, 0);
          Value hi = b.create<arith::ConstantIndexOp>(l, classes - 1);
          label = b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, label, lo), hi);
          Value row = b.create<linalg::IndexOp>(l, 0);
          Value picked = b.create<tensor::ExtractOp>(l, logits, ValueRange{row, label});
          Value lse = b.create<arith::AddFOp>(l, b.create<math::LogOp>(l, a[1]), a[0]);
          Value loss = b.create<arith::SubFOp>(
              l, lse, b.create<arith::MulFOp>(l, cstF(b, l, 1.0f - eps), picked));
          loss = b.create<arith::SubFOp>(
              l, loss, b.create<arith::MulFOp>(l, cstF(b, l, eps / (float)classes), a[2]));
          b.create<linalg::YieldOp>(l, b.create<arith::MulFOp>(l, loss, a[4]).getResult());
        });
    Value total = reduce(rewriter, loc, perRow.getResult(0), {true}, 0.0f, sumBody);
    rewriter.replaceOp(op, elementwise(rewriter, loc, {total, r.count}, {},
                                       [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                         // No contributing position: the loss is 0.
                                         Value denom = b.create<arith::MaximumFOp>(
                                             l, a[1], cstF(b, l, 1.0f));
                                         return b.create<arith::DivFOp>(l, a[0], denom);
                                       }));
    return success();
  }
};

// d[n, c] = valid_n g (softmax(x)[n, c] - q[n, c]) / count, q the smoothed one-hot target.
struct CrossEntropyGradLowering : OpRewritePattern<CrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyGradOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Rows r = rowsOf(rewriter, loc, op.getLogits(), op.getLabels(), op.getIgnoreIndex());
    float eps = op.getLabelSmoothing().convertToFloat();
    int64_t classes = r.c;
    MLIRContext *ctx = rewriter.getContext();
    auto full = rewriter.getMultiDimIdentityMap(2);
    auto row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    auto scalar = AffineMap::get(2, 0, {}, ctx);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{RankedTensorType::get({r.n, r.c}, rewriter.getF32Type())},
        ValueRange{r.logits, r.max, r.sumExp, r.labels, r.valid, r.count, op.getGrad()},
        ValueRange{emptyOf(rewriter, loc, {r.n, r.c})},
        SmallVector<AffineMap>{full, row, row, row, row, scalar, scalar, full}, iterators(2),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value p = b.create<arith::DivFOp>(
              l, b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1])), a[2]);
          Value c = b.create<arith::IndexCastOp>(l, b.getI32Type(), b.create<linalg::IndexOp>(l, 1));
          Value isLabel = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, c, a[3]);
          Value q = b.create<arith::SelectOp>(l, isLabel, cstF(b, l, 1.0f - eps + eps / classes),
                                              cstF(b, l, eps / classes));
          Value scale = b.create<arith::DivFOp>(
              l, b.create<arith::MulFOp>(l, a[6], a[4]),
              b.create<arith::MaximumFOp>(l, a[5], cstF(b, l, 1.0f)));
          b.create<linalg::YieldOp>(
              l, b.create<arith::MulFOp>(l, scale, b.create<arith::SubFOp>(l, p, q)).getResult());
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, generic.getResult(0),
                                     op.getType().getShape()));
    return success();
  }
};
} // namespace

void mlir::attn::linalg_lowering::populateLossPatterns(RewritePatternSet &patterns) {
  patterns.add<MseLowering, CrossEntropyLowering, CrossEntropyGradLowering, LabelCountLowering>(
      patterns.getContext());
}
