// task: seq2seq with a recurrent encoder and decoder (model.rnn): the context as the initial
// state, at every step, or through an attention mechanism (model.attention).
#include "frontends/yaml/Family.h"
#include "frontends/yaml/RecurrentImporter.h"

namespace attn::yaml::recurrent {
namespace {
using mlir::attn::ScoreKind;

class Seq2SeqImporter : public RecurrentImporter {
public:
  using RecurrentImporter::RecurrentImporter;

  //===------------------------------------------------------------------------------------===//
  // Encoder-decoder (task: seq2seq)
  //===------------------------------------------------------------------------------------===//

  // The seed's encoder-decoder frameworks over `model.rnn` cells:
  //   context: initial     encoder h_T (every layer's final states) starts the decoder,
  //                        o_t = softmax(V h_t + d)                          (Sutskever et al.)
  //   context: every_step  c = V h_T; the decoder starts at zero and reads [y_{t-1}, c] at
  //                        every step, o_t = softmax(W h_t + U c + d)        (Cho et al.)
  //   model.attention      the decoder attends over every encoder state at every step
  //                        (Bahdanau et al., Luong et al.; see attentionStep)
  // Sources are right-padded; the encoder's scan keeps a row's state past its last token (a
  // mask, not a length), so its final state is the one at its last real token.
  //   @loss(src [B,S], src_mask [B,S], tgt_in [B,T], tgt_out [B,T][, teacher [B,T]]
  //         [, hard_noise [B,T,S], hard_soft [B,T]]) -> loss
  //   @encode(src [K,S], src_mask [K,S]) -> (carried..., [context [K,H]] | [memory, keys])
  //   @decode_step(token [K], carried..., [context] | [memory, keys, src_mask])
  //       -> (log_probs [K,V], carried'..., [attention [K,S]])
  // `carried` are the decoder's recurrent values: state_l (and state_l_c) per layer, and for
  // attention decoders `feed` (input feeding) and `position` (monotonic alignment).
  // `teacher` is there with scheduled sampling: 1 feeds the true previous token, 0 the
  // decoder's own most likely one; `hard_noise` and `hard_soft` with hard attention (the
  // positions' Gumbel noise and the steps that read the expectation, sampledContext).
  void entries(ModuleOp module) {
    const RnnSpec &r = *spec.model.rnn, dr = decoderRnn();
    int64_t batch = spec.train.batchSize, srcLen = options.sourceLength;
    int64_t tgtLen = options.targetLength;
    Location l = loc(spec.model.loc);
    bool sampling = spec.train.teacherForcing.schedule != TeacherSchedule::Constant ||
                    spec.train.teacherForcing.ratio < 1.0;
    Type f32 = b.getF32Type(), i32 = b.getI32Type();

    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> lossInputs = {
        RankedTensorType::get({batch, srcLen}, i32), RankedTensorType::get({batch, srcLen}, f32),
        RankedTensorType::get({batch, tgtLen}, i32), RankedTensorType::get({batch, tgtLen}, i32)};
    SmallVector<StringRef> lossNames = {"src", "src_mask", "tgt_in", "tgt_out"};
    if (sampling) {
      lossInputs.push_back(RankedTensorType::get({batch, tgtLen}, f32));
      lossNames.push_back(::attn::names::kTeacher);
    }
    if (hard()) {
      lossInputs.push_back(RankedTensorType::get({batch, tgtLen, srcLen}, f32));
      lossNames.push_back(::attn::names::kHardNoise);
      lossInputs.push_back(RankedTensorType::get({batch, tgtLen}, f32));
      lossNames.push_back(::attn::names::kHardSoft);
    }
    auto loss = lossEntry(lossInputs, lossNames, {{"encoder", srcLen}, {"decoder", tgtLen}}, l);
    Encoded enc = encoder(r, loss.getArgument(0), loss.getArgument(1), l);
    if (hard()) {
      unsigned first = sampling ? 5 : 4; // after the data (and scheduled sampling's coins)
      draws.noise = loss.getArgument(first);
      draws.soft = loss.getArgument(first + 1);
      draws.real = realTargets(loss.getArgument(3), l);
    }
    Value logits = sampling ? decodeSampled(dr, enc, loss.getArgument(1), loss.getArgument(2),
                                            loss.getArgument(4), l)
                            : decodeForced(dr, enc, loss.getArgument(1), loss.getArgument(2), l);
    dropout.clear();
    if (hard())
      returnHardAttentionLoss(logits, loss.getArgument(3), l);
    else
      returnPaddedCrossEntropy(logits, loss.getArgument(3), l);
    draws = {};

    // The decoding entries, for K rows at once.
    int64_t rows = spec.decode.beam > 1 ? spec.decode.beam : spec.decode.batch;
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> carried = carriedTypes(dr, rows);
    SmallVector<std::string> carriedNames = carriedValueNames(dr);
    // Read at every step, never changed: encode's results (and its src_mask input).
    SmallVector<Type> fixed;
    SmallVector<std::string> fixedNames;
    if (chosContext()) {
      fixed.push_back(RankedTensorType::get({rows, r.hidden}, f32));
      fixedNames.push_back("context");
    }
    if (attention()) {
      fixed.push_back(RankedTensorType::get({rows, srcLen, memoryWidth()}, f32));
      fixedNames.push_back("memory");
      if (additive()) {
        fixed.push_back(RankedTensorType::get({rows, srcLen, attentionDim(dr)}, f32));
        fixedNames.push_back("keys");
      }
    }
    SmallVector<Type> encodeResults(carried);
    encodeResults.append(fixed.begin(), fixed.end());
    SmallVector<StringRef> encodeNames;
    for (const std::string &n : carriedNames)
      encodeNames.push_back(n);
    for (const std::string &n : fixedNames)
      encodeNames.push_back(n);
    auto srcType = RankedTensorType::get({rows, srcLen}, i32);
    auto maskType = RankedTensorType::get({rows, srcLen}, f32);
    auto encode = entry("encode", {srcType, maskType}, {"src", "src_mask"}, encodeResults,
                        encodeNames, l);
    Encoded e = encoder(r, encode.getArgument(0), encode.getArgument(1), l);
    SmallVector<Value> initial = initialCarried(dr, e, l);
    if (chosContext())
      initial.push_back(e.context);
    if (attention()) {
      initial.push_back(e.memory);
      if (additive())
        initial.push_back(b.create<mlir::attn::MatmulOp>(l, e.memory, keyWeight(dr, l), false,
                                                         false));
    }
    b.create<func::ReturnOp>(l, initial);

    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> stepInputs = {RankedTensorType::get({rows}, i32)};
    SmallVector<StringRef> stepNames = {"token"};
    stepInputs.append(encodeResults.begin(), encodeResults.end());
    stepNames.append(encodeNames.begin(), encodeNames.end());
    if (attention()) {
      stepInputs.push_back(maskType);
      stepNames.push_back("src_mask");
    }
    SmallVector<Type> stepResults = {RankedTensorType::get({rows, options.targetVocab}, f32)};
    stepResults.append(carried.begin(), carried.end());
    SmallVector<StringRef> stepResultNames = {::attn::names::kLogProbs};
    for (const std::string &n : carriedNames)
      stepResultNames.push_back(n);
    if (attention()) {
      stepResults.push_back(maskType);
      stepResultNames.push_back(::attn::names::kAttention);
    }
    auto step = entry("decode_step", stepInputs, stepNames, stepResults, stepResultNames, l);
    Decoder dec = decoderParams(dr, l);
    ValueRange args = step.getArguments();
    Value x = b.create<mlir::attn::EmbeddingOp>(l, dec.embedding, args[0]);
    ValueRange carriedIn = args.slice(1, carried.size());
    Memory mem;
    Value context;
    if (chosContext())
      context = args[1 + carried.size()];
    if (attention()) {
      mem.values = args[1 + carried.size()];
      mem.keys = additive() ? args[2 + carried.size()] : Value();
      mem.mask = args.back();
      mem.length = sourceLengths(mem.mask, l);
    }
    Step next = decoderStepWith(dr, dec, mem, context, x, carriedIn, l);
    SmallVector<Value> outs = {logSoftmax(readout(dec, next.features, context, l), l)};
    outs.append(next.carried.begin(), next.carried.end());
    if (attention())
      outs.push_back(next.weights);
    b.create<func::ReturnOp>(l, outs);
  }

