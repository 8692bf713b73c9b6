// model.transformer -> attn IR: the stacks of "Attention Is All You Need".
//
//   seq2seq   encoder (self-attention over the source, padding masked) and decoder (causal
//             self-attention, cross attention over the encoder's output), teacher forcing;
//   lm        a decoder-only stack (causal self-attention, no cross attention);
//   tag       an encoder-only stack, one label per token;
//   classify  an encoder-only stack, the mean of the real tokens' outputs, one label.
//
// Every stack embeds tokens as e * sqrt(d_model) + PE(position) and ends with a layer norm,
// as torch.nn.Transformer does (post-norm included), so that the PyTorch reference matches.
//
// Decoding is cached: @encode projects the encoder's output to every decoder layer's cross
// keys and values once, and @decode_step takes and returns each layer's self-attention
// keys and values for the positions so far ([K, H, L, D], L the longest decode), writing
// the new position's with a one-hot. A step costs one position's projections and
// feed-forward layers, plus attention over L cached positions (the unwritten ones masked).
#include "attn/Names.h"
#include "frontends/yaml/Family.h"
#include "frontends/yaml/ImportBuilder.h"
#include "frontends/yaml/ScoreExpr.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;

namespace attn::yaml {
namespace {

class TransformerImporter : ImportBuilder {
public:
  using ImportBuilder::ImportBuilder;

  OwningOpRef<ModuleOp> run() {
    std::vector<Diagnostic> diags; // none: the family validated the spec
    Problems problems(spec, diags);
    mods = expr::read(spec, problems);
    OwningOpRef<ModuleOp> module = newModule();
    if (spec.task == Task::Seq2seq)
      encoderDecoder(*module);
    else if (spec.task == Task::Lm)
      decoderOnly(*module);
    else
      encoderOnly(*module);
    return module;
  }

private:
  const TransformerSpec &t() const { return *spec.model.transformer; }
  expr::AttentionMods mods; // model.transformer.attention, read
  int64_t width() const { return t().dModel; }
  int64_t heads() const { return t().heads; }
  int64_t headWidth() const { return t().dModel / t().heads; }
  int64_t decoderLayers() const { return t().decoderLayers > 0 ? t().decoderLayers : t().layers; }
  Location tloc() { return loc(t().loc); }

  //===- parameters --------------------------------------------------------------------===//

  // Xavier-uniform weights (each d x d matrix on its own; PyTorch draws q, k, v as one
  // [3d, d] matrix, so its bound is smaller) and zero biases.
  struct AttentionParams {
    Value wq, bq, wk, bk, wv, bv, wo, bo;
  };
  AttentionParams attentionParams(const std::string &prefix, Location l) {
    int64_t d = width();
    float xavier = std::sqrt(6.0f / (2.0f * d));
    auto w = [&](const char *name) {
      return param(l, prefix + "." + name + ".weight", {d, d}, Init::uniform, xavier);
    };
    auto z = [&](const char *name) {
      return param(l, prefix + "." + name + ".bias", {d}, Init::zeros, 0.0f);
    };
    return {w("q"), z("q"), w("k"), z("k"), w("v"), z("v"), w("out"), z("out")};
  }

  Value layerNorm(const std::string &name, Value x, Location l) {
    Value gamma = param(l, name + ".weight", {width()}, Init::ones, 1.0f);
    Value beta = param(l, name + ".bias", {width()}, Init::zeros, 0.0f);
    return b.create<mlir::attn::LayerNormOp>(l, x, gamma, beta, b.getF32FloatAttr(1e-5f));
  }

  // W_2 act(W_1 x + b_1) + b_2, nn.Linear's initialisation.
  Value feedForward(const std::string &prefix, Value x, Location l) {
    Value h = dense(prefix + ".linear1", x, t().ffn, l);
    h = t().activation == FfnActivation::Gelu ? Value(b.create<mlir::attn::GeluOp>(l, h))
                                              : Value(b.create<mlir::attn::ReluOp>(l, h));
    return dense(prefix + ".linear2", h, width(), l);
  }

  // N(0, 1/d): scaled by sqrt(d) on the way in, a token's vector has unit variance.
  Value embeddingTable(const std::string &name, int64_t vocab) {
    return param(loc(t().loc), name, {vocab, width()}, Init::normal,
                 1.0f / std::sqrt((float)width()));
  }

