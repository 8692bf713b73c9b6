// The attention family (ops/Attention.td): shape rules, decompositions into core ops, and
// gradient rules.
#include "dialect/AttnOps.h"
#include "dialect/FlopCount.h"
#include "dialect/Autodiff.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }
RankedTensorType f32Tensor(OpBuilder &b, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b.getF32Type());
}
RankedTensorType f32Like(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}
Value reshape(OpBuilder &b, Location l, Value v, ArrayRef<int64_t> shape) {
  auto type = f32Tensor(b, shape);
  return type == v.getType() ? v : b.create<ReshapeOp>(l, type, v).getResult();
}
Value matmul(OpBuilder &b, Location l, Value x, Value y, bool tx = false, bool ty = false) {
  return b.create<MatmulOp>(l, x, y, b.getBoolAttr(tx), b.getBoolAttr(ty));
}
Value mul(OpBuilder &b, Location l, Value x, Value y) { return b.create<MulOp>(l, x, y); }
Value sub(OpBuilder &b, Location l, Value x, Value y) { return b.create<SubOp>(l, x, y); }
Value add(OpBuilder &b, Location l, Value x, Value y) { return b.create<AddOp>(l, x, y); }
// Sum over axis 1 of a [B, S] tensor, kept as [B, 1] so it broadcasts back.
Value rowSum(OpBuilder &b, Location l, Value v) {
  return b.create<ReduceSumOp>(l, v, b.getDenseI64ArrayAttr({1}), b.getBoolAttr(true));
}

// alpha = mask exp(e) / sum(mask exp(e)) over axis 1 of [B, S]; all-zero for a fully masked
// row. Masked scores are pushed down by 1e9 before the max, so the max is a kept one.
Value maskedSoftmax(OpBuilder &b, Location l, Value scores, Value mask) {
  Value push = mul(b, l, sub(b, l, mask, scalarOf(b, l, 1.0f)), scalarOf(b, l, 1e9f));
  Value shifted = add(b, l, scores, push);
  Value max = b.create<ReduceMaxOp>(l, shifted, b.getDenseI64ArrayAttr({1}), b.getBoolAttr(true));
  Value ex = mul(b, l, b.create<ExpOp>(l, sub(b, l, shifted, max)), mask);
  Value total = b.create<MaximumOp>(l, rowSum(b, l, ex), scalarOf(b, l, 1e-30f));
  return b.create<DivOp>(l, ex, total);
}
} // namespace

//===- attention_scores --------------------------------------------------------------------===//

LogicalResult AttentionScoresOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                  ValueRange operands, DictionaryAttr attributes,
                                                  OpaqueProperties properties, RegionRange regions,
                                                  SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  if (!a.getKindAttr())
    return emitOptionalError(loc, "'attn.attention_scores' needs a kind");
  ScoreKind kind = a.getKind();
  auto q = typeOf(a.getQuery()), k = typeOf(a.getKeys());
  Value w = a.getWeight();
  bool ok = q.getRank() == 2 && k.getRank() == 3 && q.getShape()[0] == k.getShape()[0];
  int64_t qw = ok ? q.getShape()[1] : 0, kw = ok ? k.getShape()[2] : 0;
  std::string need;
  if (kind == ScoreKind::general) {
    need = "query [B, Q], keys [B, S, K], weight [Q, K]";
    ok = ok && w && shapeOf(w) == ArrayRef<int64_t>{qw, kw};
  } else if (kind == ScoreKind::additive) {
    need = "query [B, A], keys [B, S, A], weight v [A]";
    ok = ok && qw == kw && w && shapeOf(w) == ArrayRef<int64_t>{kw};
  } else if (kind == ScoreKind::cosine) {
    need = "query [B, K], keys [B, S, K] and an optional temperature [1]";
    ok = ok && qw == kw && (!w || shapeOf(w) == ArrayRef<int64_t>{1});
  } else {
    need = "query [B, K], keys [B, S, K] and no weight";
    ok = ok && qw == kw && !w;
  }
  if (!ok)
    return emitOptionalError(loc, "'attn.attention_scores' kind '", stringifyScoreKind(kind),
                             "' needs ", need, "; got ", typeStr(q), ", ", typeStr(k),
                             w ? ", " + typeStr(w.getType()) : std::string());
  results.push_back(RankedTensorType::get({k.getShape()[0], k.getShape()[1]}, k.getElementType()));
  return success();
}