  // The attention mechanisms (model.attention.type), one row each: what the decoder step asks
  // of them. A new mechanism is a row (and its step, attentionStep).
  struct MechanismRule {
    AttentionType type;
    bool newState; // scores s_i and reads h~_i = tanh(W_c [c_i; s_i]) (Luong); else s_{i-1}
    bool windowed; // a window [p_i - D, p_i + D], optionally Gaussian-weighted (local)
    bool sampled;  // reads one encoder state at a drawn position (hard), with `score`
  };
  static const MechanismRule &mechanismRule(AttentionType type) {
    static const MechanismRule rules[] = {{AttentionType::Bahdanau, false, false, false},
                                          {AttentionType::Luong, true, false, false},
                                          {AttentionType::Local, true, true, false},
                                          {AttentionType::Hard, false, false, true}};
    return rules[static_cast<size_t>(type)];
  }
  // The scores (model.attention.score, for the Luong mechanisms), one row each: the kind of
  // attn.attention_scores they are, and the weight it reads. Concat is additive:
  // v^T tanh(W s + U h) over projected query and keys (the fused kernel's).
  struct ScoreRule {
    Score score;
    ScoreKind kind;
    bool general;     // W [H, M] between query and keys
    bool temperature; // tau [1]
  };
  static const ScoreRule &scoreRule(Score score) {
    static const ScoreRule rules[] = {{Score::Dot, ScoreKind::dot, false, false},
                                      {Score::General, ScoreKind::general, true, false},
                                      {Score::Concat, ScoreKind::additive, false, false},
                                      {Score::Cosine, ScoreKind::cosine, false, true}};
    return rules[static_cast<size_t>(score)];
  }

  bool chosContext() const { return spec.model.seq2seq.context == Context::EveryStep; }
  bool attention() const { return spec.task == Task::Seq2seq && spec.model.attention.has_value(); }
  const MechanismRule &mechanism() const { return mechanismRule(spec.model.attention->type); }
  const ScoreRule &score() const { return scoreRule(spec.model.attention->score); }
  // Bahdanau's score and the concat score are additive: v^T tanh(W s + U h).
  bool additive() const {
    return attention() &&
           (mechanism().type == AttentionType::Bahdanau || score().kind == ScoreKind::additive);
  }
  bool hard() const { return attention() && mechanism().sampled; }
  bool luong() const { return attention() && mechanism().newState; }
  bool local() const { return attention() && mechanism().windowed; }
  bool monotonic() const { return local() && spec.model.attention->align == Align::Monotonic; }
  bool inputFeeding() const { return luong() && spec.model.attention->inputFeeding; }

  // The encoder's output at every source position: both directions side by side for a
  // bidirectional concat encoder.
  int64_t memoryWidth() {
    const RnnSpec &r = *spec.model.rnn;
    return outWidth(r) * (r.bidirectional && r.merge == Merge::Concat ? 2 : 1);
  }
  int64_t attentionDim(const RnnSpec &r) {
    return spec.model.attention->dim > 0 ? spec.model.attention->dim : r.hidden;
  }

  struct Encoded {
    SmallVector<Value> finals;     // every layer's final states, layer by layer (h[, c])
    SmallVector<Value> backFinals; // bidirectional: the reversed directions' (at token 0)
    Value context;                 // every_step: c = V h_T [B, H]
    Value memory;                  // attention: the top layer's states [B, S, M]
  };

  // The encoder over src ids [B, S] with src_mask [B, S] (1 at tokens, 0 at padding).
  Encoded encoder(const RnnSpec &r, Value src, Value mask, Location l) {
    Value table = param(loc(spec.model.embedding.loc), "encoder.embedding",
                        {options.sourceVocab, spec.model.embedding.dim}, Init::normal, 1.0f);
    Value seq = b.create<mlir::attn::EmbeddingOp>(l, table, src);
    Value mask3 = perStep(mask, l);
    Encoded enc;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      Masked m = maskedDirection(r, "encoder", layer, seq, mask3, /*reverse=*/false, l);
      enc.finals.append(m.finals.begin(), m.finals.end());
      Value steps = m.steps;
      if (r.bidirectional) {
        Masked back = maskedDirection(r, "encoder", layer, seq, mask3, /*reverse=*/true, l);
        enc.backFinals.append(back.finals.begin(), back.finals.end());
        steps = merge(r, steps, back.steps, l);
      }
      seq = layer + 1 < r.layers ? dropBetweenLayers("encoder", layer, steps, l) : steps;
    }
    enc.memory = seq;
    if (chosContext()) {
      Value v = param(l, "encoder.context.weight", {outWidth(r), r.hidden}, Init::uniform,
                      1.0f / std::sqrt((float)outWidth(r)));
      enc.context = b.create<mlir::attn::MatmulOp>(l, enc.finals[enc.finals.size() -
                                                                 stateTypes(r, 1).size()],
                                                   v, false, false);
    }
    return enc;
  }




