// attn-to-onednn, attention family: flash attention becomes calls of the runtime's tiled
// kernels (runtime/cpu/flash_attention.cpp; hand-written loops around oneDNN's sgemm, not
// oneDNN primitives); each fused attention a call of a kernel generated for it
// (AttnToLinalg/Attention.h: loops with its score regions inlined), the same way:
//
//   attn_fused_attention_N(q, k, v, mask[, center], captures..., out, lse[, weights])
//   attn_fused_attention_grad_N(<the op's operands>, dq, dk, dv[, dcenter], dcaptures...)
//   attn_rt_flash_attention(q, k, v, mask, out, lse, causal)
//   attn_rt_flash_attention_backward(q, k, v, mask, out, lse, d_out, d_lse, dq, dk, dv, causal)
#include "compiler/Conversion/AttnToLinalg/Attention.h"
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
    std::string name = freshKernelName(op, "attn_fused_attention");
    linalg_lowering::defineAttentionKernel(rewriter, op, name);
    return callKernel(op, rewriter, name);
  }
};

struct FusedAttentionGradToKernel : OpRewritePattern<FusedAttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    std::string name = freshKernelName(op, "attn_fused_attention_grad");
    linalg_lowering::defineAttentionGradKernel(rewriter, op, name);
    return callKernel(op, rewriter, name);
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
