// Gradient rules (vector-Jacobian products) of the core ops (ops/Core.td), written in attn
// ops. `g` is the gradient of the op's result; each rule appends one gradient per operand.
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
using Grads = SmallVectorImpl<Value>;

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Value mul(OpBuilder &b, Location l, Value x, Value y) { return b.create<MulOp>(l, x, y); }
Value sub(OpBuilder &b, Location l, Value x, Value y) { return b.create<SubOp>(l, x, y); }
Value div(OpBuilder &b, Location l, Value x, Value y) { return b.create<DivOp>(l, x, y); }
Value reshape(OpBuilder &b, Location l, Value v, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, tensorOf(v).getElementType());
  return type == v.getType() ? v : b.create<ReshapeOp>(l, type, v).getResult();
}
// op(x) x op(y). A product over a contraction of size 1 is an outer product: a broadcast
// multiply rather than a matrix-multiply call with K = 1 (attention's gradients make many,
// e.g. the weights [B, S, 1] times the context's gradient [B, 1, D]). `precision`: the forward
// product's (attn-precision), so that a bf16 product's backward is bf16 products too.
Value matmul(OpBuilder &b, Location l, Value x, Value y, bool tx, bool ty,
             PrecisionAttr precision) {
  auto xs = tensorOf(x).getShape(), ys = tensorOf(y).getShape();
  int64_t k = tx ? xs[xs.size() - 2] : xs.back();
  if (k != 1)
    return b.create<MatmulOp>(l, x, y, b.getBoolAttr(tx), b.getBoolAttr(ty), precision);
  // op(x) as [..., M, 1] and op(y) as [..., 1, N]: with a size-1 dimension a transpose is a
  // reshape.
  SmallVector<int64_t> column(xs.drop_back(2)), row(ys.drop_back(2));
  column.append({tx ? xs.back() : xs[xs.size() - 2], 1});
  row.append({1, ty ? ys[ys.size() - 2] : ys.back()});
  return b.create<MulOp>(l, reshape(b, l, x, column), reshape(b, l, y, row));
}
// Sum over `axes` keeping them as size-1 dims, so the result broadcasts against the input.
Value sumKeep(OpBuilder &b, Location l, Value v, ArrayRef<int64_t> axes) {
  return b.create<ReduceSumOp>(l, v, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
}
// `shape` with `axes` set to 1.
SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> out(shape);
  for (int64_t a : axes)
    out[a] = 1;
  return out;
}
} // namespace

//===- elementwise -----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(sumToType(b, getLoc(), grads[0], getLhs().getType()));
  out.push_back(sumToType(b, getLoc(), grads[0], getRhs().getType()));
  return success();
}

LogicalResult SubOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  out.push_back(sumToType(b, l, grads[0], getLhs().getType()));
  out.push_back(sumToType(b, l, b.create<NegOp>(l, grads[0]), getRhs().getType()));
  return success();
}

LogicalResult MulOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  out.push_back(sumToType(b, l, mul(b, l, grads[0], getRhs()), getLhs().getType()));
  out.push_back(sumToType(b, l, mul(b, l, grads[0], getLhs()), getRhs().getType()));
  return success();
}

// d(l/r) = g/r dl - g (l/r)/r dr
LogicalResult DivOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value g = grads[0];
  out.push_back(sumToType(b, l, div(b, l, g, getRhs()), getLhs().getType()));
  Value dr = b.create<NegOp>(l, div(b, l, mul(b, l, g, getResult()), getRhs()));
  out.push_back(sumToType(b, l, dr, getRhs().getType()));
  return success();
}

// The larger operand takes the gradient; on ties, the right-hand one.
LogicalResult MaximumOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value lhsWins = b.create<StepOp>(l, sub(b, l, getLhs(), getRhs()));
  Value dl = mul(b, l, grads[0], lhsWins);
  out.push_back(sumToType(b, l, dl, getLhs().getType()));
  out.push_back(sumToType(b, l, sub(b, l, grads[0], dl), getRhs().getType()));
  return success();
}

LogicalResult EqOp::buildGradient(OpBuilder &, ValueRange, Grads &out) {
  out.append({Value(), Value()});
  return success();
}

LogicalResult NegOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(b.create<NegOp>(getLoc(), grads[0]));
  return success();
}

// tanh' = 1 - tanh^2, from the result.
LogicalResult TanhOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value y = getResult();
  Value d = sub(b, l, scalarOf(b, l, 1.0f), mul(b, l, y, y));
  out.push_back(mul(b, l, grads[0], d));
  return success();
}

// sigmoid' = y (1 - y)
LogicalResult SigmoidOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value y = getResult();
  Value d = mul(b, l, y, sub(b, l, scalarOf(b, l, 1.0f), y));
  out.push_back(mul(b, l, grads[0], d));
  return success();
}

LogicalResult ReluOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(mul(b, getLoc(), grads[0], b.create<StepOp>(getLoc(), getInput())));
  return success();
}