  // The positions' vectors [n, d]: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(..),
  // or a learned table `name` of `learned` rows (default n), zeros past them: the decoder's
  // table has the target length whatever decode.max_length is, so checkpoints keep one shape.
  Value positionTable(const std::string &name, int64_t n, Location l, int64_t learned = 0) {
    int64_t d = width();
    if (t().positions == Positions::Learned) {
      int64_t rows = learned > 0 ? std::min(learned, n) : n;
      Value table = param(l, name, {rows, d}, Init::normal, 0.5f);
      if (rows == n)
        return table;
      return b.create<mlir::attn::PadOp>(l, table, b.getDenseI64ArrayAttr({0, 0}),
                                         b.getDenseI64ArrayAttr({n - rows, 0}));
    }
    SmallVector<float> pe(n * d);
    for (int64_t p = 0; p < n; ++p)
      for (int64_t i = 0; i < d; i += 2) {
        double angle = p * std::exp(-(double)i * std::log(10000.0) / d);
        pe[p * d + i] = (float)std::sin(angle);
        if (i + 1 < d)
          pe[p * d + i + 1] = (float)std::cos(angle);
      }
    return b.create<mlir::attn::ConstantOp>(l, DenseElementsAttr::get(f32({n, d}),
                                                                     ArrayRef<float>(pe)));
  }

  // ids [B, T] -> e * sqrt(d) + PE[0, T) [B, T, d], `positions` [n >= T, d].
  Value embed(Value table, Value positions, Value ids, const std::string &dropSite,
              Location l) {
    int64_t steps = cast<RankedTensorType>(ids.getType()).getShape()[1];
    Value x = b.create<mlir::attn::MulOp>(l, b.create<mlir::attn::EmbeddingOp>(l, table, ids),
                                          scalar(std::sqrt((float)width()), l));
    int64_t n = cast<RankedTensorType>(positions.getType()).getShape()[0];
    if (n != steps)
      positions = b.create<mlir::attn::SliceOp>(l, positions, b.getDenseI64ArrayAttr({0, 0}),
                                                b.getDenseI64ArrayAttr({steps, width()}));
    return drop(dropSite, b.create<mlir::attn::AddOp>(l, x, positions), l);
  }

  //===- dropout -----------------------------------------------------------------------===//

  // @loss takes one keep mask [B, T, d] per site (`dropout.<site>`, 0 or 1 / (1 - p), drawn
  // by the trainer every step, all ones in validation); other entries have none.
  llvm::StringMap<Value> dropout;

  Value drop(const std::string &site, Value x, Location l) {
    auto it = dropout.find(site);
    return it == dropout.end() ? x : Value(b.create<mlir::attn::MulOp>(l, x, it->second));
  }

  // The dropout sites of a stack: its embedding and each sublayer's output.
  void addSites(SmallVectorImpl<std::pair<std::string, int64_t>> &sites, const std::string &stack,
                int64_t layers, ArrayRef<const char *> sublayers, int64_t steps) {
    if (t().dropout <= 0)
      return;
    sites.push_back({stack + ".embedding", steps});
    for (int64_t layer = 0; layer < layers; ++layer)
      for (const char *sub : sublayers)
        sites.push_back({stack + ".layer" + std::to_string(layer) + "." + sub, steps});
  }

  // @loss(data..., dropout masks...) -> loss; `dropout` holds the masks while it is built.
  func::FuncOp lossEntry(ArrayRef<Type> dataTypes, ArrayRef<StringRef> dataNames,
                         ArrayRef<std::pair<std::string, int64_t>> sites, Location l) {
    SmallVector<Type> types(dataTypes);
    SmallVector<std::string> names(dataNames.begin(), dataNames.end());
    for (const auto &[site, steps] : sites) {
      types.push_back(f32({spec.train.batchSize, steps, width()}));
      names.push_back(std::string(::attn::names::kDropoutPrefix) + "." + site);
    }
    SmallVector<StringRef> refs(names.begin(), names.end());
    auto loss = entry("loss", types, refs, {f32({})}, {"loss"}, l);
    for (auto [i, site] : llvm::enumerate(sites))
      dropout[site.first] = loss.getArgument(dataTypes.size() + i);
    return loss;
  }

  //===- layers ------------------------------------------------------------------------===//

  // One sublayer with its residual connection and norm `norm`:
  //   post  x = LayerNorm(x + dropout(f(x)))
  //   pre   x = x + dropout(f(LayerNorm(x)))
  template <typename F>
  Value residual(Value x, const std::string &norm, const std::string &site, F f, Location l) {
    if (t().norm == Norm::Pre)
      return b.create<mlir::attn::AddOp>(l, x, drop(site, f(layerNorm(norm, x, l)), l));
    return layerNorm(norm, b.create<mlir::attn::AddOp>(l, x, drop(site, f(x), l)), l);
  }

  mlir::attn::MultiHeadAttentionOp multiHead(const AttentionParams &w, Value query, Value memory,
                                             Value keyMask, bool causal, Location l) {
    return b.create<mlir::attn::MultiHeadAttentionOp>(
        l, query, memory, w.wq, w.bq, w.wk, w.bk, w.wv, w.bv, w.wo, w.bo, keyMask,
        b.getI64IntegerAttr(heads()), b.getBoolAttr(causal));
  }

