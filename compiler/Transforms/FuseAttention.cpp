// attn-fuse-attention: attn.attention_scores of any kind whose only user is an attn.attention
// (with a local window's mask and Gaussian, or without a weighting) becomes one
// attn.fused_attention whose score region computes that kind; an
// attn.scaled_dot_product_attention becomes one with a scaled-dot score, also inside an
// attn.multi_head_attention (which is decomposed one level to expose it). Everything else
// stays, with a remark saying why.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEATTENTION
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
// What an attn.attention reads, when it can be fused: its scores, and the local window that
// made its mask and weighting (null without one). Else null scores, with the reason in `why`.
struct Match {
  AttentionScoresOp scores;
  LocalWindowOp window;
};

Match match(AttentionOp att, std::string &why) {
  auto scores = att.getScores().getDefiningOp<AttentionScoresOp>();
  if (!scores)
    return why = "its scores are not an attn.attention_scores", Match{};
  if (!scores->hasOneUse())
    return why = "its scores have other users", Match{};
  // Luong's local attention: the window's mask, and its Gaussian as the weighting or none.
  auto window = att.getMask().getDefiningOp<LocalWindowOp>();
  if (window && att.getMask() != window.getWindowMask())
    window = nullptr;
  if (Value w = att.getWeighting())
    if (!window || w != window.getGaussian())
      return why = "its weighting is not a local window's Gaussian over that window", Match{};
  return Match{scores, window};
}