  // The decoder's initial recurrent values (see carriedTypes): the encoder's final states
  // (context: initial, and attention over a unidirectional encoder), zeros (every_step), or,
  // for attention over a bidirectional encoder (or one of another width), a bridge
  // s_0 = tanh(W [h_fwd; h_bwd] + b) per layer (cells start at zero). Then zeros for `feed`
  // and `position`. `r` is the decoder's spec (decoderRnn).
  SmallVector<Value> initialCarried(const RnnSpec &r, const Encoded &enc, Location l) {
    int64_t batch = cast<RankedTensorType>(enc.finals[0].getType()).getShape()[0];
    size_t perLayer = stateTypes(r, 1).size();
    SmallVector<Value> out;
    if (chosContext()) {
      for (int64_t layer = 0; layer < r.layers; ++layer)
        for (Value z : zerosFor(stateTypes(r, batch), l))
          out.push_back(z);
    } else if (!r.bidirectional && r.hidden == spec.model.rnn->hidden) {
      out = enc.finals;
    } else {
      size_t encPerLayer = stateTypes(*spec.model.rnn, 1).size();
      for (int64_t layer = 0; layer < r.layers; ++layer) {
        Value both = enc.finals[layer * encPerLayer];
        if (r.bidirectional)
          both = merge(r, both, enc.backFinals[layer * encPerLayer], l);
        out.push_back(b.create<mlir::attn::TanhOp>(
            l, dense("bridge.layer" + std::to_string(layer), both, outWidth(r), l)));
        if (perLayer == 2)
          out.push_back(zerosFor({stateTypes(r, batch)[1]}, l)[0]);
      }
    }
    if (inputFeeding())
      out.push_back(zerosFor({RankedTensorType::get({batch, outWidth(r)}, b.getF32Type())}, l)[0]);
    if (monotonic())
      out.push_back(zerosFor({RankedTensorType::get({batch, 1}, b.getF32Type())}, l)[0]);
    return out;
  }

  // The types of initialCarried for `rows` rows, and their entry names.
  SmallVector<Type> carriedTypes(const RnnSpec &r, int64_t rows) {
    SmallVector<Type> types;
    for (int64_t layer = 0; layer < r.layers; ++layer)
      for (Type t : stateTypes(r, rows))
        types.push_back(t);
    if (inputFeeding())
      types.push_back(RankedTensorType::get({rows, outWidth(r)}, b.getF32Type()));
    if (monotonic())
      types.push_back(RankedTensorType::get({rows, 1}, b.getF32Type()));
    return types;
  }
  SmallVector<std::string> carriedValueNames(const RnnSpec &r) {
    SmallVector<std::string> names;
    for (int64_t layer = 0; layer < r.layers; ++layer)
      for (size_t k = 0; k < stateTypes(r, 1).size(); ++k)
        names.push_back("state" + std::to_string(layer) + (k ? "_c" : ""));
    if (inputFeeding())
      names.push_back("feed");
    if (monotonic())
      names.push_back(::attn::names::kPosition);
    return names;
  }

  // The decoder's weights, made before its scan so the body reads them from above.
  struct Decoder {
    Value embedding;                 // [Vt, E]
    SmallVector<LayerParams> layers;
    Value outWeight, outBias;        // [F, Vt], [Vt]: F the width of Step::features
    Value contextWeight;             // every_step: U [H, Vt]
    // model.attention (null where the variant has none):
    Value query, v;                  // additive: W [H, A], v [A] (U is keyWeight)
    Value general;                   // score general: W [H, M]
    Value temperature;               // score cosine: tau [1]
    Value combine;                   // luong, local: W_c [M + H, H]
    Value positionWeight, positionV; // predictive alignment: W_p [H, A], v_p [A, 1]
  };

  // U [M, A]: the additive scores' projection of the encoder states (made by @encode too).
  Value keyWeight(const RnnSpec &r, Location l) {
    int64_t m = memoryWidth();
    return param(l, "attention.key.weight", {m, attentionDim(r)}, Init::uniform,
                 1.0f / std::sqrt((float)m));
  }

  Decoder decoderParams(const RnnSpec &r, Location l) {
    Decoder d;
    int64_t vocab = options.targetVocab, e = spec.model.embedding.dim, h = outWidth(r);
    d.embedding =
        param(loc(spec.model.embedding.loc), "decoder.embedding", {vocab, e}, Init::normal, 1.0f);
    int64_t extra = chosContext() ? r.hidden : 0;
    if (attention())
      extra = luong() ? (inputFeeding() ? h : 0) : memoryWidth();
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      int64_t in = layer ? h : e + extra;
      d.layers.push_back(layerParams(r, "decoder", layer, in, /*reverse=*/false, l));
    }
    Location lo = loc(spec.model.output.loc);
    int64_t features = attention() && !luong() ? h + memoryWidth() : h;
    float scale = 1.0f / std::sqrt((float)features);
    d.outWeight = param(lo, "decoder.output.weight", {features, vocab}, Init::uniform, scale);
    d.outBias = param(lo, "decoder.output.bias", {vocab}, Init::uniform, scale);
    if (chosContext())
      d.contextWeight = param(lo, "decoder.context.weight", {r.hidden, vocab}, Init::uniform,
                              1.0f / std::sqrt((float)r.hidden));
    if (!attention())
      return d;
    Location la = loc(spec.model.attention->loc);
    int64_t m = memoryWidth(), a = attentionDim(r);
    auto uniform = [&](const std::string &name, ArrayRef<int64_t> shape, int64_t fanIn) {
      return param(la, name, shape, Init::uniform, 1.0f / std::sqrt((float)fanIn));
    };
    if (additive()) {
      d.query = uniform("attention.query.weight", {h, a}, h);
      d.v = uniform("attention.v", {a}, a);
    } else if (score().general) {
      d.general = uniform("attention.weight", {h, m}, h);
    } else if (score().temperature) {
      // tau = temperature, or temperature times a learned factor that starts at 1.
      const AttentionSpec &a = *spec.model.attention;
      d.temperature = b.create<mlir::attn::ConstantOp>(
          la, mlir::DenseElementsAttr::get(f32({1}), b.getF32FloatAttr((float)a.temperature)));
      if (a.learnTemperature)
        d.temperature = b.create<mlir::attn::MulOp>(
            la, d.temperature, param(la, "attention.temperature_scale", {1}, Init::ones, 1.0f));
    }
    if (luong())
      d.combine = uniform("attention.output.weight", {m + h, h}, m + h);
    if (local() && !monotonic()) {
      d.positionWeight = uniform("attention.position.weight", {h, a}, h);
      d.positionV = uniform("attention.position.v", {a, 1}, a);
    }
    return d;
  }