  //===- your own attention (model.transformer.attention) ------------------------------===//

  // The self-attention of layer `prefix` over x [B, T, d], padding `keyMask` [B, T] (null:
  // none): multi-head attention, or with a score_mod or mask, the same projections around
  // one attn.fused_attention whose regions compute them.
  Value selfAttention(const std::string &prefix, const AttentionParams &w, Value x, Value keyMask,
                      bool causal, Location l) {
    if (!t().attention.custom())
      return multiHead(w, x, x, keyMask, causal, l).getOutput();
    auto project = [&](Value weight, Value bias) {
      return mlir::attn::splitHeads(b, l, b.create<mlir::attn::DenseOp>(l, x, weight, bias),
                                    heads());
    };
    Value q = project(w.wq, w.bq), k = project(w.wk, w.bk), v = project(w.wv, w.bv);
    if (!keyMask) {
      ArrayRef<int64_t> s = cast<RankedTensorType>(x.getType()).getShape();
      keyMask = b.create<mlir::attn::ConstantOp>(
          l, DenseElementsAttr::get(f32({s[0], s[1]}), b.getF32FloatAttr(1.0f)));
    }
    Value out = customAttention(prefix, q, k, v, keyMask, causal, Value(), l);
    return b.create<mlir::attn::DenseOp>(l, mlir::attn::mergeHeads(b, l, out), w.wo, w.bo);
  }

  // attn.fused_attention of q [B, H, T, D], k and v [B, H, S, D] under keyMask [B, S] with
  // the spec's score and mask; its output [B, H, T, D]. `position` (a decoding step's,
  // [K, 1], the same in every row) is what the regions add to the query's index i: a step
  // has one query, at that position.
  Value customAttention(const std::string &prefix, Value q, Value k, Value v, Value keyMask,
                        bool causal, Value position, Location l) {
    expr::AttentionRegions r;
    r.score = mods.scoreMod.get();
    r.mask = mods.mask.get();
    r.softcap = mods.softcap;
    r.scale = 1.0f / std::sqrt((float)cast<RankedTensorType>(q.getType()).getShape()[3]);
    // The params are captured attn.params ([] or, per head, [H]: each head's regions read its
    // element; a table [H, N] as its N columns; learn: false ones not trainable), but fixed
    // scalars, constants in the regions.
    for (const expr::Param &p : mods.params) {
      if (!p.learn && !p.perHead) {
        r.constants[p.name] = p.init;
        continue;
      }
      SmallVector<int64_t> shape;
      if (p.perHead || p.columns)
        shape.push_back(heads());
      if (p.columns)
        shape.push_back(p.columns);
      Value value = b.create<mlir::attn::ParamOp>(l, f32(shape), prefix + "." + p.name,
                                                  p.alibi ? Init::alibi : Init::constant,
                                                  APFloat((float)p.init), p.learn);
      if (p.columns)
        expr::addTable(b, l, r, p.name, value);
      else
        r.captures.push_back({p.name, value, p.perHead});
    }
    if (position) // the step's query is at `position` (the same in every row)
      r.iOffset = b.create<mlir::attn::ReshapeOp>(
          l, f32({}),
          b.create<mlir::attn::SliceOp>(l, position, b.getDenseI64ArrayAttr({0, 0}),
                                        b.getDenseI64ArrayAttr({1, 1})));
    return expr::fusedAttention(b, l, q, k, v, keyMask, causal, r);
  }

  // The encoder over x [B, S, d] with mask [B, S]: self-attention and feed-forward layers,
  // then the final norm (`<stack>.norm`).
  Value encoderStack(const std::string &stack, Value x, Value mask, Location l) {
    for (int64_t layer = 0; layer < t().layers; ++layer) {
      std::string p = stack + ".layer" + std::to_string(layer);
      AttentionParams sa = attentionParams(p + ".self_attn", l);
      x = residual(
          x, p + ".norm1", p + ".attn",
          [&](Value in) {
            return selfAttention(p + ".self_attn", sa, in, mask, /*causal=*/false, l);
          },
          l);
      x = residual(x, p + ".norm2", p + ".ffn",
                   [&](Value in) { return feedForward(p, in, l); }, l);
    }
    return layerNorm(stack + ".norm", x, l);
  }

  // A decoder layer's sublayer names: norm1 self-attention, norm2 cross attention (when
  // there is a memory), then the feed-forward layer's norm.
  std::string ffnNorm(bool cross) const { return cross ? ".norm3" : ".norm2"; }

