// attn-to-onednn, core family: matmul and dense become calls of the runtime's kernels
// (runtime/include/attn/kernels.h). The kernels see memref descriptors, so operands can be
// strided views and nothing is copied on the way in.
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
using namespace mlir::attn::onednn;

// Tensor-level reshapes (this pass runs after attn-to-linalg, so no attn.reshape): the
// kernels' forms only merge leading dimensions or add unit ones, which a collapse or an
// expansion always expresses.
Value reshape(PatternRewriter &rewriter, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  auto target = RankedTensorType::get(shape, type.getElementType());
  if (type.getRank() > target.getRank()) {
    auto groups = getReassociationIndicesForReshape(type, target);
    assert(groups && "kernel reshapes merge leading dimensions");
    return rewriter.create<tensor::CollapseShapeOp>(loc, target, v, *groups);
  }
  auto groups = getReassociationIndicesForReshape(target, type);
  assert(groups && "kernel reshapes add or split leading dimensions");
  return rewriter.create<tensor::ExpandShapeOp>(loc, target, v, *groups);
}

// [batch..., R, C] -> [prod(batch), R, C]  (no batch dims: 1)
SmallVector<int64_t> asRank3(ArrayRef<int64_t> shape) {
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  return {batch, shape[shape.size() - 2], shape.back()};
}

// The kernels a pattern calls, whose name says the precision (attn_rt_matmul,
// attn_rt_matmul_bf16, ...): the CPU's, or given ones that take f32 and bf16 products only
// (attn-to-cuda's).
struct Kernels {
  std::string matmul = "attn_rt_matmul", dense = "attn_rt_dense";
  bool int8 = true;
  bool takes(PrecisionOpInterface op) const {
    return int8 || op.getComputePrecision() != Precision::int8;
  }
  std::string matmulFor(PrecisionOpInterface op) const { return precisionKernel(matmul, op); }
  std::string denseFor(PrecisionOpInterface op) const { return precisionKernel(dense, op); }
};

// lhs [batch..., M, K] x rhs [batch..., K, N] -> [resultShape] through
// attn_rt_matmul(a [Ba, M, K], b [Bb, K, N], c [B, M, N], trans_a, trans_b) (_bf16 for a
// bf16 product, whose factors attn-round-bf16-factors made bf16), or `kernels`' matmul.
Value emitMatmul(PatternRewriter &rewriter, const Kernels &kernels, PrecisionOpInterface op,
                 Value lhs, Value rhs, bool transLhs, bool transRhs,
                 ArrayRef<int64_t> resultShape) {
  Location loc = op->getLoc();
  Value a = reshape(rewriter, loc, lhs, asRank3(cast<RankedTensorType>(lhs.getType()).getShape()));
  Value b = reshape(rewriter, loc, rhs, asRank3(cast<RankedTensorType>(rhs.getType()).getShape()));
  auto [buffer, view] = allocKernelResult(rewriter, loc, asRank3(resultShape));
  SmallVector<Value> args{asKernelOperand(rewriter, loc, a), asKernelOperand(rewriter, loc, b),
                          view, rewriter.create<arith::ConstantIntOp>(loc, transLhs, 64),
                          rewriter.create<arith::ConstantIntOp>(loc, transRhs, 64)};
  auto kernel = declareKernel(rewriter, op, kernels.matmulFor(op), ValueRange(args).getTypes());
  rewriter.create<func::CallOp>(loc, kernel, args);
  return reshape(rewriter, loc, asTensor(rewriter, loc, buffer), resultShape);
}

struct MatmulToKernel : OpRewritePattern<MatmulOp> {
  MatmulToKernel(MLIRContext *ctx, Kernels kernels)
      : OpRewritePattern(ctx), kernels(std::move(kernels)) {}
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    if (!kernels.takes(op))
      return failure();
    rewriter.replaceOp(op, emitMatmul(rewriter, kernels, op, op.getLhs(), op.getRhs(),
                                      op.getTransposeLhs(), op.getTransposeRhs(),
                                      op.getType().getShape()));
    return success();
  }
  Kernels kernels;
};

// attn.dense -> attn_rt_dense(x [M, K], w [K, N], bias [N], y [M, N]) (_bf16 for a bf16
// product); without a bias it is a plain matmul.
struct DenseToKernel : OpRewritePattern<DenseOp> {
  DenseToKernel(MLIRContext *ctx, Kernels kernels)
      : OpRewritePattern(ctx), kernels(std::move(kernels)) {}
  LogicalResult matchAndRewrite(DenseOp op, PatternRewriter &rewriter) const override {
    if (!kernels.takes(op))
      return failure();
    Location loc = op.getLoc();
    auto inShape = op.getInput().getType().getShape();
    int64_t rows = 1;
    for (int64_t d : inShape.drop_back())
      rows *= d;
    Value x = reshape(rewriter, loc, op.getInput(), {rows, inShape.back()});
    int64_t n = op.getType().getShape().back();
    Value bias = op.getBias();
    if (!bias && op.getComputePrecision() != Precision::int8) {
      Value y = emitMatmul(rewriter, kernels, op, x, op.getWeight(), false, false, {rows, n});
      rewriter.replaceOp(op, reshape(rewriter, loc, y, op.getType().getShape()));
      return success();
    }
    // int8 has only the dense kernel (a weight to quantise once): a zero bias, which its
    // rescaling pass adds for free.
    if (!bias)
      bias = rewriter.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(RankedTensorType::get({n}, rewriter.getF32Type()), 0.0f));
    auto [buffer, view] = allocKernelResult(rewriter, loc, {rows, n});
    SmallVector<Value> args{asKernelOperand(rewriter, loc, x),
                            asKernelOperand(rewriter, loc, op.getWeight()),
                            asKernelOperand(rewriter, loc, bias), view};
    auto kernel = declareKernel(rewriter, op, kernels.denseFor(op), ValueRange(args).getTypes());
    rewriter.create<func::CallOp>(loc, kernel, args);
    rewriter.replaceOp(op, reshape(rewriter, loc, asTensor(rewriter, loc, buffer),
                                   op.getType().getShape()));
    return success();
  }
  Kernels kernels;
};
} // namespace

void mlir::attn::onednn::populateCorePatterns(RewritePatternSet &patterns) {
  const Kernels kernels; // (an lvalue: add() hands the same argument to both constructors)
  patterns.add<MatmulToKernel, DenseToKernel>(patterns.getContext(), kernels);
}

void mlir::attn::onednn::populateCorePatterns(RewritePatternSet &patterns, StringRef matmul,
                                              StringRef dense) {
  const Kernels kernels{matmul.str(), dense.str(), /*int8=*/false};
  patterns.add<MatmulToKernel, DenseToKernel>(patterns.getContext(), kernels);
}
