// attn-to-onednn, attention family. A fused attention whose score is a plain dot product
// (dot, scaled dot: the Transformer's) becomes a call of the runtime's FlashAttention-2
// kernels (runtime/cpu/flash_attention.cpp: tiles of oneDNN sgemm and an online softmax); one
// whose score is a dot product followed by scalar code (ALiBi, a relative bias, softcapping),
// with or without a mask region of scalar code, a call of the same kernels' _regions form with
// its regions compiled as tile functions (AttnToLinalg/ScoreTiles.h); every other one a call
// of a kernel generated for it (AttnToLinalg/Attention.h: loops with its score regions
// inlined):
//
//   attn_rt_flash_attention[_bf16](q, k, v, mask, out, lse, causal, scale)
//   attn_rt_flash_attention_backward[_bf16](q, k, v, mask, out, lse, d_out, d_lse, dq, dk, dv,
//       causal, scale)
//   attn_rt_flash_attention_regions[_bf16](q, k, v, mask, captures, out, lse, causal, has_mask,
//       window_left, window_right, has_score, scale, @attn_score_tile_N, @attn_mask_tile_N)
//   attn_rt_flash_attention_regions_backward[_bf16](q, k, v, mask, captures, out, lse, d_out,
//       d_lse, dq, dk, dv, d_captures, causal, has_mask, window_left, window_right, has_score,
//       scale, @attn_score_tile_N, @attn_score_grad_tile_N, @attn_mask_tile_N)
//   (captures [1, N], or [H, N] with a per-head capture: the scalar captures, row h head h's;
//   a mask region that is a sliding window (score_region::slidingWindow) is passed as the
//   window's sides, with no mask tile function: the kernels skip and band its tiles from the
//   indices, as they do the causal mask's; a score that is c * sum(q * k), under a mask, is
//   passed as has_score 0 and scale c: the GEMMs scale the products and no score function runs)
//   attn_fused_attention_N(q, k, v, mask[, center], captures..., out, lse[, weights])
//   attn_fused_attention_grad_N(<the op's operands>, dq, dk, dv[, dcenter], dcaptures...)
#include "compiler/Conversion/AttnToLinalg/Attention.h"
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "compiler/Conversion/AttnToLinalg/ScoreTiles.h"
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <numeric>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::onednn;

namespace {
// How many rows of captures the _regions kernels get: one that every head reads, or H when a
// capture is per head (the kernels pass each head its row).
template <typename Op> int64_t captureRows(Op op) {
  for (unsigned n = 0; n < op.getCaptures().size(); ++n)
    if (score_region::isPerHeadCapture(op, n))
      return cast<RankedTensorType>(op.getQuery().getType()).getShape()[1];
  return 1;
}

// The scalar captures as one tensor<rows x N xf32>, the tile functions' captures: row h holds
// head h's element of a per-head capture and the value of every other (a 0 when there are
// none: the kernels take N >= 1).
template <typename Op> Value packCaptures(PatternRewriter &rewriter, Op op) {
  Location loc = op.getLoc();
  ValueRange captures = op.getCaptures();
  int64_t rows = captureRows(op);
  SmallVector<Value> scalars;
  for (int64_t h = 0; h < rows; ++h)
    for (auto [n, c] : llvm::enumerate(captures)) {
      int64_t at = score_region::isPerHeadCapture(op, n) ? h : 0;
      SmallVector<Value> index(cast<RankedTensorType>(c.getType()).getRank(),
                               rewriter.create<arith::ConstantIndexOp>(loc, at));
      scalars.push_back(rewriter.create<tensor::ExtractOp>(loc, c, index));
    }
  if (scalars.empty())
    scalars.push_back(linalg_lowering::cstF(rewriter, loc, 0.0f));
  auto type = RankedTensorType::get({rows, (int64_t)scalars.size() / rows}, rewriter.getF32Type());
  return rewriter.create<tensor::FromElementsOp>(loc, type, scalars);
}

// The window the mask region is, which the kernels take as window_left and window_right;
// nullopt without one (a mask region that is not a window is called as a tile function).
template <typename Op> std::optional<score_region::Window> windowOf(Op op) {
  if (op.getMask().empty())
    return std::nullopt;
  return score_region::slidingWindow(op.getMask().front());
}

// The kernels' has_mask: 0 without a mask region (or with one they apply as a window), 2 when
// it reads a per-head capture (the kernel then classifies tiles per head), else 1.
template <typename Op> int64_t maskKind(Op op) {
  if (op.getMask().empty() || windowOf(op))
    return 0;
  Block &mask = op.getMask().front();
  for (unsigned n = 0; n < op.getCaptures().size(); ++n)
    if (score_region::isPerHeadCapture(op, n) && !mask.getArgument(2 + n).use_empty())
      return 2;
  return 1;
}

// The tile functions of `op`'s score (with its product `dot`) and mask regions; the mask's
// slot holds the score's when there is no mask function (has_mask 0: never called).
template <typename Op>
std::pair<func::FuncOp, func::FuncOp> scoreAndMaskTiles(PatternRewriter &rewriter, Op op,
                                                        Operation *dot) {
  func::FuncOp score = linalg_lowering::defineScoreTile(rewriter, op, op.getScore().front(), dot,
                                                        freshKernelName(op, "attn_score_tile"));
  if (maskKind(op) == 0)
    return {score, score};
  return {score, linalg_lowering::defineMaskTile(rewriter, op, op.getMask().front(),
                                                 freshKernelName(op, "attn_mask_tile"))};
}

// The _regions kernels' flags: causal, has_mask, window_left, window_right, has_score.
template <typename Op> SmallVector<int64_t> regionFlags(Op op) {
  score_region::Window w = windowOf(op).value_or(score_region::Window{});
  bool product = score_region::dotProductScale(op.getScore().front()).has_value();
  return {op.getCausal(), maskKind(op), w.left, w.right, !product};
}
// Their scale: c for a score c * sum(q * k) (has_score 0), else 1 (the score function scales).
template <typename Op> SmallVector<float> regionScale(Op op) {
  return {score_region::dotProductScale(op.getScore().front()).value_or(1.0f)};
}

struct FusedAttentionToKernel : OpRewritePattern<FusedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionOp op, PatternRewriter &rewriter) const override {
    if (std::optional<float> scale = flashScale(op); scale && !op.getWithWeights())
      return replaceWithKernelCall(op, rewriter, precisionKernel("attn_rt_flash_attention", op),
                                   {op.getCausal()}, {*scale});
    if (Operation *dot = regionsOnTiles(op); dot && !op.getWithWeights())
      return callRegionsKernel(op, rewriter, dot);
    std::string name = freshKernelName(op, "attn_fused_attention");
    linalg_lowering::defineAttentionKernel(rewriter, op, name);
    return replaceWithKernelCall(op, rewriter, name);
  }

  LogicalResult callRegionsKernel(FusedAttentionOp op, PatternRewriter &rewriter,
                                  Operation *dot) const {
    auto [score, mask] = scoreAndMaskTiles(rewriter, op, dot);
    Value captures = packCaptures(rewriter, op);
    rewriter.replaceOp(
        op, callKernel(rewriter, op, precisionKernel("attn_rt_flash_attention_regions", op),
                       {op.getQuery(), op.getKeys(), op.getValues(), op.getKeyMask(), captures},
                       op.getResultTypes(), regionFlags(op), regionScale(op), {score, mask}));
    return success();
  }
};

