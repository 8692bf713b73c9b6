// attn-to-onednn, attention family. A fused attention whose score is a plain dot product
// (dot, scaled dot: the Transformer's) becomes a call of the runtime's FlashAttention-2
// kernels (runtime/cpu/flash_attention.cpp: tiles of oneDNN sgemm and an online softmax);
// every other one a call of a kernel generated for it (AttnToLinalg/Attention.h: loops with
// its score regions inlined):
//
//   attn_rt_flash_attention(q, k, v, mask, out, lse, causal, scale)
//   attn_rt_flash_attention_backward(q, k, v, mask, out, lse, d_out, d_lse, dq, dk, dv, causal,
//                                    scale)
//   attn_fused_attention_N(q, k, v, mask[, center], captures..., out, lse[, weights])
//   attn_fused_attention_grad_N(<the op's operands>, dq, dk, dv[, dcenter], dcaptures...)
#include "compiler/Conversion/AttnToLinalg/Attention.h"
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::onednn;

namespace {
// Calls `kernel` on the op's operands, fresh buffers for its results (which replace it), the
// integers `flags` and the floats `scalars`.
LogicalResult callKernel(Operation *op, PatternRewriter &rewriter, StringRef kernel,
                         ArrayRef<int64_t> flags = {}, ArrayRef<float> scalars = {}) {
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
  for (float scalar : scalars)
    args.push_back(
        rewriter.create<arith::ConstantFloatOp>(loc, APFloat(scalar), rewriter.getF32Type()));
  auto decl = declareKernel(rewriter, op, kernel, ranks, flags.size(), scalars.size());
  rewriter.create<func::CallOp>(loc, decl, args);
  SmallVector<Value> tensors;
  for (Value buffer : buffers)
    tensors.push_back(asTensor(rewriter, loc, buffer));
  rewriter.replaceOp(op, tensors);
  return success();
}

// The scale c of a fused attention the FlashAttention-2 kernels compute: a score
// c * sum(q * k) and nothing else (no centre, window, Gaussian, captures, mask region or
// weights), so that the operands are exactly (q, k, v, mask[, out, lse, d_out, d_lse]).
template <typename Op> std::optional<float> flashScale(Op op) {
  if (op.getCenter() || op.getWindow() || op.getGaussian() || !op.getCaptures().empty() ||
      !op.getMask().empty())
    return std::nullopt;
  return score_region::dotProductScale(op.getScore().front());
}

// A name `<base>_<n>` no symbol of `op`'s module has yet.
std::string freshKernelName(Operation *op, StringRef base) {
  auto module = op->getParentOfType<ModuleOp>();
  std::string name;
  for (int n = 0; name.empty() || module.lookupSymbol(name); ++n)
    name = (base + "_" + std::to_string(n)).str();
  return name;
}

struct FusedAttentionToKernel : OpRewritePattern<FusedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionOp op, PatternRewriter &rewriter) const override {
    if (std::optional<float> scale = flashScale(op); scale && !op.getWithWeights())
      return callKernel(op, rewriter, "attn_rt_flash_attention", {op.getCausal()}, {*scale});
    std::string name = freshKernelName(op, "attn_fused_attention");
    linalg_lowering::defineAttentionKernel(rewriter, op, name);
    return callKernel(op, rewriter, name);
  }
};

struct FusedAttentionGradToKernel : OpRewritePattern<FusedAttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    if (std::optional<float> scale = flashScale(op); scale && !op.getWeights())
      return callKernel(op, rewriter, "attn_rt_flash_attention_backward", {op.getCausal()},
                        {*scale});
    std::string name = freshKernelName(op, "attn_fused_attention_grad");
    linalg_lowering::defineAttentionGradKernel(rewriter, op, name);
    return callKernel(op, rewriter, name);
  }
};
} // namespace

void mlir::attn::onednn::populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FusedAttentionToKernel, FusedAttentionGradToKernel>(patterns.getContext());
}