  // The decoder over y [B, T, d] (all positions at once, causal), with cross attention over
  // `memory` [B, S, d] under `memMask` when given. Returns the final norm's output.
  Value decoderStack(int64_t layers, Value y, Value memory, Value memMask, Location l) {
    bool cross = (bool)memory;
    for (int64_t layer = 0; layer < layers; ++layer) {
      std::string p = "decoder.layer" + std::to_string(layer);
      AttentionParams sa = attentionParams(p + ".self_attn", l);
      y = residual(
          y, p + ".norm1", p + ".self",
          [&](Value in) {
            return selfAttention(p + ".self_attn", sa, in, Value(), /*causal=*/true, l);
          },
          l);
      if (cross) {
        AttentionParams ca = attentionParams(p + ".cross_attn", l);
        y = residual(y, p + ".norm2", p + ".cross", [&](Value in) {
          return multiHead(ca, in, memory, memMask, /*causal=*/false, l).getOutput();
        }, l);
      }
      y = residual(y, p + ffnNorm(cross), p + ".ffn",
                   [&](Value in) { return feedForward(p, in, l); }, l);
    }
    return layerNorm("decoder.norm", y, l);
  }

  // Logits [..., V] from the decoder's output: `output.weight` [d, V], or with tie_output the
  // embedding table [V, d] transposed; `output.bias` [V].
  Value outputLayer(Value x, Value table, int64_t vocab, Location l) {
    if (!t().tieOutput)
      return dense("output", x, vocab, l);
    Value bias = param(l, "output.bias", {vocab}, Init::zeros, 0.0f);
    Value logits = b.create<mlir::attn::MatmulOp>(l, x, table, b.getBoolAttr(false),
                                                  b.getBoolAttr(true));
    return b.create<mlir::attn::AddOp>(l, logits, bias);
  }

  //===- cached decoding ---------------------------------------------------------------===//

  // What one decoding step reads and writes for a decoder layer.
  struct LayerCache {
    Value keys, values;           // self-attention [K, H, L, D], positions so far
    Value crossKeys, crossValues; // cross attention [K, H, S, D] (seq2seq)
  };

  // A step of the decoder for y [K, 1, d] at `position` p [K, 1]: `slot` [K, 1, L, 1] is one
  // at p, `seen` [K, L] one at positions <= p. Returns the final norm's output and, through
  // `caches`, each layer's keys and values with position p written; `weights` gets every
  // layer's cross-attention weights [K, H, 1, S].
  Value decoderStep(int64_t layers, Value y, Value position, Value slot, Value seen, Value memMask,
                    MutableArrayRef<LayerCache> caches, SmallVectorImpl<Value> &weights,
                    Location l) {
    bool cross = memMask != nullptr;
    auto project = [&](Value x, Value w, Value bias) {
      return mlir::attn::splitHeads(b, l, b.create<mlir::attn::DenseOp>(l, x, w, bias), heads());
    };
    auto attend = [&](const AttentionParams &w, Value q, Value keys, Value values, Value mask,
                      Value *weightsOut) {
      auto att = b.create<mlir::attn::ScaledDotProductAttentionOp>(
          l, project(q, w.wq, w.bq), keys, values, mask, b.getBoolAttr(false));
      if (weightsOut)
        *weightsOut = att.getWeights();
      return Value(b.create<mlir::attn::DenseOp>(
          l, mlir::attn::mergeHeads(b, l, att.getOutput()), w.wo, w.bo));
    };
    for (int64_t layer = 0; layer < layers; ++layer) {
      std::string p = "decoder.layer" + std::to_string(layer);
      LayerCache &c = caches[layer];
      AttentionParams sa = attentionParams(p + ".self_attn", l);
      y = residual(y, p + ".norm1", p + ".self", [&](Value in) {
        // The cache is zero at p, so adding the one-hot times the new row writes it.
        c.keys = b.create<mlir::attn::AddOp>(
            l, c.keys, b.create<mlir::attn::MulOp>(l, slot, project(in, sa.wk, sa.bk)));
        c.values = b.create<mlir::attn::AddOp>(
            l, c.values, b.create<mlir::attn::MulOp>(l, slot, project(in, sa.wv, sa.bv)));
        if (t().attention.custom()) // the spec's score, with i = p
          return Value(b.create<mlir::attn::DenseOp>(
              l,
              mlir::attn::mergeHeads(b, l,
                                     customAttention(p + ".self_attn", project(in, sa.wq, sa.bq),
                                                     c.keys, c.values, seen, false, position, l)),
              sa.wo, sa.bo));
        return attend(sa, in, c.keys, c.values, seen, nullptr);
      }, l);
      if (cross) {
        AttentionParams ca = attentionParams(p + ".cross_attn", l);
        Value w;
        y = residual(y, p + ".norm2", p + ".cross", [&](Value in) {
          return attend(ca, in, c.crossKeys, c.crossValues, memMask, &w);
        }, l);
        weights.push_back(w);
      }
      y = residual(y, p + ffnNorm(cross), p + ".ffn",
                   [&](Value in) { return feedForward(p, in, l); }, l);
    }
    return layerNorm("decoder.norm", y, l);
  }