  // What an attention decoder reads at every step (null members: not needed).
  struct Memory {
    Value values; // the encoder states [B, S, M]
    Value keys;   // additive scores: U h_j [B, S, A], projected once
    Value mask;   // src_mask [B, S]
    Value length; // the real tokens of each row [B, 1] (predictive alignment's S)
  };

  Memory attentionMemory(const RnnSpec &r, const Encoded &enc, Value mask, Location l) {
    Memory mem;
    if (!attention())
      return mem;
    mem.values = enc.memory;
    if (additive())
      mem.keys = b.create<mlir::attn::MatmulOp>(l, enc.memory, keyWeight(r, l), false, false);
    mem.mask = mask;
    mem.length = sourceLengths(mask, l);
    return mem;
  }

  Value sourceLengths(Value mask, Location l) {
    return b.create<mlir::attn::ReduceSumOp>(l, mask, b.getDenseI64ArrayAttr({1}),
                                             b.getBoolAttr(true));
  }

  struct Attended {
    Value context; // [B, M]
    Value weights; // [B, S]
  };

  // The attention of `query` [B, H] over the memory (`position` [B, 1]: the step, for
  // monotonic alignment): scores, the mask (and local window), softmax, weighted sum.
  Attended attend(const Decoder &d, const Memory &mem, Value query, Value position, Location l) {
    const AttentionSpec &a = *spec.model.attention;
    Value scores;
    if (additive()) {
      Value q = b.create<mlir::attn::MatmulOp>(l, query, d.query, false, false);
      scores = b.create<mlir::attn::AttentionScoresOp>(l, q, mem.keys, d.v, ScoreKind::additive);
    } else {
      Value weight = score().temperature ? d.temperature : d.general;
      scores = b.create<mlir::attn::AttentionScoresOp>(l, query, mem.values, weight, score().kind);
    }
    Value mask = mem.mask, weighting;
    if (local()) {
      Value center;
      if (monotonic()) {
        // p_i = i, kept on the source: min(i, S - 1) = -max(-i, 1 - S).
        Value last = b.create<mlir::attn::SubOp>(l, mem.length, scalar(1.0f, l));
        center = b.create<mlir::attn::NegOp>(
            l, b.create<mlir::attn::MaximumOp>(l, b.create<mlir::attn::NegOp>(l, position),
                                               b.create<mlir::attn::NegOp>(l, last)));
      } else {
        // p_i = S sigmoid(v_p^T tanh(W_p s_i))
        Value hidden = b.create<mlir::attn::TanhOp>(
            l, b.create<mlir::attn::MatmulOp>(l, query, d.positionWeight, false, false));
        Value gate = b.create<mlir::attn::SigmoidOp>(
            l, b.create<mlir::attn::MatmulOp>(l, hidden, d.positionV, false, false));
        center = b.create<mlir::attn::MulOp>(l, mem.length, gate);
      }
      auto window = b.create<mlir::attn::LocalWindowOp>(l, center, mem.mask,
                                                        b.getI64IntegerAttr(a.window));
      mask = window.getWindowMask();
      if (a.gaussianWeighting())
        weighting = window.getGaussian();
    }
    auto att = b.create<mlir::attn::AttentionOp>(l, scores, mask, mem.values, weighting);
    if (hard())
      return {sampledContext(att.getWeights(), att.getContext(), mem, l), att.getWeights()};
    return {att.getContext(), att.getWeights()};
  }

  //===- hard attention ------------------------------------------------------------------===//

  // Hard attention's draws while a @loss is built (null members in decoding), and what its
  // decoder step hands back to the scan.
  struct Draws {
    Value noise, soft; // @loss's hard_noise [B, T, S] and hard_soft [B, T]
    Value real;        // [B, T, 1]: 1 at the real (non-pad) target steps
    // In the scan body: this step's slices ([B, S], [B, 1], [B, 1]) and, after the step,
    // its terms: log alpha at the drawn position (0 where the step read the expectation)
    // and the entropy of alpha, both [B, 1] and 0 at padded target steps.
    Value stepNoise, stepSoft, stepReal;
    Value logProb, entropy;
    // After the scan: their sums over the steps, [B, 1].
    Value totalLogProb, totalEntropy;
  } draws;

  // 1 where `targets` [B, T] holds a token, 0 at padding: [B, T, 1].
  Value realTargets(Value targets, Location l) {
    int64_t vocab = options.targetVocab;
    SmallVector<float> real(vocab, 1.0f);
    real[kPadId] = 0.0f;
    Value table = b.create<mlir::attn::ConstantOp>(
        l, mlir::DenseElementsAttr::get(f32({vocab, 1}), ArrayRef<float>(real)));
    return b.create<mlir::attn::EmbeddingOp>(l, table, targets);
  }

