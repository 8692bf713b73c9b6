// attn-to-onednn, attention family: the fused attention ops become calls of the runtime's
// fused kernels (runtime/cpu/attention.cpp, flash_attention.cpp; hand-written loops around
// oneDNN's sgemm, not oneDNN primitives):
//
//   attn_rt_additive_attention(q, k, v, mask, h, c, w)
//   attn_rt_additive_attention_backward(q, k, v, mask, h, w, dc, dw, dq, dk, dv, dh)
//   attn_rt_flash_attention(q, k, v, mask, out, lse, causal)
//   attn_rt_flash_attention_backward(q, k, v, mask, out, lse, d_out, d_lse, dq, dk, dv, causal)
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::onednn;

namespace {
// Calls `kernel` on the op's operands, fresh buffers for its results (which replace it) and
// the integers `flags`.
LogicalResult callKernel(Operation *op, PatternRewriter &rewriter, StringRef kernel,
                         ArrayRef<int64_t> flags = {}) {
  Location loc = op->getLoc();
  SmallVector<int64_t> ranks;
  SmallVector<Value> args;
  for (Value v : op->getOperands()) {
    ranks.push_back(cast<RankedTensorType>(v.getType()).getRank());
    args.push_back(asKernelOperand(rewriter, loc, v));
  }
  SmallVector<Value> buffers;
  for (Value r : op->getResults()) {
    auto shape = cast<RankedTensorType>(r.getType()).getShape();
    ranks.push_back(shape.size());
    auto [buffer, view] = allocKernelResult(rewriter, loc, shape);
    buffers.push_back(buffer);
    args.push_back(view);
  }
  for (int64_t flag : flags)
    args.push_back(rewriter.create<arith::ConstantIntOp>(loc, flag, 64));
  auto decl = declareKernel(rewriter, op, kernel, ranks, flags.size());
  rewriter.create<func::CallOp>(loc, decl, args);
  SmallVector<Value> tensors;
  for (Value buffer : buffers)
    tensors.push_back(asTensor(rewriter, loc, buffer));
  rewriter.replaceOp(op, tensors);
  return success();
}

struct FusedAttentionToKernel : OpRewritePattern<FusedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionOp op, PatternRewriter &rewriter) const override {
    return callKernel(op, rewriter, "attn_rt_additive_attention");
  }
};

struct FusedAttentionGradToKernel : OpRewritePattern<FusedAttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    return callKernel(op, rewriter, "attn_rt_additive_attention_backward");
  }
};
struct FlashAttentionToKernel : OpRewritePattern<FlashAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlashAttentionOp op, PatternRewriter &rewriter) const override {
    return callKernel(op, rewriter, "attn_rt_flash_attention", {op.getCausal()});
  }
};

struct FlashAttentionGradToKernel : OpRewritePattern<FlashAttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlashAttentionGradOp op, PatternRewriter &rewriter) const override {
    return callKernel(op, rewriter, "attn_rt_flash_attention_backward", {op.getCausal()});
  }
};
} // namespace

void mlir::attn::onednn::populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FusedAttentionToKernel, FusedAttentionGradToKernel, FlashAttentionToKernel,
               FlashAttentionGradToKernel>(patterns.getContext());
}