  // The longest decode: the cache's and the decoder positions' length L.
  int64_t decodeLength() const {
    return std::max(options.targetLength, spec.decode.maxLength);
  }
  // The seq2seq decoder's positions [L, d] (learned ones: for the target length).
  Value decoderPositions(Location l) {
    return positionTable("decoder.positions", decodeLength(), l, options.targetLength);
  }

  // From position [K, 1] (a float, the same in every row or not): slot [K, 1, L, 1] one at
  // p, seen [K, L] one at positions <= p, and the position's vector [K, 1, d] of `table`.
  struct StepPosition {
    Value slot, seen, vector;
  };
  StepPosition stepPosition(Value position, Value table, Location l) {
    int64_t rows = cast<RankedTensorType>(position.getType()).getShape()[0];
    int64_t length = cast<RankedTensorType>(table.getType()).getShape()[0];
    SmallVector<float> iota;
    for (int64_t j = 0; j < length; ++j)
      iota.push_back((float)j);
    Value js = b.create<mlir::attn::ConstantOp>(l, DenseElementsAttr::get(f32({1, length}),
                                                                         ArrayRef<float>(iota)));
    Value oneHot = b.create<mlir::attn::EqOp>(l, js, position); // [K, L]
    // p - j + 0.5 > 0  <=>  j <= p
    Value seen = b.create<mlir::attn::StepOp>(
        l, b.create<mlir::attn::AddOp>(l, b.create<mlir::attn::SubOp>(l, position, js),
                                       scalar(0.5f, l)));
    Value vector = b.create<mlir::attn::MatmulOp>(l, oneHot, table, b.getBoolAttr(false),
                                                  b.getBoolAttr(false));
    StepPosition s;
    s.slot = b.create<mlir::attn::ReshapeOp>(l, f32({rows, 1, length, 1}), oneHot);
    s.seen = seen;
    s.vector = b.create<mlir::attn::ReshapeOp>(l, f32({rows, 1, width()}), vector);
    return s;
  }

  // token [K] at `pos` -> its input vector [K, 1, d].
  Value embedStep(Value table, Value token, const StepPosition &pos, Location l) {
    int64_t rows = cast<RankedTensorType>(token.getType()).getShape()[0];
    Value e = b.create<mlir::attn::EmbeddingOp>(l, table, token); // [K, d]
    Value x = b.create<mlir::attn::MulOp>(
        l, b.create<mlir::attn::ReshapeOp>(l, f32({rows, 1, width()}), e),
        scalar(std::sqrt((float)width()), l));
    return b.create<mlir::attn::AddOp>(l, x, pos.vector);
  }

  // The entry names and types of per-layer keys and values [rows, H, length, D], layer by
  // layer (k, then v): `cache` (self-attention) or `cross` (the encoder's, projected).
  void cacheSignature(int64_t layers, int64_t rows, int64_t length, SmallVectorImpl<Type> &types,
                      SmallVectorImpl<std::string> &names, const char *kind = "cache") {
    for (int64_t layer = 0; layer < layers; ++layer)
      for (const char *part : {"k", "v"}) {
        types.push_back(f32({rows, heads(), length, headWidth()}));
        names.push_back(std::string(kind) + ".layer" + std::to_string(layer) + "." + part);
      }
  }

  // The weights plots show, [K, S]: decode.attention_layer's cross attention, one head or
  // the mean over heads (checkConsistency keeps both within the model).
  Value plotWeights(ArrayRef<Value> weights, Location l) {
    int64_t layer = spec.decode.attentionLayer > 0 ? spec.decode.attentionLayer - 1
                                                   : (int64_t)weights.size() - 1;
    Value w = weights[layer]; // [K, H, 1, S]
    ArrayRef<int64_t> s = cast<RankedTensorType>(w.getType()).getShape();
    if (spec.decode.attentionHead > 0) {
      int64_t head = spec.decode.attentionHead - 1;
      w = b.create<mlir::attn::SliceOp>(l, w, b.getDenseI64ArrayAttr({0, head, 0, 0}),
                                        b.getDenseI64ArrayAttr({s[0], 1, 1, s[3]}));
    } else {
      w = b.create<mlir::attn::ReduceMeanOp>(l, w, b.getDenseI64ArrayAttr({1}),
                                             b.getBoolAttr(true));
    }
    return b.create<mlir::attn::ReshapeOp>(l, f32({s[0], s[3]}), w);
  }