  // The context of a hard attention step from its weights alpha [B, S]: the encoder state at
  // s = argmax_j (log alpha_j + g_j) with Gumbel noise g (a draw from alpha; without noise,
  // the most likely position), or where the step's coin says so the expectation `expected`
  // (sum_j alpha_j h_j). Ties (equal weights, no noise) share the position evenly. Records
  // the step's log alpha_s and entropy in `draws`.
  Value sampledContext(Value alpha, Value expected, const Memory &mem, Location l) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(alpha.getType()).getShape();
    int64_t batch = shape[0], steps = shape[1], width = memoryWidth();
    auto axis = b.getDenseI64ArrayAttr({1});
    Value logAlpha =
        b.create<mlir::attn::LogOp>(l, b.create<mlir::attn::AddOp>(l, alpha, scalar(1e-30f, l)));
    Value perturbed = logAlpha;
    if (draws.stepNoise)
      perturbed = b.create<mlir::attn::AddOp>(l, perturbed, draws.stepNoise);
    // Padding can never be drawn: -1e9 below every real position.
    perturbed = b.create<mlir::attn::AddOp>(
        l, perturbed,
        b.create<mlir::attn::MulOp>(l, b.create<mlir::attn::SubOp>(l, mem.mask, scalar(1.0f, l)),
                                    scalar(1e9f, l)));
    Value best = b.create<mlir::attn::ReduceMaxOp>(l, perturbed, axis, b.getBoolAttr(true));
    Value hit = b.create<mlir::attn::EqOp>(l, perturbed, best);
    Value drawn = b.create<mlir::attn::DivOp>(
        l, hit, b.create<mlir::attn::ReduceSumOp>(l, hit, axis, b.getBoolAttr(true)));
    Value context = b.create<mlir::attn::ReshapeOp>(
        l, f32({batch, width}),
        b.create<mlir::attn::MatmulOp>(
            l, b.create<mlir::attn::ReshapeOp>(l, f32({batch, 1, steps}), drawn), mem.values, false,
            false));
    if (!draws.stepReal)
      return context;
    Value sampled = b.create<mlir::attn::SubOp>(l, scalar(1.0f, l), draws.stepSoft);
    context =
        b.create<mlir::attn::AddOp>(l, b.create<mlir::attn::MulOp>(l, draws.stepSoft, expected),
                                    b.create<mlir::attn::MulOp>(l, sampled, context));
    Value logProb = b.create<mlir::attn::ReduceSumOp>(
        l, b.create<mlir::attn::MulOp>(l, drawn, logAlpha), axis, b.getBoolAttr(true));
    draws.logProb = b.create<mlir::attn::MulOp>(l, b.create<mlir::attn::MulOp>(l, logProb, sampled),
                                                draws.stepReal);
    Value entropy = b.create<mlir::attn::NegOp>(
        l, b.create<mlir::attn::ReduceSumOp>(l, b.create<mlir::attn::MulOp>(l, alpha, logAlpha),
                                             axis, b.getBoolAttr(true)));
    draws.entropy = b.create<mlir::attn::MulOp>(l, entropy, draws.stepReal);
    return context;
  }

  // Ends a hard attention @loss: the cross-entropy (what the loss's value is), plus the
  // score-function estimator's term (Xu et al. 2015, (12)), whose value is 0 and whose
  // gradient is -(R_b - b_b) d log p(s_b) / N: R_b = log p(y_b | s_b) the sentence's
  // log-likelihood under its drawn positions s_b, log p(s_b) = sum_t log alpha_t(s_t), b_b
  // the baseline (the other sentences' mean R), N the real target tokens; and the entropy
  // bonus, whose value is 0 too and whose gradient is -lambda d sum H(alpha) / N (so that
  // validation losses and best checkpoints are cross-entropies, whatever lambda is).
  void returnHardAttentionLoss(Value logits, Value targets, Location l) {
    const AttentionSpec &a = *spec.model.attention;
    auto shape = cast<RankedTensorType>(logits.getType()).getShape();
    int64_t batch = shape[0], vocab = shape[2];
    Value loss =
        b.create<mlir::attn::CrossEntropyOp>(l, logits, targets, b.getI64IntegerAttr(kPadId),
                                             b.getF32FloatAttr(spec.train.labelSmoothing));
    // R [B]: sum over the real steps of log softmax(logits)[y], y one-hot [B, T, V] as
    // ids [V] == y (y read as a float through a [V, 1] table of the ids).
    SmallVector<float> ids(vocab);
    for (int64_t v = 0; v < vocab; ++v)
      ids[v] = (float)v;
    Value idTable = b.create<mlir::attn::ConstantOp>(
        l, mlir::DenseElementsAttr::get(f32({vocab, 1}), ArrayRef<float>(ids)));
    Value idRow = b.create<mlir::attn::ConstantOp>(
        l, mlir::DenseElementsAttr::get(f32({1, 1, vocab}), ArrayRef<float>(ids)));
    Value oneHot = b.create<mlir::attn::EqOp>(
        l, idRow, b.create<mlir::attn::EmbeddingOp>(l, idTable, targets));
    Value picked = b.create<mlir::attn::MulOp>(
        l, b.create<mlir::attn::MulOp>(l, logSoftmax(logits, l), oneHot), draws.real);
    Value reward = b.create<mlir::attn::ReduceSumOp>(l, picked, b.getDenseI64ArrayAttr({1, 2}),
                                                     b.getBoolAttr(false));
    Value tokens = b.create<mlir::attn::MaximumOp>(
        l,
        b.create<mlir::attn::ReduceSumOp>(l, draws.real, b.getDenseI64ArrayAttr({0, 1, 2}),
                                          b.getBoolAttr(false)),
        scalar(1.0f, l));
    if (a.baseline == HardBaseline::LeaveOneOut && batch > 1) {
      Value total = b.create<mlir::attn::ReduceSumOp>(l, reward, b.getDenseI64ArrayAttr({0}),
                                                      b.getBoolAttr(true));
      Value others = b.create<mlir::attn::DivOp>(l, b.create<mlir::attn::SubOp>(l, total, reward),
                                                 scalar((float)(batch - 1), l));
      reward = b.create<mlir::attn::SubOp>(l, reward, others);
    }
    Value advantage = b.create<mlir::attn::StopGradientOp>(l, reward);
    Value logProb = b.create<mlir::attn::ReshapeOp>(l, f32({batch}), draws.totalLogProb);
    // log p(s) - stop_gradient(log p(s)): 0, with the gradient of log p(s).
    Value score =
        b.create<mlir::attn::SubOp>(l, logProb, b.create<mlir::attn::StopGradientOp>(l, logProb));
    Value estimator =
        b.create<mlir::attn::ReduceSumOp>(l, b.create<mlir::attn::MulOp>(l, advantage, score),
                                          b.getDenseI64ArrayAttr({0}), b.getBoolAttr(false));
    loss = b.create<mlir::attn::SubOp>(l, loss, b.create<mlir::attn::DivOp>(l, estimator, tokens));
    if (a.entropy > 0) {
      Value entropy = b.create<mlir::attn::ReduceSumOp>(
          l, draws.totalEntropy, b.getDenseI64ArrayAttr({0, 1}), b.getBoolAttr(false));
      Value bonus =
          b.create<mlir::attn::SubOp>(l, entropy, b.create<mlir::attn::StopGradientOp>(l, entropy));
      loss = b.create<mlir::attn::SubOp>(
          l, loss,
          b.create<mlir::attn::MulOp>(l, scalar((float)a.entropy, l),
                                      b.create<mlir::attn::DivOp>(l, bonus, tokens)));
    }
    b.create<func::ReturnOp>(l, loss);
  }

  // One decoder step with `features` for the readout.
  struct Step {
    SmallVector<Value> carried; // the next carried values (see carriedTypes)
    Value features;             // what the readout reads: h_t, [s_i; c_i] or h~_i
    Value weights;              // attention: the step's weights [B, S]
  };

  // One decoder step from the embedded previous token x [B, E] and the carried values:
  //   no attention  h_t = cells([x; c], h_{t-1}) (c only with every_step); features h_t
  //   bahdanau      c_i from e_ij = v^T tanh(W s_{i-1} + U h_j); s_i = cells([x; c_i], s_{i-1});
  //                 features [s_i; c_i]
  //   luong, local  s_i = cells([x; h~_{i-1}], s_{i-1}) (h~ with input feeding); c_i from
  //                 score(s_i, h_j); h~_i = tanh(W_c [c_i; s_i]); features h~_i
  Step decoderStepWith(const RnnSpec &r, const Decoder &d, const Memory &mem, Value context,
                       Value x, ValueRange carried, Location l, ValueRange keepMasks = {}) {
    size_t numStates = r.layers * stateTypes(r, 1).size();
    ValueRange states = carried.take_front(numStates);
    Step s;
    if (!attention()) {
      s.carried = decoderStep(r, d, x, states, context, l, keepMasks);
      s.features = topOutput(r, s.carried);
      return s;
    }
    Value position = monotonic() ? carried.back() : Value();
    if (!luong()) {
      Attended att = attend(d, mem, topOutput(r, states), position, l);
      s.carried = decoderStep(r, d, x, states, att.context, l, keepMasks);
      s.features = b.create<mlir::attn::ConcatOp>(
          l, ValueRange{topOutput(r, s.carried), att.context}, b.getI64IntegerAttr(1));
      s.weights = att.weights;
    } else {
      Value feed = inputFeeding() ? carried[numStates] : Value();
      s.carried = decoderStep(r, d, x, states, feed, l, keepMasks);
      Value top = topOutput(r, s.carried);
      Attended att = attend(d, mem, top, position, l);
      Value both = b.create<mlir::attn::ConcatOp>(l, ValueRange{att.context, top},
                                                  b.getI64IntegerAttr(1));
      s.features = b.create<mlir::attn::TanhOp>(
          l, b.create<mlir::attn::MatmulOp>(l, both, d.combine, false, false));
      s.weights = att.weights;
      if (inputFeeding())
        s.carried.push_back(s.features);
    }
    if (monotonic())
      s.carried.push_back(b.create<mlir::attn::AddOp>(l, position, scalar(1.0f, l)));
    return s;
  }

  // One step of the decoder's layers from x [B, E] (joined by `extra` [B, X] when given: the
  // every_step context, Bahdanau's context or Luong's fed h~): every layer's new states,
  // flattened in layer order like `states`; the top layer's output is topOutput() of them.
  SmallVector<Value> decoderStep(const RnnSpec &r, const Decoder &d, Value x, ValueRange states,
                                 Value extra, Location l, ValueRange keepMasks = {}) {
    size_t perLayer = stateTypes(r, 1).size();
    if (extra)
      x = b.create<mlir::attn::ConcatOp>(l, ValueRange{x, extra}, b.getI64IntegerAttr(1));
    SmallVector<Value> next;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      SmallVector<Value> s =
          cellStep(r, d.layers[layer], x, states.slice(layer * perLayer, perLayer), l);
      next.append(s.begin(), s.end());
      x = s[0];
      // Dropout between layers: this step's slice [B, W] of the layer's keep mask.
      if (layer + 1 < r.layers && !keepMasks.empty())
        x = b.create<mlir::attn::MulOp>(l, x, keepMasks[layer]);
    }
    return next;
  }

  // The decoder's keep masks [B, T, W] (with dropout), scanned alongside its inputs.
  SmallVector<Value> decoderMasks() {
    auto it = dropout.find("decoder");
    return it == dropout.end() ? SmallVector<Value>{} : it->second;
  }

  Value topOutput(const RnnSpec &r, ValueRange states) {
    return states[(r.layers - 1) * stateTypes(r, 1).size()];
  }

  // Logits from the step features [..., F] (and, every_step, c [B, H]).
  Value readout(const Decoder &d, Value features, Value context, Location l) {
    Value logits = b.create<mlir::attn::DenseOp>(l, features, d.outWeight, d.outBias);
    if (!context)
      return logits;
    Value fromContext = b.create<mlir::attn::MatmulOp>(l, context, d.contextWeight, false, false);
    auto shape = cast<RankedTensorType>(logits.getType()).getShape();
    if (shape.size() == 3) // [B, T, V]: the same U c at every step
      fromContext = b.create<mlir::attn::ReshapeOp>(
          l, RankedTensorType::get({shape[0], 1, shape[2]}, b.getF32Type()), fromContext);
    return b.create<mlir::attn::AddOp>(l, logits, fromContext);
  }


  // Teacher forcing: the decoder reads tgt_in [B, T] (bos y1 .. yn); logits [B, T, V]. The
  // readout runs once after the scan, over every step's features.
  Value decodeForced(const RnnSpec &r, const Encoded &enc, Value srcMask, Value tgtIn,
                     Location l) {
    Decoder d = decoderParams(r, l);
    Memory mem = attentionMemory(r, enc, srcMask, l);
    auto inType = cast<RankedTensorType>(tgtIn.getType());
    int64_t batch = inType.getShape()[0], steps = inType.getShape()[1];
    Value embedded = b.create<mlir::attn::EmbeddingOp>(l, d.embedding, tgtIn);
    SmallVector<Value> inits = initialCarried(r, enc, l);
    size_t numStates = inits.size();
    // Hard attention also carries the sums of its steps' log-probabilities and entropies.
    if (draws.noise)
      inits.append(zerosFor({f32({batch, 1}), f32({batch, 1})}, l));
    SmallVector<Type> resultTypes;
    for (Value v : inits)
      resultTypes.push_back(v.getType());
    resultTypes.push_back(RankedTensorType::get({batch, steps, featureWidth(r)}, b.getF32Type()));
    SmallVector<Value> masks = decoderMasks(), xs = {embedded};
    xs.append(masks.begin(), masks.end());
    if (draws.noise)
      xs.append({draws.noise,
                 b.create<mlir::attn::ReshapeOp>(l, f32({batch, steps, 1}), draws.soft),
                 draws.real});
    auto scan = b.create<mlir::attn::ScanOp>(l, resultTypes, inits, xs, ValueRange{}, 1, false,
                                             nullptr);
    SmallVector<Type> argTypes(resultTypes.begin(), resultTypes.end() - 1);
    for (Value x : xs)
      argTypes.push_back(stepSlice(x));
    Block *body =
        b.createBlock(&scan.getBody(), {}, argTypes, SmallVector<Location>(argTypes.size(), l));
    b.setInsertionPointToStart(body);
    ValueRange args = body->getArguments();
    size_t numCarried = inits.size();
    ValueRange stepMasks = args.slice(numCarried + 1, masks.size());
    if (draws.noise) {
      draws.stepNoise = args[numCarried + 1 + masks.size()];
      draws.stepSoft = args[numCarried + 2 + masks.size()];
      draws.stepReal = args[numCarried + 3 + masks.size()];
    }
    Step next = decoderStepWith(r, d, mem, enc.context, args[numCarried],
                                args.take_front(numStates), l, stepMasks);
    SmallVector<Value> yields(next.carried);
    if (draws.noise)
      yields.append({b.create<mlir::attn::AddOp>(l, args[numStates], draws.logProb),
                     b.create<mlir::attn::AddOp>(l, args[numStates + 1], draws.entropy)});
    yields.push_back(next.features);
    b.create<mlir::attn::YieldOp>(l, yields);
    b.setInsertionPointAfter(scan);
    if (draws.noise) {
      draws.totalLogProb = scan.getResult(numStates);
      draws.totalEntropy = scan.getResult(numStates + 1);
      draws.stepNoise = draws.stepSoft = draws.stepReal = Value();
    }
    return readout(d, scan.getResults().back(), enc.context, l);
  }

  // The width of Step::features.
  int64_t featureWidth(const RnnSpec &r) {
    return attention() && !luong() ? outWidth(r) + memoryWidth() : outWidth(r);
  }

  // Scheduled sampling: at step t the decoder reads, where teacher[b, t] is 1, the true
  // previous token tgt_in[b, t], else the argmax of its own logits at t - 1 (as a one-hot
  // row times the embedding table; no gradient flows through the choice). teacher[:, 0] is 1.
  Value decodeSampled(const RnnSpec &r, const Encoded &enc, Value srcMask, Value tgtIn,
                      Value teacher, Location l) {
    Decoder d = decoderParams(r, l);
    Memory mem = attentionMemory(r, enc, srcMask, l);
    auto inType = cast<RankedTensorType>(tgtIn.getType());
    int64_t batch = inType.getShape()[0], steps = inType.getShape()[1];
    int64_t vocab = options.targetVocab;
    auto f32 = b.getF32Type();
    Value embedded = b.create<mlir::attn::EmbeddingOp>(l, d.embedding, tgtIn);
    Value teacher3 = b.create<mlir::attn::ReshapeOp>(
        l, RankedTensorType::get({batch, steps, 1}, f32), teacher);
    auto logitsType = RankedTensorType::get({batch, vocab}, f32);
    SmallVector<Value> inits = initialCarried(r, enc, l);
    inits.push_back(zerosFor({logitsType}, l)[0]);
    SmallVector<Type> resultTypes;
    for (Value v : inits)
      resultTypes.push_back(v.getType());
    resultTypes.push_back(RankedTensorType::get({batch, steps, vocab}, f32));
    SmallVector<Value> masks = decoderMasks(), xs = {embedded, teacher3};
    xs.append(masks.begin(), masks.end());
    auto scan = b.create<mlir::attn::ScanOp>(l, resultTypes, inits, xs, ValueRange{}, 1, false,
                                             nullptr);
    SmallVector<Type> argTypes(resultTypes.begin(), resultTypes.end() - 1);
    argTypes.push_back(RankedTensorType::get({batch, spec.model.embedding.dim}, f32));
    argTypes.push_back(RankedTensorType::get({batch, 1}, f32));
    for (Value m : masks)
      argTypes.push_back(stepSlice(m));
    Block *body =
        b.createBlock(&scan.getBody(), {}, argTypes, SmallVector<Location>(argTypes.size(), l));
    b.setInsertionPointToStart(body);
    ValueRange args = body->getArguments();
    size_t numCarried = inits.size() - 1;
    Value previous = args[numCarried], gold = args[numCarried + 1], coin = args[numCarried + 2];
    Value best = b.create<mlir::attn::ReduceMaxOp>(l, previous, b.getDenseI64ArrayAttr({1}),
                                                   b.getBoolAttr(true));
    Value oneHot = b.create<mlir::attn::EqOp>(l, previous, best);
    Value predicted = b.create<mlir::attn::MatmulOp>(l, oneHot, d.embedding, false, false);
    Value x = b.create<mlir::attn::AddOp>(
        l, predicted,
        b.create<mlir::attn::MulOp>(l, coin, b.create<mlir::attn::SubOp>(l, gold, predicted)));
    Step next = decoderStepWith(r, d, mem, enc.context, x, args.take_front(numCarried), l,
                                args.drop_front(numCarried + 3));
    Value logits = readout(d, next.features, enc.context, l);
    SmallVector<Value> yields(next.carried);
    yields.push_back(logits);
    yields.push_back(logits);
    b.create<mlir::attn::YieldOp>(l, yields);
    b.setInsertionPointAfter(scan);
    return scan.getResults().back();
  }

  // A scan's per-step slice type of x [B, T, W]: [B, W].
  Type stepSlice(Value x) {
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    return RankedTensorType::get({shape[0], shape[2]}, b.getF32Type());
  }

};

} // namespace
} // namespace attn::yaml::recurrent

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == Task::Seq2seq; }