SmallVector<Value> AttentionScoresOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  ArrayRef<int64_t> k = shapeOf(getKeys());
  int64_t batch = k[0], steps = k[1], width = k[2];
  Value q = getQuery();
  if (getKind() == ScoreKind::additive) {
    // sum_a tanh(q + k)[b, j, a] v[a]: elementwise and a reduction (a matrix-vector product
    // with v would be a matmul call with N = 1, and its gradient one with K = 1).
    Value t = b.create<TanhOp>(l, add(b, l, reshape(b, l, q, {batch, 1, width}), getKeys()));
    return {b.create<ReduceSumOp>(l, mul(b, l, t, getWeight()), b.getDenseI64ArrayAttr({2}),
                                  b.getBoolAttr(false))};
  }
  Value keys = getKeys();
  if (getKind() == ScoreKind::cosine) {
    // q / |q| [B, K] and k / |k| [B, S, K]: then their dot product is the cosine.
    auto unit = [&](Value x, int64_t axis) {
      Value squares = b.create<ReduceSumOp>(l, mul(b, l, x, x), b.getDenseI64ArrayAttr({axis}),
                                            b.getBoolAttr(true));
      Value norm = b.create<SqrtOp>(l, add(b, l, squares, scalarOf(b, l, 1e-12f)));
      return b.create<DivOp>(l, x, norm).getResult();
    };
    q = unit(q, 1);
    keys = unit(keys, 2);
  }
  if (getKind() == ScoreKind::general)
    q = matmul(b, l, q, getWeight()); // [B, Q] x [Q, K]
  // q [B, 1, K] x keys^T [B, K, S] -> [B, 1, S]
  Value e = matmul(b, l, reshape(b, l, q, {batch, 1, width}), keys, false, true);
  e = reshape(b, l, e, {batch, steps});
  if (getKind() == ScoreKind::cosine && getWeight())
    e = mul(b, l, e, getWeight()); // [B, S] * tau [1]
  if (getKind() == ScoreKind::scaled_dot)
    e = mul(b, l, e, scalarOf(b, l, 1.0f / std::sqrt((float)width)));
  return {e};
}

LogicalResult AttentionScoresOp::buildGradient(OpBuilder &b, ValueRange grads,
                                               SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}

//===- local_window ------------------------------------------------------------------------===//

LogicalResult LocalWindowOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              ValueRange operands, DictionaryAttr attributes,
                                              OpaqueProperties properties, RegionRange regions,
                                              SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto p = typeOf(a.getCenter()), m = typeOf(a.getMask());
  bool ok = p.getRank() == 2 && m.getRank() == 2 && p.getShape()[1] == 1 &&
            p.getShape()[0] == m.getShape()[0];
  if (!ok)
    return emitOptionalError(loc, "'attn.local_window' needs center [B, 1] and mask [B, S]; got ",
                             typeStr(p), ", ", typeStr(m));
  if (a.getWindowAttr() && a.getWindow() < 1)
    return emitOptionalError(loc, "'attn.local_window' window must be >= 1, got ",
                             a.getWindow());
  results.push_back(m);
  results.push_back(m);
  return success();
}