  //===- seq2seq -----------------------------------------------------------------------===//

  // One source table, one target table, or one for both (share_embeddings: the vocabularies
  // are one, built from both sides).
  Value sourceTable() {
    return embeddingTable(t().shareEmbeddings ? "embedding" : "encoder.embedding",
                          options.sourceVocab);
  }
  Value targetTable() {
    return embeddingTable(t().shareEmbeddings ? "embedding" : "decoder.embedding",
                          options.targetVocab);
  }

  Value encode(Value src, Value mask, Location l) {
    // data.max_len rows (the full program's source length) in every program, so that the
    // programs of decode.buckets share a learned table.
    int64_t rows = std::max<int64_t>(spec.data.maxLen, options.sourceLength);
    Value x = embed(sourceTable(), positionTable("encoder.positions", rows, l), src,
                    "encoder.embedding", l);
    return encoderStack("encoder", x, mask, l);
  }

  // Logits [K, T, V] for target inputs tgt_in [K, T] (teacher forcing).
  Value decodeAll(Value memory, Value srcMask, Value tgtIn, Location l) {
    Value table = targetTable();
    Value y = embed(table, decoderPositions(l), tgtIn, "decoder.embedding", l);
    y = decoderStack(decoderLayers(), y, memory, srcMask, l);
    return outputLayer(y, table, options.targetVocab, l);
  }

  //   @loss(src [B,S], src_mask [B,S], tgt_in [B,T], tgt_out [B,T], dropout...) -> loss
  //   @encode(src [K,S], src_mask [K,S]) -> (position [K,1], cache.layer<l>.k/v
  //       [K,H,L,D] (zeros), cross.layer<l>.k/v [K,H,S,D])
  //   @decode_step(token [K], position, cache..., cross..., src_mask)
  //       -> (log_probs [K,V], position + 1, cache'..., attention [K,S])
  //   @decode_full(src, src_mask, tgt_in [K,L]) -> log_probs [K,L,V]: every position at
  //       once, for decoding without the cache (attnc translate --no-cache)
  void encoderDecoder(ModuleOp module) {
    int64_t batch = spec.train.batchSize, srcLen = options.sourceLength;
    int64_t tgtLen = options.targetLength, vocab = options.targetVocab;
    Location l = tloc();

    b.setInsertionPointToEnd(module.getBody());
    SmallVector<std::pair<std::string, int64_t>> sites;
    addSites(sites, "encoder", t().layers, {"attn", "ffn"}, srcLen);
    addSites(sites, "decoder", decoderLayers(), {"self", "cross", "ffn"}, tgtLen);
    auto loss = lossEntry({i32({batch, srcLen}), f32({batch, srcLen}), i32({batch, tgtLen}),
                           i32({batch, tgtLen})},
                          {"src", "src_mask", "tgt_in", "tgt_out"}, sites, l);
    Value memory = encode(loss.getArgument(0), loss.getArgument(1), l);
    Value logits = decodeAll(memory, loss.getArgument(1), loss.getArgument(2), l);
    dropout.clear();
    returnPaddedCrossEntropy(logits, loss.getArgument(3), l);

    int64_t rows = spec.decode.beam > 1 ? spec.decode.beam : spec.decode.batch;
    SmallVector<Type> carried = {f32({rows, 1})}, fixed;
    SmallVector<std::string> carriedNames = {::attn::names::kPosition}, fixedNames;
    cacheSignature(decoderLayers(), rows, decodeLength(), carried, carriedNames);
    cacheSignature(decoderLayers(), rows, srcLen, fixed, fixedNames, "cross");

    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> encodeTypes(carried);
    encodeTypes.append(fixed);
    SmallVector<StringRef> encodeNames;
    for (const std::string &n : carriedNames)
      encodeNames.push_back(n);
    for (const std::string &n : fixedNames)
      encodeNames.push_back(n);
    auto srcType = i32({rows, srcLen});
    auto maskType = f32({rows, srcLen});
    auto enc = entry("encode", {srcType, maskType}, {"src", "src_mask"}, encodeTypes,
                     encodeNames, l);
    Value mem = encode(enc.getArgument(0), enc.getArgument(1), l);
    SmallVector<Value> initial = zerosFor(carried, l);
    for (int64_t layer = 0; layer < decoderLayers(); ++layer) {
      std::string p = "decoder.layer" + std::to_string(layer) + ".cross_attn";
      AttentionParams ca = attentionParams(p, l);
      for (auto [w, bias] : {std::pair(ca.wk, ca.bk), std::pair(ca.wv, ca.bv)})
        initial.push_back(
            mlir::attn::splitHeads(b, l, b.create<mlir::attn::DenseOp>(l, mem, w, bias), heads()));
    }
    b.create<func::ReturnOp>(l, initial);

    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> stepTypes = {i32({rows})};
    SmallVector<StringRef> stepNames = {"token"};
    stepTypes.append(encodeTypes);
    stepNames.append(encodeNames);
    stepTypes.push_back(maskType);
    stepNames.push_back("src_mask");
    SmallVector<Type> stepResults = {f32({rows, vocab})};
    stepResults.append(carried);
    stepResults.push_back(maskType);
    SmallVector<StringRef> stepResultNames = {::attn::names::kLogProbs};
    for (const std::string &n : carriedNames)
      stepResultNames.push_back(n);
    stepResultNames.push_back(::attn::names::kAttention);
    auto step = entry("decode_step", stepTypes, stepNames, stepResults, stepResultNames, l);
    ValueRange args = step.getArguments();
    Value position = args[1];
    SmallVector<LayerCache> caches(decoderLayers());
    for (int64_t layer = 0; layer < decoderLayers(); ++layer) {
      caches[layer].keys = args[2 + 2 * layer];
      caches[layer].values = args[3 + 2 * layer];
      caches[layer].crossKeys = args[2 + 2 * decoderLayers() + 2 * layer];
      caches[layer].crossValues = args[3 + 2 * decoderLayers() + 2 * layer];
    }
    Value table = targetTable();
    StepPosition pos = stepPosition(position, decoderPositions(l), l);
    Value y = embedStep(table, args[0], pos, l);
    SmallVector<Value> weights;
    y = decoderStep(decoderLayers(), y, position, pos.slot, pos.seen, args.back(), caches, weights,
                    l);
    Value stepLogits = outputLayer(
        b.create<mlir::attn::ReshapeOp>(l, f32({rows, width()}), y), table, vocab, l);
    SmallVector<Value> outs = {logSoftmax(stepLogits, l),
                               b.create<mlir::attn::AddOp>(l, position, scalar(1.0f, l))};
    for (const LayerCache &c : caches)
      outs.append({c.keys, c.values});
    outs.push_back(plotWeights(weights, l));
    b.create<func::ReturnOp>(l, outs);

    if (!options.decodeFull)
      return;
    b.setInsertionPointToEnd(module.getBody());
    auto full = entry("decode_full", {srcType, maskType, i32({rows, decodeLength()})},
                      {"src", "src_mask", "tgt_in"}, {f32({rows, decodeLength(), vocab})},
                      {::attn::names::kLogProbs}, l);
    Value fullMemory = encode(full.getArgument(0), full.getArgument(1), l);
    b.create<func::ReturnOp>(
        l, logSoftmax(decodeAll(fullMemory, full.getArgument(1), full.getArgument(2), l), l));
  }