RankedTensorType f32Tensor(OpBuilder &b, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b.getF32Type());
}
Value reshape(OpBuilder &b, Location l, Value v, ArrayRef<int64_t> shape) {
  auto type = f32Tensor(b, shape);
  return type == v.getType() ? v : b.create<ReshapeOp>(l, type, v).getResult();
}
ArrayRef<int64_t> dims(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

// x / sqrt(sum x^2 + 1e-12) over `axis`, as attn.attention_scores' cosine decomposes.
Value unit(OpBuilder &b, Location l, Value x, int64_t axis) {
  Value squares = b.create<ReduceSumOp>(l, b.create<MulOp>(l, x, x), b.getDenseI64ArrayAttr({axis}),
                                        b.getBoolAttr(true));
  Value norm = b.create<SqrtOp>(l, b.create<AddOp>(l, squares, scalarOf(b, l, 1e-12f)));
  return b.create<DivOp>(l, x, norm);
}

// Fills the score region of `op` for `kind` on rows q, k (the query and keys already projected
// or normalised where the kind needs it), with the captures `v_a` (additive) or `tau`
// (cosine) as its last arguments.
void buildScore(OpBuilder &b, FusedAttentionOp op, ScoreKind kind) {
  Location l = op.getLoc();
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> args;
  SmallVector<Location> locs;
  int64_t width = dims(op.getQuery())[3];
  auto row = f32Tensor(b, {width}), scalar = f32Tensor(b, {});
  for (Type t : {Type(row), Type(row), Type(scalar), Type(scalar)})
    args.push_back(t);
  llvm::append_range(args, op.getCaptures().getTypes());
  locs.assign(args.size(), l);
  Block *block = b.createBlock(&op.getScore(), {}, args, locs);
  Value q = block->getArgument(0), k = block->getArgument(1);
  auto sumRow = [&](Value x) {
    return b.create<ReduceSumOp>(l, x, b.getDenseI64ArrayAttr({0}), b.getBoolAttr(false))
        .getResult();
  };
  Value s;
  if (kind == ScoreKind::additive) {
    Value t = b.create<TanhOp>(l, b.create<AddOp>(l, q, k));
    s = sumRow(b.create<MulOp>(l, t, block->getArgument(4)));
  } else {
    s = sumRow(b.create<MulOp>(l, q, k));
    if (kind == ScoreKind::scaled_dot)
      s = b.create<MulOp>(l, s, scalarOf(b, l, 1.0f / std::sqrt((float)width)));
    if (kind == ScoreKind::cosine && !op.getCaptures().empty())
      s = reshape(b, l, b.create<MulOp>(l, s, block->getArgument(4)), {});
  }
  b.create<YieldOp>(l, s);
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

  // Multi-head attention is its projections around one scaled dot-product attention: the
  // projections stay GEMMs, the attention becomes the fused op with a scaled-dot score (which
  // the lowering runs as FlashAttention-2's GEMM tiles unless its weights are read).
  void fuseDotProduct() {
    SmallVector<MultiHeadAttentionOp> heads;
    getOperation()->walk([&](MultiHeadAttentionOp op) { heads.push_back(op); });
    for (MultiHeadAttentionOp op : heads) {
      OpBuilder b(op);
      SmallVector<Value> parts = cast<DecomposableOpInterface>(*op).decompose(b);
      op.getOutput().replaceAllUsesWith(parts[0]);
      op.getWeights().replaceAllUsesWith(parts[1]);
      op->erase();
    }
    SmallVector<ScaledDotProductAttentionOp> attentions;
    getOperation()->walk([&](ScaledDotProductAttentionOp op) { attentions.push_back(op); });
    for (ScaledDotProductAttentionOp op : attentions) {
      if (unfusedIsFaster(op)) {
        if (remarks)
          op.emitRemark("not fused: with bf16 products the unfused attention is faster at "
                        "fewer than 128 queries or keys (the fused kernels compute it in f32)");
        continue;
      }
      OpBuilder b(op);
      Location l = op.getLoc();
      Value mask = op.getKeyMask() ? op.getKeyMask() : onesMask(b, l, op.getKeys());
      bool withWeights = !op.getWeights().use_empty();
      if (withWeights && remarks)
        op.emitRemark("fused with its weights as a result (they are read): the generated "
                      "kernel, not the GEMM-tiled one, computes it");
      auto fused = b.create<FusedAttentionOp>(
          l, FusedAttentionOp::resultTypes(op.getQuery(), op.getKeys(), op.getValues(), withWeights),
          op.getQuery(), op.getKeys(), op.getValues(), mask, Value(), ValueRange(),
          op.getCausalAttr(), IntegerAttr(), UnitAttr(), withWeights ? b.getUnitAttr() : UnitAttr(),
          PrecisionAttr());
      buildScore(b, fused, ScoreKind::scaled_dot);
      op.getOutput().replaceAllUsesWith(fused.getOutput());
      if (withWeights)
        op.getWeights().replaceAllUsesWith(fused.getWeights()[0]);
      op->erase();
    }
  }

  // Under a bf16 policy: an attention the flash kernels would compute in f32 (too short for
  // their bf16 tiles) whose unfused products, batched over the heads, are large enough to gain
  // from bf16 (Passes.td has the measurements).
  bool unfusedIsFaster(ScaledDotProductAttentionOp op) {
    if (precision != stringifyPrecision(Precision::bf16) ||
        FusedAttentionOp::fillsBf16Tiles(op.getQuery(), op.getKeys()))
      return false;
    constexpr int64_t kMinLength = 16;
    return dims(op.getQuery())[2] >= kMinLength && dims(op.getKeys())[2] >= kMinLength;
  }

  // An RNN decoder's attention (one query per row) as the fused op with B = B, H = T = 1.
  void fuseScoresAndAttention() {
    SmallVector<AttentionOp> attentions;
    getOperation()->walk([&](AttentionOp att) { attentions.push_back(att); });
    for (AttentionOp att : attentions) {
      std::string why;
      Match m = match(att, why);
      if (!m.scores) {
        if (remarks)
          att.emitRemark("not fused: ") << why;
        continue;
      }
      fuse(att, m);
    }
  }

  void fuse(AttentionOp att, Match m) {
    OpBuilder b(att);
    Location l = att.getLoc();
    AttentionScoresOp scores = m.scores;
    ScoreKind kind = scores.getKind();
    Value q = scores.getQuery(), keys = scores.getKeys();
    SmallVector<Value> captures;
    if (kind == ScoreKind::general)
      q = b.create<MatmulOp>(l, q, scores.getWeight(), b.getBoolAttr(false), b.getBoolAttr(false));
    if (kind == ScoreKind::cosine) {
      q = unit(b, l, q, 1);
      keys = unit(b, l, keys, 2);
    }
    if ((kind == ScoreKind::additive || kind == ScoreKind::cosine) && scores.getWeight())
      captures.push_back(scores.getWeight());
    ArrayRef<int64_t> ks = dims(keys), vs = dims(att.getValues());
    int64_t batch = ks[0], steps = ks[1], width = ks[2];
    Value center = m.window ? reshape(b, l, m.window.getCenter(), {batch, 1, 1}) : Value();
    Value mask = m.window ? m.window.getMask() : att.getMask();
    bool withWeights = !att.getWeights().use_empty();
    Value q4 = reshape(b, l, q, {batch, 1, 1, width});
    Value k4 = reshape(b, l, keys, {batch, 1, steps, width});
    Value v4 = reshape(b, l, att.getValues(), {batch, 1, steps, vs[2]});
    auto fused = b.create<FusedAttentionOp>(
        l, FusedAttentionOp::resultTypes(q4, k4, v4, withWeights), q4, k4, v4, mask, center,
        captures, b.getBoolAttr(false),
        m.window ? b.getI64IntegerAttr(m.window.getWindow()) : IntegerAttr(),
        att.getWeighting() ? b.getUnitAttr() : UnitAttr(),
        withWeights ? b.getUnitAttr() : UnitAttr(), PrecisionAttr());
    buildScore(b, fused, kind);
    att.getContext().replaceAllUsesWith(reshape(b, l, fused.getOutput(), {batch, vs[2]}));
    if (withWeights)
      att.getWeights().replaceAllUsesWith(reshape(b, l, fused.getWeights()[0], {batch, steps}));
    att->erase();
    scores->erase();
    if (m.window && m.window->use_empty())
      m.window->erase();
  }
};
} // namespace
