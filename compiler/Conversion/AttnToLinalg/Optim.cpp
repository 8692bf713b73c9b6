// attn-to-linalg, optimizer family: each update is one elementwise linalg.generic with one
// result per updated tensor, so a parameter and its moments are read and written once.
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "compiler/Conversion/AttnToLinalg/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {
// An elementwise generic over `shape` with `numOutputs` results; rank-0 inputs broadcast.
linalg::GenericOp multiOutput(OpBuilder &b, Location loc, ValueRange inputs,
                              ArrayRef<int64_t> shape, unsigned numOutputs,
                              function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(ctx, tensorOf(in).getShape(), shape));
  SmallVector<Value> outs;
  SmallVector<Type> types;
  for (unsigned i = 0; i < numOutputs; ++i) {
    outs.push_back(emptyOf(b, loc, shape));
    types.push_back(RankedTensorType::get(shape, b.getF32Type()));
    maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  }
  return b.create<linalg::GenericOp>(
      loc, types, inputs, outs, maps, iterators(shape.size()),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(l, body(nb, l, args.take_front(inputs.size())));
      });
}

Value scalarValue(OpBuilder &b, Location l, Value rank0) {
  return b.create<tensor::ExtractOp>(l, rank0, ValueRange{});
}

struct SgdLowering : OpRewritePattern<SgdUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SgdUpdateOp op, PatternRewriter &rewriter) const override {
    float momentum = op.getMomentum().convertToFloat();
    float decay = op.getWeightDecay().convertToFloat();
    auto generic = multiOutput(
        rewriter, op.getLoc(), {op.getParam(), op.getGrad(), op.getVelocity(), op.getLr()},
        op.getParam().getType().getShape(), 2,
        [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
          Value g = b.create<arith::AddFOp>(l, a[1], b.create<arith::MulFOp>(l, cstF(b, l, decay), a[0]));
          Value v = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, cstF(b, l, momentum), a[2]), g);
          Value p = b.create<arith::SubFOp>(l, a[0], b.create<arith::MulFOp>(l, a[3], v));
          return {p, v};
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct AdamLowering : OpRewritePattern<AdamUpdateOp> {
  AdamLowering(MLIRContext *ctx, bool gpu) : OpRewritePattern(ctx), gpu(gpu) {}
  LogicalResult matchAndRewrite(AdamUpdateOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    float beta1 = op.getBeta1().convertToFloat(), beta2 = op.getBeta2().convertToFloat();
    float eps = op.getEpsilon().convertToFloat(), decay = op.getWeightDecay().convertToFloat();
    bool decoupled = op.getDecoupled();
    // Bias corrections 1 - beta^t, and the learning rate. In a GPU kernel beta^t is
    // exp(t ln beta), ln beta a constant: the kernels' exp is attn-expand-math's polynomial,
    // and powf would be libdevice's, which attnc does not link.
    auto scalars = [&](OpBuilder &b, Location l, Value t, Value lr) -> std::array<Value, 3> {
      auto correction = [&](float beta) -> Value {
        Value pow =
            gpu ? b.create<math::ExpOp>(
                       l, b.create<arith::MulFOp>(l, t, cstF(b, l, (float)std::log((double)beta))))
                      .getResult()
                : b.create<math::PowFOp>(l, cstF(b, l, beta), t).getResult();
        return b.create<arith::SubFOp>(l, cstF(b, l, 1.0f), pow);
      };
      return {correction(beta1), correction(beta2), lr};
    };
    // On the CPU, computed once per call, not per element. A GPU program computes them in
    // the kernel from the rank-0 step and rate: read on the host, they would make the host
    // wait for the whole backward before it queued the update.
    SmallVector<Value> inputs = {op.getParam(), op.getGrad(), op.getM(), op.getV()};
    std::array<Value, 3> once;
    if (gpu)
      inputs.append({op.getStep(), op.getLr()});
    else
      once = scalars(rewriter, loc, scalarValue(rewriter, loc, op.getStep()),
                     scalarValue(rewriter, loc, op.getLr()));
    auto generic = multiOutput(
        rewriter, loc, inputs, op.getParam().getType().getShape(), 3,
        [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
          auto mulF = [&](Value x, Value y) { return b.create<arith::MulFOp>(l, x, y).getResult(); };
          auto addF = [&](Value x, Value y) { return b.create<arith::AddFOp>(l, x, y).getResult(); };
          auto [bc1, bc2, lr] = gpu ? scalars(b, l, a[4], a[5]) : once;
          Value p = a[0], g = a[1];
          if (!decoupled && decay != 0.0f)
            g = addF(g, mulF(cstF(b, l, decay), p));
          Value m = addF(mulF(cstF(b, l, beta1), a[2]), mulF(cstF(b, l, 1.0f - beta1), g));
          Value v = addF(mulF(cstF(b, l, beta2), a[3]), mulF(cstF(b, l, 1.0f - beta2), mulF(g, g)));
          Value mhat = b.create<arith::DivFOp>(l, m, bc1);
          Value vhat = b.create<arith::DivFOp>(l, v, bc2);
          Value denom = addF(b.create<math::SqrtOp>(l, vhat), cstF(b, l, eps));
          Value step = mulF(lr, b.create<arith::DivFOp>(l, mhat, denom));
          if (decoupled && decay != 0.0f)
            step = addF(step, mulF(mulF(lr, cstF(b, l, decay)), p));
          return {b.create<arith::SubFOp>(l, p, step).getResult(), m, v};
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
  bool gpu;
};
} // namespace

void mlir::attn::linalg_lowering::populateOptimPatterns(RewritePatternSet &patterns, bool gpu) {
  patterns.add<SgdLowering>(patterns.getContext());
  patterns.add<AdamLowering>(patterns.getContext(), gpu);
}