  //===- lm ----------------------------------------------------------------------------===//

  //   @loss(tokens [B,T], next [B,T], dropout...) -> cross-entropy over every position
  //   @step(token [1], position [1,1], cache.layer<l>.k/v [1,H,T,D]...)
  //       -> (logits [1,V], position + 1, cache'...), for sampling (at most T positions)
  //   with --no-cache also @step_full(tokens [1,T]) -> logits [1,T,V] (attn/decode/Sample.h)
  void decoderOnly(ModuleOp module) {
    int64_t batch = spec.train.batchSize, window = spec.data.window, vocab = options.vocabSize;
    Location l = tloc();
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<std::pair<std::string, int64_t>> sites;
    addSites(sites, "decoder", t().layers, {"self", "ffn"}, window);
    auto loss = lossEntry({i32({batch, window}), i32({batch, window})}, {"tokens", "next"},
                          sites, l);
    Value table = embeddingTable("embedding", vocab);
    Value y = embed(table, positionTable("positions", window, l), loss.getArgument(0),
                    "decoder.embedding", l);
    y = decoderStack(t().layers, y, Value(), Value(), l);
    Value logits = outputLayer(y, table, vocab, l);
    dropout.clear();
    returnPaddedCrossEntropy(logits, loss.getArgument(1), l, /*ignore=*/-1);

    // The sampler's step: one position of one sequence, the caches in and out.
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> types = {i32({1}), f32({1, 1})};
    SmallVector<std::string> names = {"token", ::attn::names::kPosition};
    cacheSignature(t().layers, 1, window, types, names);
    SmallVector<Type> results(types);
    results[0] = f32({1, vocab});
    SmallVector<StringRef> refs(names.begin(), names.end()), resultRefs(refs);
    resultRefs[0] = "logits";
    auto step = entry("step", types, refs, results, resultRefs, l);
    // The caches hold `window` positions: the sampler restarts them when they are full.
    step->setAttr(::attn::names::kCapacityAttr, b.getI64IntegerAttr(window));
    ValueRange args = step.getArguments();
    SmallVector<LayerCache> caches(t().layers);
    for (int64_t layer = 0; layer < t().layers; ++layer) {
      caches[layer].keys = args[2 + 2 * layer];
      caches[layer].values = args[3 + 2 * layer];
    }
    table = embeddingTable("embedding", vocab);
    StepPosition pos = stepPosition(args[1], positionTable("positions", window, l), l);
    Value x = embedStep(table, args[0], pos, l);
    SmallVector<Value> unused;
    x = decoderStep(t().layers, x, args[1], pos.slot, pos.seen, Value(), caches, unused, l);
    SmallVector<Value> outs = {
        outputLayer(b.create<mlir::attn::ReshapeOp>(l, f32({1, width()}), x), table, vocab, l),
        b.create<mlir::attn::AddOp>(l, args[1], scalar(1.0f, l))};
    for (const LayerCache &c : caches)
      outs.append({c.keys, c.values});
    b.create<func::ReturnOp>(l, outs);

    if (!options.decodeFull)
      return;
    // The step without the caches (--no-cache): the training network over one window, which
    // the sampler reads at the last token so far; the reference the cached @step must equal.
    b.setInsertionPointToEnd(module.getBody());
    auto full = entry(::attn::names::kStepFull, {i32({1, window})}, {"tokens"},
                      {f32({1, window, vocab})}, {"logits"}, l);
    table = embeddingTable("embedding", vocab);
    Value all = embed(table, positionTable("positions", window, l), full.getArgument(0),
                      "decoder.embedding", l);
    all = decoderStack(t().layers, all, Value(), Value(), l);
    b.create<func::ReturnOp>(l, outputLayer(all, table, vocab, l));
  }