// The attention mechanism's keys against the cells it reads.
void validateAttention(const Spec &s, const AttentionSpec &a, Problems &p) {
  if (s.model.seq2seq.context != Context::Initial)
    p.error(a.loc,
            "model.attention replaces model.seq2seq.context '" + nameOf(s.model.seq2seq.context) +
                "': the context is the attention's",
            "remove model.seq2seq.context");
  const RnnSpec &r = *s.model.rnn;
  int64_t hidden = s.model.seq2seq.decoderHidden ? s.model.seq2seq.decoderHidden : r.hidden;
  int64_t out = r.cell == Cell::Lstm && r.projection > 0 ? r.projection : hidden;
  int64_t encoded = r.cell == Cell::Lstm && r.projection > 0 ? r.projection : r.hidden;
  int64_t memory = encoded * (r.bidirectional && r.merge == Merge::Concat ? 2 : 1);
  bool dotLike = a.score == Score::Dot || a.score == Score::Cosine;
  if (a.type != AttentionType::Bahdanau && dotLike && memory != out)
    p.error(a.loc,
            "score '" + nameOf(a.score) + "' needs encoder states as wide as the decoder's (" +
                std::to_string(out) + "), but the encoder's are " + std::to_string(memory) +
                " wide",
            "use score: general or concat, or model.rnn.merge: sum");
  AttentionSpec defaults;
  bool cosine = a.type != AttentionType::Bahdanau && a.score == Score::Cosine;
  if (!cosine && (a.temperature != defaults.temperature || a.learnTemperature))
    p.error("model.attention.temperature", s.locOf("model.attention.learn_temperature", a.loc),
            "model.attention.temperature and learn_temperature scale the cosine score, but this "
            "attention's score is " +
                (a.type == AttentionType::Bahdanau ? std::string("bahdanau's additive one")
                                                   : "'" + nameOf(a.score) + "'"),
            "remove them, or set type: luong, local or hard with score: cosine");
  if (a.gaussian && a.type != AttentionType::Local)
    p.error("model.attention.gaussian", a.loc,
            "model.attention.gaussian weights a local attention's window, but this attention "
            "is '" +
                nameOf(a.type) + "'",
            "remove gaussian, or set type: local");
  if (a.type == AttentionType::Local && a.align == Align::Predictive && !a.gaussianWeighting())
    p.error("model.attention.gaussian", a.loc,
            "predictive alignment learns p_i only through the Gaussian (the window's edges "
            "pass no gradient): without it W_p and v_p would never train",
            "remove gaussian: false, or set align: monotonic");
  const char *hardKey = a.baseline != defaults.baseline ? "model.attention.baseline"
                        : a.entropy != defaults.entropy ? "model.attention.entropy"
                        : a.softProbability != defaults.softProbability
                            ? "model.attention.soft_probability"
                            : nullptr;
  if (a.type != AttentionType::Hard && hardKey)
    p.error(hardKey, a.loc,
            std::string(hardKey) +
                " trains hard attention's sampled positions, but this "
                "attention is '" +
                nameOf(a.type) + "'",
            "remove it, or set type: hard");
  if (a.type == AttentionType::Hard) {
    const TeacherForcingSpec &tf = s.train.teacherForcing;
    if (tf.schedule != TeacherSchedule::Constant || tf.ratio < 1.0)
      p.error(tf.loc,
              "hard attention is trained with teacher forcing: its estimator weighs the "
              "positions drawn at every step by the likelihood of the true target",
              "remove train.teacher_forcing");
    const char *luongKey = a.window != defaults.window ? "model.attention.window"
                           : a.align != defaults.align ? "model.attention.align"
                           : !a.inputFeeding           ? "model.attention.input_feeding"
                                                       : nullptr;
    if (luongKey)
      p.error(luongKey, a.loc,
              "model.attention.window, align and input_feeding shape Luong's attention, not "
              "hard attention (bahdanau's decoder)",
              "remove them");
  }
  if (cosine && !(a.temperature > 0))
    p.error("model.attention.temperature", a.loc,
            "model.attention.temperature must be above 0 for the cosine score, got " +
                std::to_string(a.temperature),
            "e.g. temperature: 10 (a cosine lies in [-1, 1])");
}