SmallVector<Value> LocalWindowOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  int64_t steps = shapeOf(getMask())[1];
  double d = (double)getWindow(), sigma = d / 2;
  SmallVector<float> positions;
  for (int64_t j = 0; j < steps; ++j)
    positions.push_back((float)j);
  auto posType = f32Tensor(b, {1, steps});
  Value j = b.create<ConstantOp>(l, DenseElementsAttr::get(posType, ArrayRef<float>(positions)));
  Value offset = sub(b, l, j, getCenter()); // [B, S]
  Value squared = mul(b, l, offset, offset);
  // |j - p| <= D as D^2 + eps - (j - p)^2 > 0: step(0) is 0, and eps keeps the edges of an
  // integer centre (monotonic p, where (j - p)^2 is exact) in the window.
  Value inside = b.create<StepOp>(l, sub(b, l, scalarOf(b, l, (float)(d * d + 1e-3)), squared));
  Value windowMask = mul(b, l, getMask(), inside);
  Value gaussian = b.create<ExpOp>(
      l, mul(b, l, squared, scalarOf(b, l, (float)(-1.0 / (2 * sigma * sigma)))));
  return {windowMask, gaussian};
}

LogicalResult LocalWindowOp::buildGradient(OpBuilder &b, ValueRange grads,
                                           SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}

//===- attention ---------------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            ValueRange operands, DictionaryAttr attributes,
                                            OpaqueProperties properties, RegionRange regions,
                                            SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto e = typeOf(a.getScores()), m = typeOf(a.getMask()), v = typeOf(a.getValues());
  Value w = a.getWeighting();
  bool ok = e.getRank() == 2 && v.getRank() == 3 && m == e &&
            v.getShape().take_front(2) == e.getShape() && (!w || w.getType() == e);
  if (!ok)
    return emitOptionalError(loc, "'attn.attention' needs scores [B, S], mask [B, S], values "
                                  "[B, S, D] and optionally weighting [B, S]; got ",
                             typeStr(e), ", ", typeStr(m), ", ", typeStr(v),
                             w ? ", " + typeStr(w.getType()) : std::string());
  results.push_back(RankedTensorType::get({v.getShape()[0], v.getShape()[2]}, v.getElementType()));
  results.push_back(e);
  return success();
}

SmallVector<Value> AttentionOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  ArrayRef<int64_t> v = shapeOf(getValues());
  Value weights = maskedSoftmax(b, l, getScores(), getMask());
  if (getWeighting())
    weights = mul(b, l, weights, getWeighting());
  // weights [B, 1, S] x values [B, S, D] -> [B, 1, D]
  Value context = matmul(b, l, reshape(b, l, weights, {v[0], 1, v[1]}), getValues());
  return {reshape(b, l, context, {v[0], v[2]}), weights};
}

// With a = alpha * w (w = weighting, or 1) and context = sum_j a_j v_j:
//   da = g_weights + values . g_context      dvalues = a (x) g_context
//   dalpha = da * w, dw = da * alpha         dscores = alpha * (dalpha - sum(alpha * dalpha))
LogicalResult AttentionOp::buildGradient(OpBuilder &b, ValueRange grads,
                                         SmallVectorImpl<Value> &out) {
  Location l = getLoc();
  ArrayRef<int64_t> v = shapeOf(getValues());
  int64_t batch = v[0], steps = v[1], width = v[2];
  Value gContext = grads[0], gWeights = grads[1];
  Value alpha = maskedSoftmax(b, l, getScores(), getMask());
  Value weights = getWeighting() ? mul(b, l, alpha, getWeighting()) : alpha;
  // values [B, S, D] x gContext [B, D, 1] -> [B, S, 1]
  Value fromContext = matmul(b, l, getValues(), reshape(b, l, gContext, {batch, width, 1}));
  Value da = add(b, l, gWeights, reshape(b, l, fromContext, {batch, steps}));
  // the outer product a [B, S, 1] * gContext [B, 1, D] -> [B, S, D]
  Value dValues = mul(b, l, reshape(b, l, weights, {batch, steps, 1}),
                      reshape(b, l, gContext, {batch, 1, width}));
  Value dAlpha = getWeighting() ? mul(b, l, da, getWeighting()) : da;
  Value dScores = mul(b, l, alpha, sub(b, l, dAlpha, rowSum(b, l, mul(b, l, alpha, dAlpha))));
  out.push_back(dScores);
  out.push_back(Value()); // the mask
  out.push_back(dValues);
  if (getWeighting())
    out.push_back(mul(b, l, da, alpha));
  return success();
}