  //===- tag, classify -----------------------------------------------------------------===//

  //   @loss(src [B,S], src_mask [B,S], tags [B,S] | label [B], dropout...) -> cross-entropy
  //   @forward(src, src_mask) -> scores [B,S,V] | [B,V]
  // classify reads the mean of the real tokens' outputs.
  void encoderOnly(ModuleOp module) {
    bool tagging = spec.task == Task::Tag;
    int64_t batch = spec.train.batchSize, steps = options.sourceLength;
    int64_t labels = options.targetVocab;
    Location l = tloc();
    auto network = [&](Value src, Value mask) {
      Value x = embed(embeddingTable("embedding", options.sourceVocab),
                      positionTable("encoder.positions", steps, l), src, "encoder.embedding", l);
      x = encoderStack("encoder", x, mask, l);
      if (!tagging) {
        Value mask3 = b.create<mlir::attn::ReshapeOp>(l, f32({batch, steps, 1}), mask);
        auto axis = b.getDenseI64ArrayAttr({1});
        Value sum = b.create<mlir::attn::ReduceSumOp>(
            l, b.create<mlir::attn::MulOp>(l, x, mask3), axis, b.getBoolAttr(false));
        Value count = b.create<mlir::attn::MaximumOp>(
            l, b.create<mlir::attn::ReduceSumOp>(l, mask3, axis, b.getBoolAttr(false)),
            scalar(1.0f, l));
        x = b.create<mlir::attn::DivOp>(l, sum, count);
      }
      return dense("output", x, labels, loc(spec.model.output.loc));
    };

    b.setInsertionPointToEnd(module.getBody());
    SmallVector<std::pair<std::string, int64_t>> sites;
    addSites(sites, "encoder", t().layers, {"attn", "ffn"}, steps);
    auto labelType = tagging ? i32({batch, steps}) : i32({batch});
    auto loss = lossEntry({i32({batch, steps}), f32({batch, steps}), labelType},
                          {"src", "src_mask", tagging ? "tags" : "label"}, sites, l);
    Value scores = network(loss.getArgument(0), loss.getArgument(1));
    dropout.clear();
    returnPaddedCrossEntropy(scores, loss.getArgument(2), l);

    b.setInsertionPointToEnd(module.getBody());
    auto forward = entry("forward", {i32({batch, steps}), f32({batch, steps})},
                         {"src", "src_mask"},
                         {tagging ? f32({batch, steps, labels}) : f32({batch, labels})},
                         {"scores"}, l);
    b.create<func::ReturnOp>(l, network(forward.getArgument(0), forward.getArgument(1)));
  }
};

} // namespace

OwningOpRef<ModuleOp> importTransformer(const Spec &spec, MLIRContext &context,
                                        const ImportOptions &options) {
  return TransformerImporter(spec, options, context).run();
}

} // namespace attn::yaml
