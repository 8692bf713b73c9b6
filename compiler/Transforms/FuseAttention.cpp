// attn-fuse-attention: attn.attention_scores (a kind with a fused kernel) whose only user is an
// attn.attention without weighting becomes one attn.fused_attention; an
// attn.scaled_dot_product_attention whose weights nothing reads becomes one
// attn.flash_attention, also inside an attn.multi_head_attention (which is decomposed one level
// to expose it). Everything else stays.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEATTENTION
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
// The scores feeding `att` if the pair can be fused; else null, with the reason in `why`.
AttentionScoresOp match(AttentionOp att, std::string &why) {
  auto scores = att.getScores().getDefiningOp<AttentionScoresOp>();
  if (!scores)
    return why = "its scores are not an attn.attention_scores", nullptr;
  if (scores.getKind() != ScoreKind::additive)
    return why = "no fused kernel for '" + stringifyScoreKind(scores.getKind()).str() +
                 "' scores yet",
           nullptr;
  if (att.getWeighting())
    return why = "it has a weighting (local attention's Gaussian)", nullptr;
  if (!scores->hasOneUse())
    return why = "its scores have other users", nullptr;
  return scores;
}

// A key mask of ones [B, S] for an attention without one.
Value onesMask(OpBuilder &b, Location l, Value keys) {
  ArrayRef<int64_t> k = cast<RankedTensorType>(keys.getType()).getShape();
  auto type = RankedTensorType::get({k[0], k[2]}, b.getF32Type());
  return b.create<ConstantOp>(l, DenseElementsAttr::get(type, 1.0f));
}

struct FuseAttention : mlir::attn::impl::AttnFuseAttentionBase<FuseAttention> {
  using AttnFuseAttentionBase::AttnFuseAttentionBase;

  void runOnOperation() override {
    fuseDotProduct();
    fuseScoresAndAttention();
  }

  // Flash attention never forms the weights: an attention whose weights something reads
  // (plots, a caller) stays as it is, with a remark.
  template <typename Op> bool weightsRead(Op op) {
    if (op.getWeights().use_empty())
      return false;
    if (remarks)
      op.emitRemark("not fused: its attention weights are used");
    return true;
  }

  // Multi-head attention is its projections around one scaled dot-product attention: the
  // projections stay GEMMs, the attention becomes flash attention.
  void fuseDotProduct() {
    SmallVector<MultiHeadAttentionOp> heads;
    getOperation()->walk([&](MultiHeadAttentionOp op) { heads.push_back(op); });
    for (MultiHeadAttentionOp op : heads) {
      if (weightsRead(op))
        continue;
      OpBuilder b(op);
      SmallVector<Value> parts = cast<DecomposableOpInterface>(*op).decompose(b);
      op.getOutput().replaceAllUsesWith(parts[0]);
      op->erase();
    }
    SmallVector<ScaledDotProductAttentionOp> attentions;
    getOperation()->walk([&](ScaledDotProductAttentionOp op) { attentions.push_back(op); });
    for (ScaledDotProductAttentionOp op : attentions) {
      if (weightsRead(op))
        continue;
      OpBuilder b(op);
      Value mask = op.getKeyMask() ? op.getKeyMask() : onesMask(b, op.getLoc(), op.getKeys());
      auto flash = b.create<FlashAttentionOp>(op.getLoc(), op.getQuery(), op.getKeys(),
                                              op.getValues(), mask, op.getCausalAttr());
      op.getOutput().replaceAllUsesWith(flash.getOutput());
      op->erase();
    }
  }

  void fuseScoresAndAttention() {
    SmallVector<AttentionOp> attentions;
    getOperation()->walk([&](AttentionOp att) { attentions.push_back(att); });
    for (AttentionOp att : attentions) {
      std::string why;
      AttentionScoresOp scores = match(att, why);
      if (!scores) {
        if (remarks)
          att.emitRemark("not fused: ") << why;
        continue;
      }
      OpBuilder b(att);
      auto fused = b.create<FusedAttentionOp>(att.getLoc(), scores.getQuery(), scores.getKeys(),
                                              scores.getWeight(), att.getMask(),
                                              att.getValues(), scores.getKindAttr());
      att->replaceAllUsesWith(fused->getResults());
      att->erase();
      scores->erase();
    }
  }
};
} // namespace