//===- scaled_dot_product_attention --------------------------------------------------------===//

LogicalResult ScaledDotProductAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions, SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto q = typeOf(a.getQuery()), k = typeOf(a.getKeys()), v = typeOf(a.getValues());
  Value m = a.getKeyMask();
  bool ok = q.getRank() == 4 && k.getRank() == 4 && v.getRank() == 4;
  if (ok) {
    ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
    ok = qs.take_front(2) == ks.take_front(2) && ks.take_front(3) == vs.take_front(3) &&
         qs[3] == ks[3] && (!m || shapeOf(m) == ArrayRef<int64_t>{ks[0], ks[2]});
    if (ok && a.getCausalAttr() && a.getCausal() && qs[2] > ks[2])
      return emitOptionalError(loc, "'attn.scaled_dot_product_attention' with causal needs at "
                                    "most as many queries as keys; got ",
                               typeStr(q), " and ", typeStr(k));
  }
  if (!ok)
    return emitOptionalError(loc, "'attn.scaled_dot_product_attention' needs query [B, H, T, D], "
                                  "keys [B, H, S, D], values [B, H, S, Dv] and optionally "
                                  "key_mask [B, S]; got ",
                             typeStr(q), ", ", typeStr(k), ", ", typeStr(v),
                             m ? ", " + typeStr(m.getType()) : std::string());
  ArrayRef<int64_t> qs = q.getShape();
  results.push_back(f32Like(q, {qs[0], qs[1], qs[2], v.getShape()[3]}));
  results.push_back(f32Like(q, {qs[0], qs[1], qs[2], k.getShape()[2]}));
  return success();
}

SmallVector<Value> ScaledDotProductAttentionOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKeys());
  int64_t batch = q[0], queries = q[2], keys = k[2];
  // [B, H, T, D] x [B, H, S, D]^T -> [B, H, T, S]
  Value scores = mul(b, l, matmul(b, l, getQuery(), getKeys(), false, true),
                     scalarOf(b, l, 1.0f / std::sqrt((float)q[3])));
  // allowed: 1 where query i may see key j, as [B, 1, 1, S] (padding), [T, S] (causal) or
  // their product [B, 1, T, S]; the scores get (allowed - 1) 1e9, once, so a key both masks
  // exclude is not pushed lower than one excluded by either.
  Value allowed;
  if (Value mask = getKeyMask())
    allowed = reshape(b, l, mask, {batch, 1, 1, keys});
  if (getCausal()) {
    SmallVector<float> seen(queries * keys, 1.0f);
    for (int64_t i = 0; i < queries; ++i)
      for (int64_t j = i + keys - queries + 1; j < keys; ++j)
        seen[i * keys + j] = 0.0f;
    auto type = f32Tensor(b, {queries, keys});
    Value causal = b.create<ConstantOp>(l, DenseElementsAttr::get(type, ArrayRef<float>(seen)));
    allowed = allowed ? mul(b, l, allowed, causal) : causal;
  }
  if (allowed)
    scores = add(b, l, scores,
                 mul(b, l, sub(b, l, allowed, scalarOf(b, l, 1.0f)), scalarOf(b, l, 1e9f)));
  Value weights = b.create<SoftmaxOp>(l, scores, b.getI64IntegerAttr(-1));
  // On a row with no allowed key every score is pushed down alike and the softmax alone is
  // uniform; such a row gets zero weights instead, as in attn.attention and
  // attn.fused_attention. anyAllowed: [B, 1, 1, 1], [T, 1] or [B, 1, T, 1].
  if (allowed) {
    int64_t last = cast<RankedTensorType>(allowed.getType()).getRank() - 1;
    Value anyAllowed = b.create<ReduceMaxOp>(l, allowed, b.getDenseI64ArrayAttr({last}),
                                             b.getBoolAttr(true));
    weights = mul(b, l, weights, anyAllowed);
  }
  return {matmul(b, l, weights, getValues()), weights};
}

