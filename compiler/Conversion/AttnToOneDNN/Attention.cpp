// attn-to-onednn, attention family. A fused attention whose score is a plain dot product
// (dot, scaled dot: the Transformer's) becomes a call of the runtime's FlashAttention-2
// kernels (runtime/cpu/flash_attention.cpp: tiles of oneDNN sgemm and an online softmax);
// every other one a call of a kernel generated for it (AttnToLinalg/Attention.h: loops with
// its score regions inlined):
//
//   attn_rt_flash_attention[_bf16](q, k, v, mask, out, lse, causal, scale)
//   attn_rt_flash_attention_backward[_bf16](q, k, v, mask, out, lse, d_out, d_lse, dq, dk, dv, causal,
//                                    scale)
//   attn_fused_attention_N(q, k, v, mask[, center], captures..., out, lse[, weights])
//   attn_fused_attention_grad_N(<the op's operands>, dq, dk, dv[, dcenter], dcaptures...)
#include "compiler/Conversion/AttnToLinalg/Attention.h"
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::onednn;

namespace {
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
      return replaceWithKernelCall(op, rewriter, precisionKernel("attn_rt_flash_attention", op),
                                   {op.getCausal()}, {*scale});
    std::string name = freshKernelName(op, "attn_fused_attention");
    linalg_lowering::defineAttentionKernel(rewriter, op, name);
    return replaceWithKernelCall(op, rewriter, name);
  }
};

struct FusedAttentionGradToKernel : OpRewritePattern<FusedAttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionGradOp op, PatternRewriter &rewriter) const override {
    if (std::optional<float> scale = flashScale(op); scale && !op.getWeights())
      return replaceWithKernelCall(op, rewriter,
                                   precisionKernel("attn_rt_flash_attention_backward", op),
                                   {op.getCausal()}, {*scale});
    std::string name = freshKernelName(op, "attn_fused_attention_grad");
    linalg_lowering::defineAttentionGradKernel(rewriter, op, name);
    return replaceWithKernelCall(op, rewriter, name);
  }
};
} // namespace

void mlir::attn::onednn::populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FusedAttentionToKernel, FusedAttentionGradToKernel>(patterns.getContext());
}