void validate(const Spec &s, Problems &p) {
  checkSeq2SeqData(s, p);
  checkDecoding(s, p);
  if (!s.model.rnn) {
    p.error(s.model.loc, "task 'seq2seq' needs model.rnn (the encoder and decoder cells) or "
                         "model.transformer",
            "replace model.mlp by model.rnn or model.transformer");
    return;
  }
  const RnnSpec &r = *s.model.rnn;
  if (r.bidirectional && !s.model.attention)
    p.error(r.loc, "a seq2seq encoder without attention hands its final states to a "
                   "unidirectional decoder, so it cannot be bidirectional",
            "remove model.rnn.bidirectional, or add model.attention");
  if (s.model.seq2seq.decoderHidden > 0 && !s.model.attention &&
      s.model.seq2seq.decoderHidden != r.hidden)
    p.error(s.model.seq2seq.loc,
            "model.seq2seq.decoder_hidden differs from model.rnn.hidden, but without attention "
            "the decoder starts from the encoder's states",
            "add model.attention, or remove decoder_hidden");
  if (s.model.attention)
    validateAttention(s, *s.model.attention, p);
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> importSeq2Seq(const Spec &spec, mlir::MLIRContext &context,
                                      const ImportOptions &options) {
  return recurrent::RecurrentImporter::import<recurrent::Seq2SeqImporter>(spec, options, context);
}

const Family kSeq2SeqFamily = {
    "seq2seq",
    "recurrent encoder-decoders: context as the initial state, at every step, or by attention",
    claims, validate, importSeq2Seq};

} // namespace attn::yaml