LogicalResult ScaledDotProductAttentionOp::buildGradient(OpBuilder &b, ValueRange grads,
                                                         SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}

//===- multi_head_attention ----------------------------------------------------------------===//

LogicalResult MultiHeadAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions, SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto q = typeOf(a.getQuery()), mem = typeOf(a.getMemory());
  int64_t heads = a.getHeadsAttr() ? a.getHeads() : 0;
  bool ok = q.getRank() == 3 && mem.getRank() == 3 && q.getShape()[0] == mem.getShape()[0];
  int64_t e = ok ? q.getShape()[2] : 0, m = ok ? mem.getShape()[2] : 0;
  auto is = [](Value v, ArrayRef<int64_t> shape) { return shapeOf(v) == shape; };
  ok = ok && is(a.getWQ(), {e, e}) && is(a.getBQ(), {e}) && is(a.getWK(), {m, e}) &&
       is(a.getBK(), {e}) && is(a.getWV(), {m, e}) && is(a.getBV(), {e}) &&
       is(a.getWO(), {e, e}) && is(a.getBO(), {e});
  Value mask = a.getKeyMask();
  if (ok && mask)
    ok = is(mask, {mem.getShape()[0], mem.getShape()[1]});
  if (!ok) {
    std::string got;
    for (Value v : operands)
      got += (got.empty() ? "" : ", ") + typeStr(v.getType());
    return emitOptionalError(loc, "'attn.multi_head_attention' needs query [B, T, E], memory "
                                  "[B, S, M], w_q [E, E], b_q [E], w_k [M, E], b_k [E], w_v "
                                  "[M, E], b_v [E], w_o [E, E], b_o [E] and optionally key_mask "
                                  "[B, S]; got ",
                             got);
  }
  if (heads < 1 || e % heads != 0)
    return emitOptionalError(loc, "'attn.multi_head_attention' heads must divide the width ", e,
                             ", got ", heads);
  if (a.getCausalAttr() && a.getCausal() && q.getShape()[1] > mem.getShape()[1])
    return emitOptionalError(loc, "'attn.multi_head_attention' with causal needs at most as "
                                  "many queries as memory positions; got ",
                             typeStr(q), " and ", typeStr(mem));
  ArrayRef<int64_t> qs = q.getShape();
  results.push_back(q);
  results.push_back(f32Like(q, {qs[0], heads, qs[1], mem.getShape()[1]}));
  return success();
}

// x [B, T, E] -> [B, H, T, E/H]: head h holds columns [h E/H, (h + 1) E/H).
Value mlir::attn::splitHeads(OpBuilder &b, Location l, Value x, int64_t heads) {
  ArrayRef<int64_t> s = shapeOf(x);
  Value split = reshape(b, l, x, {s[0], s[1], heads, s[2] / heads});
  return b.create<TransposeOp>(l, split, b.getDenseI64ArrayAttr({0, 2, 1, 3}));
}
// x [B, H, T, D] -> [B, T, H D]
Value mlir::attn::mergeHeads(OpBuilder &b, Location l, Value x) {
  ArrayRef<int64_t> s = shapeOf(x);
  Value merged = b.create<TransposeOp>(l, x, b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  return reshape(b, l, merged, {s[0], s[2], s[1] * s[3]});
}

SmallVector<Value> MultiHeadAttentionOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  int64_t heads = getHeads();
  auto project = [&](Value x, Value w, Value bias) {
    return splitHeads(b, l, b.create<DenseOp>(l, x, w, bias), heads);
  };
  auto att = b.create<ScaledDotProductAttentionOp>(
      l, project(getQuery(), getWQ(), getBQ()), project(getMemory(), getWK(), getBK()),
      project(getMemory(), getWV(), getBV()), getKeyMask(), getCausalAttr());
  Value output = b.create<DenseOp>(l, mergeHeads(b, l, att.getOutput()), getWO(), getBO());
  return {output, att.getWeights()};
}

LogicalResult MultiHeadAttentionOp::buildGradient(OpBuilder &b, ValueRange grads,
                                                  SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}