struct FusedAttentionGradToKernel : OpRewritePattern<FusedAttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedAttentionGradOp op, PatternRewriter &rewriter) const override {
    if (std::optional<float> scale = flashScale(op); scale && !op.getWeights())
      return replaceWithKernelCall(op, rewriter,
                                   precisionKernel("attn_rt_flash_attention_backward", op),
                                   {op.getCausal()}, {*scale});
    if (Operation *dot = regionsOnTiles(op); dot && !op.getWeights()) {
      Operation *gradDot;
      if (std::optional<Value> x = score_region::dotCotangent(op.getScoreGrad().front(), gradDot))
        return callRegionsKernel(op, rewriter, dot, gradDot, *x);
    }
    std::string name = freshKernelName(op, "attn_fused_attention_grad");
    linalg_lowering::defineAttentionGradKernel(rewriter, op, name);
    return replaceWithKernelCall(op, rewriter, name);
  }

  LogicalResult callRegionsKernel(FusedAttentionGradOp op, PatternRewriter &rewriter,
                                  Operation *dot, Operation *gradDot, Value cotangent) const {
    Location loc = op.getLoc();
    auto [score, mask] = scoreAndMaskTiles(rewriter, op, dot);
    func::FuncOp grad = linalg_lowering::defineScoreGradTile(
        rewriter, op, op.getScoreGrad().front(), gradDot, cotangent,
        freshKernelName(op, "attn_score_grad_tile"));
    ValueRange caps = op.getCaptures();
    Value captures = packCaptures(rewriter, op);
    auto packed = cast<RankedTensorType>(captures.getType());
    SmallVector<Type> results{op.getDQuery().getType(), op.getDKeys().getType(),
                              op.getDValues().getType(), packed};
    SmallVector<Value> r =
        callKernel(rewriter, op, precisionKernel("attn_rt_flash_attention_regions_backward", op),
                   {op.getQuery(), op.getKeys(), op.getValues(), op.getKeyMask(), captures,
                    op.getOutput(), op.getLse(), op.getDOutput(), op.getDLse()},
                   results, regionFlags(op), regionScale(op), {score, grad, mask});
    // d_rest: each capture's gradient, in the capture's own type: a per-head capture's
    // element h from row h, another's the sum of the rows.
    SmallVector<Value> replacements{r[0], r[1], r[2]};
    auto index = [&](int64_t v) { return rewriter.create<arith::ConstantIndexOp>(loc, v); };
    for (auto [n, c] : llvm::enumerate(caps)) {
      SmallVector<Value> rows;
      for (int64_t h = 0; h < packed.getShape()[0]; ++h)
        rows.push_back(
            rewriter.create<tensor::ExtractOp>(loc, r[3], ValueRange{index(h), index(n)}));
      if (!score_region::isPerHeadCapture(op, n))
        rows = {std::accumulate(rows.begin() + 1, rows.end(), rows[0], [&](Value a, Value b) {
          return rewriter.create<arith::AddFOp>(loc, a, b).getResult();
        })};
      replacements.push_back(rewriter.create<tensor::FromElementsOp>(loc, c.getType(), rows));
    }
    rewriter.replaceOp(op, replacements);
    return success();
  }
};
} // namespace

void mlir::attn::onednn::populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FusedAttentionToKernel, FusedAttentionGradToKernel>(patterns.getContext());
}