LogicalResult ExpOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(mul(b, getLoc(), grads[0], getResult()));
  return success();
}

LogicalResult LogOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(div(b, getLoc(), grads[0], getInput()));
  return success();
}

// sqrt' = 1 / (2 sqrt(x))
LogicalResult SqrtOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  out.push_back(div(b, l, mul(b, l, grads[0], scalarOf(b, l, 0.5f)), getResult()));
  return success();
}

// erf' = 2 / sqrt(pi) exp(-x^2)
LogicalResult ErfOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value x = getInput();
  Value d = mul(b, l, b.create<ExpOp>(l, b.create<NegOp>(l, mul(b, l, x, x))),
                scalarOf(b, l, 1.1283791670955126f));
  out.push_back(mul(b, l, grads[0], d));
  return success();
}

// gelu' = Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
LogicalResult GeluOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value x = getInput();
  Value cdf = mul(b, l, b.create<AddOp>(l, scalarOf(b, l, 1.0f),
                                        b.create<ErfOp>(l, mul(b, l, x, scalarOf(b, l, 0.70710678118654752f)))),
                  scalarOf(b, l, 0.5f));
  Value pdf = mul(b, l, b.create<ExpOp>(l, mul(b, l, mul(b, l, x, x), scalarOf(b, l, -0.5f))),
                  scalarOf(b, l, 0.3989422804014327f));
  out.push_back(mul(b, l, grads[0], b.create<AddOp>(l, cdf, mul(b, l, x, pdf))));
  return success();
}

LogicalResult StepOp::buildGradient(OpBuilder &, ValueRange, Grads &out) {
  out.push_back(Value());
  return success();
}

LogicalResult StopGradientOp::buildGradient(OpBuilder &, ValueRange, Grads &out) {
  out.push_back(Value());
  return success();
}

//===- linear algebra ----------------------------------------------------------------------===//

// Quantisation is not differentiable (rounding has a zero gradient almost everywhere).
static constexpr const char *kInt8NotDifferentiable =
    "computes in int8, which is for inference: a program that is differentiated computes in "
    "f32 or bf16";

// C = A' B' with A' = op(A), B' = op(B): dA' = g B'^T and dB' = A'^T g, transposed back where
// the operand was transposed. A shared (rank-2) operand sums over the batch.
LogicalResult MatmulOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value g = grads[0], x = getLhs(), y = getRhs();
  bool tx = getTransposeLhs(), ty = getTransposeRhs();
  PrecisionAttr p = getPrecisionAttr();
  if (getComputePrecision() == Precision::int8)
    return emitOpError(kInt8NotDifferentiable);
  Value dx = tx ? matmul(b, l, y, g, ty, true, p) : matmul(b, l, g, y, false, !ty, p);
  auto xShape = tensorOf(x).getShape(), gShape = tensorOf(g).getShape();
  if (!tx && xShape.size() > 2 && tensorOf(y).getRank() == 2) {
    // A weight shared by every batch (x [..., M, K] x y [K, N]): its gradient is one GEMM
    // over all rows, x2^T g2 with x2 [rows, K] and g2 [rows, N], not a batched product
    // summed afterwards (32 small GEMMs and a reduction for an attention's key projection).
    int64_t k = xShape.back(), n = gShape.back(), rows = tensorOf(x).getNumElements() / k;
    Value x2 = reshape(b, l, x, {rows, k}), g2 = reshape(b, l, g, {rows, n});
    out.push_back(sumToType(b, l, dx, x.getType()));
    out.push_back(ty ? matmul(b, l, g2, x2, true, false, p) : matmul(b, l, x2, g2, true, false, p));
    return success();
  }
  Value dy = ty ? matmul(b, l, g, x, true, tx, p) : matmul(b, l, x, g, !tx, false, p);
  out.push_back(sumToType(b, l, dx, x.getType()));
  out.push_back(sumToType(b, l, dy, y.getType()));
  return success();
}

// y = x W + bias over rows x [M, K] (leading dims flattened).
LogicalResult DenseOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  auto xShape = getInput().getType().getShape();
  int64_t k = xShape.back(), n = getWeight().getType().getShape()[1];
  int64_t rows = getInput().getType().getNumElements() / k;
  Value g2 = reshape(b, l, grads[0], {rows, n});
  Value x2 = reshape(b, l, getInput(), {rows, k});
  PrecisionAttr p = getPrecisionAttr();
  if (getComputePrecision() == Precision::int8)
    return emitOpError(kInt8NotDifferentiable);
  out.push_back(reshape(b, l, matmul(b, l, g2, getWeight(), false, true, p), xShape));
  out.push_back(matmul(b, l, x2, g2, true, false, p));
  if (getBias())
    out.push_back(b.create<ReduceSumOp>(l, g2, b.getDenseI64ArrayAttr({0}), b.getBoolAttr(false)));
  return success();
}

