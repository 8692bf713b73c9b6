// attn-fuse-attention: attn.attention_scores (a kind with a fused kernel) whose only user is an
// attn.attention without weighting becomes one attn.fused_attention. Everything else stays.
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

struct FuseAttention : mlir::attn::impl::AttnFuseAttentionBase<FuseAttention> {
  using AttnFuseAttentionBase::AttnFuseAttentionBase;
  void runOnOperation() override {
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
