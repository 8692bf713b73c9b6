// attn-to-cuda: the ops the GPU's runtime kernels compute become calls of the runtime's CUDA
// entry points (attn/cuda/Offload.h), with the CPU kernels' signatures, so that the op's
// operands and results are the same memrefs:
//
//   attn_rt_cuda_matmul / _dense                  f32 products (cuBLASLt)
//   attn_rt_cuda_flash_attention[_backward]       dot-product attention (FlashAttention-2)
//   attn_rt_cuda_rnn_forward / _backward          recurrent layers (the GPU's sequence loop)
//
// Every other fused attention (another score, head dim, a window, read weights) becomes a
// call of a kernel generated for it in its GPU form (AttnToLinalg/Attention.h: gpu.launch
// ops of one thread per row, the score regions inlined):
//
//   attn_fused_attention_N(q, k, v, mask[, center], captures..., out, lse[, weights])
//   attn_fused_attention_grad_N(<the op's operands>, dq, dk, dv[, dcenter], dcaptures...)
//
// Without `runtime-kernels` (--device cuda-on-cpu) only those are built, and the CPU's
// kernels stand in for the runtime's. Everything else is left for attn-to-onednn.
#include "attn/Names.h"
#include "compiler/Conversion/AttnToLinalg/Attention.h"
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOCUDA
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

// Why the GPU kernels cannot compute `op`, or "" (they are built for head dims 64 and 128,
// with values as wide as the keys).
template <typename Op> std::string whyNotOnGpu(Op op) {
  bool readsWeights;
  if constexpr (std::is_same_v<Op, FusedAttentionOp>)
    readsWeights = op.getWithWeights();
  else
    readsWeights = static_cast<bool>(op.getWeights());
  if (readsWeights)
    return "its weights are read (the flash kernels never form them)";
  if (!flashScale(op))
    return "its score is not c * sum(q * k) alone (a capture, window, Gaussian or mask region)";
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto v = cast<RankedTensorType>(op.getValues().getType());
  int64_t d = q.getShape()[3], dv = v.getShape()[3];
  if ((d != 64 && d != 128) || dv != d)
    return "its head dims are " + std::to_string(d) + " (keys) and " + std::to_string(dv) +
           " (values); the GPU kernels take 64 or 128, the same for both";
  return "";
}

// A fused attention the flash kernels do not take: a call of its generated GPU kernel.
template <typename Op> struct ToGeneratedKernel : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    if (whyNotOnGpu(op).empty())
      return failure();
    constexpr bool forward = std::is_same_v<Op, FusedAttentionOp>;
    std::string name =
        onednn::freshKernelName(op, forward ? "attn_fused_attention" : "attn_fused_attention_grad");
    if constexpr (forward)
      linalg_lowering::defineAttentionKernel(rewriter, op, name,
                                             linalg_lowering::KernelForm::GpuLaunch);
    else
      linalg_lowering::defineAttentionGradKernel(rewriter, op, name,
                                                 linalg_lowering::KernelForm::GpuLaunch);
    return onednn::replaceWithKernelCall(op, rewriter, name);
  }
};

template <typename Op> struct ToCudaCall : OpRewritePattern<Op> {
  ToCudaCall(MLIRContext *ctx, StringRef kernel) : OpRewritePattern<Op>(ctx), kernel(kernel) {}
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    if (!whyNotOnGpu(op).empty())
      return failure();
    return onednn::replaceWithKernelCall(op, rewriter, kernel, {op.getCausal()}, {*flashScale(op)});
  }
  std::string kernel;
};

struct AttnToCUDA : mlir::attn::impl::AttnToCUDABase<AttnToCUDA> {
  using AttnToCUDABase::AttnToCUDABase;
  void runOnOperation() override {
    // The remarks first, once per op (the rewrite driver may try an op more than once).
    if (remarks)
      getOperation()->walk([](Operation *op) {
        std::string why;
        if (auto attention = dyn_cast<FusedAttentionOp>(op))
          why = whyNotOnGpu(attention);
        else if (auto grad = dyn_cast<FusedAttentionGradOp>(op))
          why = whyNotOnGpu(grad);
        if (!why.empty())
          op->emitRemark("a generated GPU kernel (a thread per row), not the flash kernels: ")
              << why;
      });
    RewritePatternSet patterns(&getContext());
    patterns.add<ToGeneratedKernel<FusedAttentionOp>, ToGeneratedKernel<FusedAttentionGradOp>>(
        &getContext());
    if (runtimeKernels)
      addRuntimeKernelCalls(patterns);
    // As attn-to-onednn: only the attn ops are rewritten, so that the to_memref / to_tensor
    // pairs around each call reach one-shot bufferization exactly as created.
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    // No match is not a failure: what stays is attn-to-onednn's.
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config);
  }

  void addRuntimeKernelCalls(RewritePatternSet &patterns) {
    const std::string prefix = ::attn::names::kCudaKernelPrefix;
    patterns.add<ToCudaCall<FusedAttentionOp>>(&getContext(), prefix + "flash_attention");
    patterns.add<ToCudaCall<FusedAttentionGradOp>>(&getContext(),
                                                   prefix + "flash_attention_backward");
    onednn::populateRecurrentPatterns(patterns, prefix + "rnn_forward", prefix + "rnn_backward");
    onednn::populateCorePatterns(patterns, prefix + "matmul", prefix + "dense");
  }
};

} // namespace