//===- normalisation -----------------------------------------------------------------------===//

// dx = y (g - sum(g y)) along the axis.
LogicalResult SoftmaxOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value y = getResult();
  Value dot = sumKeep(b, l, mul(b, l, grads[0], y), {getPositiveAxis()});
  out.push_back(mul(b, l, y, sub(b, l, grads[0], dot)));
  return success();
}

// With xhat = (x - mean) rstd and dxhat = g gamma:
// dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dgamma = sum(g xhat), dbeta = sum(g).
LogicalResult LayerNormOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  Value x = getInput(), g = grads[0];
  int64_t rank = getType().getRank();
  auto mean = [&](Value v) {
    return b.create<ReduceMeanOp>(l, v, b.getDenseI64ArrayAttr({rank - 1}), b.getBoolAttr(true))
        .getResult();
  };
  Value centered = sub(b, l, x, mean(x));
  Value var = mean(mul(b, l, centered, centered));
  Value eps = scalarOf(b, l, getEpsilon().convertToFloat());
  Value rstd = div(b, l, scalarOf(b, l, 1.0f), b.create<SqrtOp>(l, b.create<AddOp>(l, var, eps)));
  Value xhat = mul(b, l, centered, rstd);
  Value dxhat = mul(b, l, g, getGamma());
  Value inner = sub(b, l, sub(b, l, dxhat, mean(dxhat)), mul(b, l, xhat, mean(mul(b, l, dxhat, xhat))));
  out.push_back(mul(b, l, rstd, inner));
  out.push_back(sumToType(b, l, mul(b, l, g, xhat), getGamma().getType()));
  out.push_back(sumToType(b, l, g, getBeta().getType()));
  return success();
}

//===- reductions --------------------------------------------------------------------------===//

namespace {
// The result gradient with the reduced dims back as size 1, broadcast over the input.
Value spreadBack(OpBuilder &b, Location l, Value g, RankedTensorType input,
                 ArrayRef<int64_t> axes) {
  Value kept = reshape(b, l, g, keptShape(input.getShape(), axes));
  return b.create<BroadcastOp>(l, input, kept);
}
} // namespace

LogicalResult ReduceSumOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(spreadBack(b, getLoc(), grads[0], getInput().getType(), getAxes()));
  return success();
}

LogicalResult ReduceMeanOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  int64_t count = 1;
  for (int64_t a : getAxes())
    count *= getInput().getType().getShape()[a];
  Value g = mul(b, l, grads[0], scalarOf(b, l, 1.0f / (float)count));
  out.push_back(spreadBack(b, l, g, getInput().getType(), getAxes()));
  return success();
}

// Every element equal to the maximum takes the gradient.
LogicalResult ReduceMaxOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  Location l = getLoc();
  auto shape = keptShape(getInput().getType().getShape(), getAxes());
  Value isMax = b.create<EqOp>(l, getInput(), reshape(b, l, getResult(), shape));
  out.push_back(mul(b, l, isMax, reshape(b, l, grads[0], shape)));
  return success();
}

//===- shapes ------------------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(b.create<ReshapeOp>(getLoc(), getInput().getType(), grads[0]));
  return success();
}

LogicalResult TransposeOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  SmallVector<int64_t> inverse(getPerm().size());
  for (auto [i, p] : llvm::enumerate(getPerm()))
    inverse[p] = i;
  out.push_back(b.create<TransposeOp>(getLoc(), grads[0], b.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult ConcatOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  int64_t axis = *normalizeAxis(getAxis(), getType().getRank());
  SmallVector<int64_t> offsets(getType().getRank(), 0);
  for (Value in : getInputs()) {
    auto shape = tensorOf(in).getShape();
    out.push_back(b.create<SliceOp>(getLoc(), grads[0], b.getDenseI64ArrayAttr(offsets),
                                    b.getDenseI64ArrayAttr(shape)));
    offsets[axis] += shape[axis];
  }
  return success();
}

LogicalResult SliceOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  auto in = getInput().getType().getShape();
  SmallVector<int64_t> high;
  for (auto [d, size] : llvm::enumerate(in))
    high.push_back(size - getOffsets()[d] - getSizes()[d]);
  out.push_back(b.create<PadOp>(getLoc(), grads[0], getOffsetsAttr(),
                                b.getDenseI64ArrayAttr(high)));
  return success();
}

LogicalResult PadOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(b.create<SliceOp>(getLoc(), grads[0], getLowAttr(),
                                  b.getDenseI64ArrayAttr(getInput().getType().getShape())));
  return success();
}

LogicalResult BroadcastOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(sumToType(b, getLoc(), grads[0], getInput().getType()));
  return success();
}

LogicalResult EmbeddingOp::buildGradient(OpBuilder &b, ValueRange grads, Grads &out) {
  out.push_back(b.create<EmbeddingGradOp>(getLoc(), getTable().getType(), getIds(), grads[0]));
  out.push_back(Value());
  return success();
}
