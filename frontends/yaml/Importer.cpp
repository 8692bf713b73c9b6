#include "frontends/yaml/Importer.h"
#include "frontends/yaml/ImportBuilder.h"
#include "attn/Names.h"
#include "frontends/yaml/Family.h"


#include "llvm/ADT/StringMap.h"

#include <cctype>
#include <cmath>
#include <map>

using namespace mlir;

namespace attn::yaml {
namespace {

class Importer : ImportBuilder {
public:
  using ImportBuilder::ImportBuilder;

  // A module with the entry points that `entries` (one of the methods below) builds.
  using Entries = void (Importer::*)(ModuleOp);
  static OwningOpRef<ModuleOp> build(const Spec &spec, const ImportOptions &options,
                                     MLIRContext &context, Entries entries) {
    Importer importer(spec, options, context);
    OwningOpRef<ModuleOp> module = importer.newModule();
    (importer.*entries)(*module);
    return module;
  }
  static OwningOpRef<ModuleOp> regressor(const Spec &s, const ImportOptions &o, MLIRContext &c) {
    return build(s, o, c, &Importer::regression);
  }
  static OwningOpRef<ModuleOp> lm(const Spec &s, const ImportOptions &o, MLIRContext &c) {
    return build(s, o, c, &Importer::languageModel);
  }
  static OwningOpRef<ModuleOp> tagger(const Spec &s, const ImportOptions &o, MLIRContext &c) {
    return build(s, o, c, &Importer::labeller);
  }
  static OwningOpRef<ModuleOp> encoderDecoder(const Spec &s, const ImportOptions &o,
                                              MLIRContext &c) {
    return build(s, o, c, &Importer::seq2seq);
  }

  // @forward(x) -> y and @loss(x, target) -> mean squared error.
  void regression(ModuleOp module) {
    b.setInsertionPointToEnd(module.getBody());
    int64_t batch = spec.train.batchSize, window = spec.data.window;
    // The rnn reads one feature per step; the mlp sees the whole window as one vector.
    SmallVector<int64_t> xShape = spec.model.rnn ? SmallVector<int64_t>{batch, window, 1}
                                                 : SmallVector<int64_t>{batch, window};
    auto xType = RankedTensorType::get(xShape, b.getF32Type());
    auto yType = RankedTensorType::get({batch, spec.model.output.size}, b.getF32Type());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Location l = loc(spec.model.loc);

    auto forward = entry("forward", {xType}, {"x"}, {yType}, {"y"}, l);
    b.create<func::ReturnOp>(l, network(forward.getArgument(0)));

    b.setInsertionPointToEnd(module.getBody());
    auto loss = lossEntry({xType, yType}, {"x", "target"}, {{"rnn", window}}, l);
    Value prediction = network(loss.getArgument(0));
    dropout.clear();
    b.create<func::ReturnOp>(l, b.create<mlir::attn::MseOp>(l, prediction, loss.getArgument(1))
                                    .getResult());
  }

  // A character-level language model: embeddings, the rnn over every position, a dense head
  // giving next-character logits.
  //   @loss(tokens [B, T], next [B, T]) -> cross-entropy over every position
  //   @step(token [1], state_l [1, H]...) -> (logits [1, V], state_l'...), for sampling
  void languageModel(ModuleOp module) {
    int64_t batch = spec.train.batchSize, window = spec.data.window, vocab = options.vocabSize;
    auto ids = RankedTensorType::get({batch, window}, b.getI32Type());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Location l = loc(spec.model.loc);

    b.setInsertionPointToEnd(module.getBody());
    auto loss = lossEntry({ids, ids}, {"tokens", "next"}, {{"rnn", window}}, l);
    Value embedded = b.create<mlir::attn::EmbeddingOp>(l, embeddingTable(), loss.getArgument(0));
    Value outputs = rnn(*spec.model.rnn, embedded, /*allSteps=*/true);
    dropout.clear();
    Value logits = dense("output", outputs, vocab, loc(spec.model.output.loc));
    b.create<func::ReturnOp>(
        l, b.create<mlir::attn::CrossEntropyOp>(l, logits, loss.getArgument(1),
                                                b.getI64IntegerAttr(-1),
                                                b.getF32FloatAttr(spec.train.labelSmoothing))
               .getResult());

    // One position for one sequence, the states of every layer in and out.
    const RnnSpec &r = *spec.model.rnn;
    SmallVector<Type> states = stateTypes(r, 1);
    SmallVector<Type> inputs = {RankedTensorType::get({1}, b.getI32Type())};
    SmallVector<Type> results = {RankedTensorType::get({1, vocab}, b.getF32Type())};
    SmallVector<std::string> names = {"token"}, resultNames = {"logits"};
    for (int64_t layer = 0; layer < r.layers; ++layer)
      for (auto [k, t] : llvm::enumerate(states)) {
        std::string name = "state" + std::to_string(layer) + (k ? "_c" : "");
        inputs.push_back(t);
        results.push_back(t);
        names.push_back(name);
        resultNames.push_back(name);
      }
    SmallVector<StringRef> nameRefs(names.begin(), names.end());
    SmallVector<StringRef> resultRefs(resultNames.begin(), resultNames.end());
    b.setInsertionPointToEnd(module.getBody());
    auto step = entry("step", inputs, nameRefs, results, resultRefs, l);
    Value x = b.create<mlir::attn::EmbeddingOp>(l, embeddingTable(), step.getArgument(0));
    SmallVector<Value> outs = {Value()};
    unsigned arg = 1;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      int64_t in = cast<RankedTensorType>(x.getType()).getShape()[1];
      LayerParams w = layerParams(r, "rnn", layer, in, /*reverse=*/false, l);
      SmallVector<Value> state(step.getArguments().slice(arg, states.size()));
      arg += states.size();
      SmallVector<Value> next = cellStep(r, w, x, state, l);
      outs.append(next.begin(), next.end());
      x = next[0];
    }
    outs[0] = dense("output", x, vocab, loc(spec.model.output.loc));
    b.create<func::ReturnOp>(l, outs);
  }

  // PyTorch's nn.Embedding initialisation: N(0, 1).
  Value embeddingTable() {
    return param(loc(spec.model.embedding.loc), "embedding",
                 {options.vocabSize, spec.model.embedding.dim}, "normal", 1.0f);
  }

private:
  // The model from its input to its prediction: the network, then the dense head.
  Value network(Value x) {
    Value features = spec.model.rnn ? rnn(*spec.model.rnn, x) : mlp(*spec.model.mlp, x);
    return dense("output", features, spec.model.output.size, loc(spec.model.output.loc));
  }


  Value mlp(const MlpSpec &m, Value x) {
    Location l = loc(m.loc);
    for (auto [i, width] : llvm::enumerate(m.hidden)) {
      x = dense("mlp.layer" + std::to_string(i), x, width, l);
      if (m.activation == "tanh")
        x = b.create<mlir::attn::TanhOp>(l, x);
      else if (m.activation == "relu")
        x = b.create<mlir::attn::ReluOp>(l, x);
      else
        x = b.create<mlir::attn::SigmoidOp>(l, x);
    }
    return x;
  }

  // The weights of one recurrent layer (unused members stay null).
  struct LayerParams {
    Value wih, whh, bias, bhh, peephole, proj, projBias;
  };

  // The state a layer carries: h, and for an lstm the cell c.
  SmallVector<Type> stateTypes(const RnnSpec &r, int64_t batch) {
    auto f32 = b.getF32Type();
    if (r.cell == "lstm")
      return {RankedTensorType::get({batch, outWidth(r)}, f32),
              RankedTensorType::get({batch, r.hidden}, f32)};
    return {RankedTensorType::get({batch, r.hidden}, f32)};
  }

  // What a layer hands on: the hidden state, projected for an lstm with a projection.
  int64_t outWidth(const RnnSpec &r) {
    return r.cell == "lstm" && r.projection > 0 ? r.projection : r.hidden;
  }

  // Layer `layer`'s weights, initialised like PyTorch's recurrent layers: U(+-1/sqrt(H)).
  LayerParams layerParams(const RnnSpec &r, const std::string &prefix, int64_t layer, int64_t in,
                          bool reverse, Location l) {
    std::string p = prefix + ".layer" + std::to_string(layer) + (reverse ? ".reverse." : ".");
    int64_t h = r.hidden, out = outWidth(r);
    float scale = 1.0f / std::sqrt((float)h);
    auto u = [&](const std::string &name, ArrayRef<int64_t> shape) {
      return param(l, p + name, shape, "uniform", scale);
    };
    LayerParams w;
    if (r.cell == "rnn") {
      w.wih = u("w_ax", {in, h});
      w.whh = u("w_aa", {h, h});
      w.bias = u("b_a", {h});
    } else if (r.cell == "gru") {
      int64_t gates = r.gruForm == "minimal" ? 2 : 3;
      w.wih = u("w_ih", {in, gates * h});
      w.whh = u("w_hh", {h, gates * h});
      w.bias = u("b_ih", {gates * h});
      w.bhh = u("b_hh", {gates * h});
    } else {
      w.wih = u("w_ih", {in, 4 * h});
      w.whh = u("w_hh", {out, 4 * h});
      w.bias = u("b", {4 * h});
      if (r.peephole)
        w.peephole = u("w_peephole", {3, h});
      if (r.projection > 0) {
        w.proj = u("w_proj", {h, out});
        w.projBias = u("b_proj", {out});
      }
    }
    return w;
  }

  // One step of a layer: the new states (the first is what the layer hands on).
  SmallVector<Value> cellStep(const RnnSpec &r, const LayerParams &w, Value x, ValueRange state,
                              Location l) {
    if (r.cell == "rnn")
      return {b.create<mlir::attn::RnnCellOp>(l, x, state[0], w.wih, w.whh, w.bias)};
    if (r.cell == "gru")
      return {b.create<mlir::attn::GruCellOp>(l, x, state[0], w.wih, w.whh, w.bias, w.bhh,
                                              b.getStringAttr(r.gruForm))};
    auto cell = b.create<mlir::attn::LstmCellOp>(l, x, state[0], state[1], w.wih, w.whh, w.bias,
                                                 w.peephole, w.proj, w.projBias);
    return {cell.getNewHidden(), cell.getNewCell()};
  }

  // One direction of one layer over seq [B, T, I]: its final output [B, W] and, with
  // `stack`, its output at every step [B, T, W] (in time order also when reversed).
  std::pair<Value, Value> direction(const RnnSpec &r, int64_t layer, Value seq, bool reverse,
                                    bool stack, Location l) {
    auto seqType = cast<RankedTensorType>(seq.getType());
    int64_t batch = seqType.getShape()[0], steps = seqType.getShape()[1];
    int64_t in = seqType.getShape()[2];
    SmallVector<Type> states = stateTypes(r, batch);
    LayerParams w = layerParams(r, "rnn", layer, in, reverse, l);
    SmallVector<Value> inits;
    for (Type t : states)
      inits.push_back(b.create<mlir::attn::ConstantOp>(
          l, DenseElementsAttr::get(cast<RankedTensorType>(t), b.getF32FloatAttr(0.0f))));
    SmallVector<Type> resultTypes(states);
    if (stack)
      resultTypes.push_back(RankedTensorType::get({batch, steps, outWidth(r)}, b.getF32Type()));
    auto scan = b.create<mlir::attn::ScanOp>(l, resultTypes, inits, ValueRange{seq},
                                             ValueRange{}, /*axis=*/1, reverse,
                                             /*length=*/nullptr);
    SmallVector<Type> argTypes(states);
    argTypes.push_back(RankedTensorType::get({batch, in}, b.getF32Type()));
    SmallVector<Location> locs(argTypes.size(), l);
    Block *body = b.createBlock(&scan.getBody(), {}, argTypes, locs);
    b.setInsertionPointToStart(body);
    SmallVector<Value> next =
        cellStep(r, w, body->getArguments().back(), body->getArguments().drop_back(), l);
    SmallVector<Value> yields(next);
    if (stack)
      yields.push_back(next[0]);
    b.create<mlir::attn::YieldOp>(l, yields);
    b.setInsertionPointAfter(scan);
    return {scan.getResult(0), stack ? scan.getResults().back() : Value()};
  }

  // The two directions' outputs as one: concatenated features, or their sum.
  Value merge(const RnnSpec &r, Value forward, Value backward, Location l) {
    if (r.merge == "sum")
      return b.create<mlir::attn::AddOp>(l, forward, backward);
    int64_t axis = cast<RankedTensorType>(forward.getType()).getRank() - 1;
    return b.create<mlir::attn::ConcatOp>(l, ValueRange{forward, backward},
                                          b.getI64IntegerAttr(axis));
  }

  // Stacked recurrent layers over x [B, T, I]: the last layer's final output [B, W], or with
  // `allSteps` its output at every step [B, T, W]. A bidirectional layer also runs a
  // reversed scan and merges both directions (its final output: both final states).
  Value rnn(const RnnSpec &r, Value x, bool allSteps = false) {
    Location l = loc(r.loc);
    Value seq = x, last;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      // Every layer but the last hands its per-step outputs to the next layer.
      bool stack = layer + 1 < r.layers || allSteps;
      auto [final, steps] = direction(r, layer, seq, /*reverse=*/false, stack, l);
      if (r.bidirectional) {
        auto [finalBack, stepsBack] = direction(r, layer, seq, /*reverse=*/true, stack, l);
        final = merge(r, final, finalBack, l);
        if (stack)
          steps = merge(r, steps, stepsBack, l);
      }
      last = final;
      if (stack)
        seq = dropBetweenLayers("rnn", layer, steps, l);
    }
    return allSteps ? seq : last;
  }

  //===------------------------------------------------------------------------------------===//
  // Dropout between recurrent layers (model.rnn.dropout)
  //===------------------------------------------------------------------------------------===//

  // Where a @loss drops: the stack ("rnn", "encoder", "decoder") and its number of steps.
  struct DropoutSite {
    std::string stack;
    int64_t steps;
  };

  // @loss with its data inputs and, with model.rnn.dropout, one keep mask per layer but the
  // last of each site: `dropout.<stack>.layer<l>` f32 [B, steps, W], 0 or 1 / (1 - p), drawn
  // by the trainer at every step and all ones in validation (attnc's perStepInputs).
  // Inference entries have no masks: the importer clears `dropout` after the loss.
  func::FuncOp lossEntry(ArrayRef<Type> dataTypes, ArrayRef<StringRef> dataNames,
                         ArrayRef<DropoutSite> sites, Location l) {
    SmallVector<Type> types(dataTypes);
    SmallVector<std::string> names(dataNames.begin(), dataNames.end());
    const RnnSpec *r = spec.model.rnn ? &*spec.model.rnn : nullptr;
    bool drops = r && r->dropout > 0.0 && r->layers > 1;
    int64_t batch = spec.train.batchSize;
    if (drops)
      for (const DropoutSite &site : sites)
        for (int64_t layer = 0; layer + 1 < r->layers; ++layer) {
          types.push_back(RankedTensorType::get({batch, site.steps, layerWidth(*r, site.stack)},
                                                b.getF32Type()));
          names.push_back(std::string(::attn::names::kDropoutPrefix) + "." + site.stack + ".layer" + std::to_string(layer));
        }
    SmallVector<StringRef> refs(names.begin(), names.end());
    auto loss = entry("loss", types, refs, {RankedTensorType::get({}, b.getF32Type())},
                      {"loss"}, l);
    unsigned arg = dataTypes.size();
    if (drops)
      for (const DropoutSite &site : sites)
        for (int64_t layer = 0; layer + 1 < r->layers; ++layer)
          dropout[site.stack].push_back(loss.getArgument(arg++));
    return loss;
  }

  // What a layer of `stack` hands on: both directions side by side for a bidirectional
  // concat stack (the decoder is never bidirectional).
  int64_t layerWidth(const RnnSpec &r, StringRef stack) {
    if (stack == "decoder")
      return outWidth(decoderRnn());
    bool both = r.bidirectional && r.merge == "concat";
    return outWidth(r) * (both ? 2 : 1);
  }

  // x [B, T, W], the outputs of layer `layer` of `stack`, times its keep mask (if any).
  Value dropBetweenLayers(StringRef stack, int64_t layer, Value x, Location l) {
    auto it = dropout.find(stack);
    if (it == dropout.end())
      return x;
    return b.create<mlir::attn::MulOp>(l, x, it->second[layer]);
  }


  //===------------------------------------------------------------------------------------===//
  // Sequence labelling (task: tag) and classification (task: classify)
  //===------------------------------------------------------------------------------------===//

  // Right-padded tokens through the embedding, the masked (bidirectional) rnn and a dense
  // head: scores for every token's tag [B, S, V] or for the sequence's label [B, V].
  //   @loss(src [B,S], src_mask [B,S], labels [B,S] | [B]) -> cross-entropy (padding ignored)
  //   @forward(src, src_mask) -> scores
  void labeller(ModuleOp module) {
    const RnnSpec &r = *spec.model.rnn;
    bool tagging = spec.task == "tag";
    int64_t batch = spec.train.batchSize, steps = options.sourceLength;
    Location l = loc(spec.model.loc);
    Type f32 = b.getF32Type(), i32 = b.getI32Type();
    auto srcType = RankedTensorType::get({batch, steps}, i32);
    auto maskType = RankedTensorType::get({batch, steps}, f32);
    auto labelType = tagging ? RankedTensorType::get({batch, steps}, i32)
                             : RankedTensorType::get({batch}, i32);
    auto scoresType = tagging ? RankedTensorType::get({batch, steps, options.targetVocab}, f32)
                              : RankedTensorType::get({batch, options.targetVocab}, f32);
    auto network = [&](Value src, Value mask) {
      Value table = param(loc(spec.model.embedding.loc), "embedding",
                          {options.sourceVocab, spec.model.embedding.dim}, "normal", 1.0f);
      Value x = b.create<mlir::attn::EmbeddingOp>(l, table, src);
      auto [perToken, final] = maskedRnn(r, x, perStep(mask, l), l);
      return dense("output", tagging ? perToken : final, options.targetVocab,
                   loc(spec.model.output.loc));
    };

    b.setInsertionPointToEnd(module.getBody());
    auto loss = lossEntry({srcType, maskType, labelType},
                          {"src", "src_mask", tagging ? "tags" : "label"}, {{"rnn", steps}}, l);
    Value scores = network(loss.getArgument(0), loss.getArgument(1));
    dropout.clear();
    returnPaddedCrossEntropy(scores, loss.getArgument(2), l);

    b.setInsertionPointToEnd(module.getBody());
    auto forward = entry("forward", {srcType, maskType}, {"src", "src_mask"}, {scoresType},
                         {"scores"}, l);
    b.create<func::ReturnOp>(l, network(forward.getArgument(0), forward.getArgument(1)));
  }

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
  //   @loss(src [B,S], src_mask [B,S], tgt_in [B,T], tgt_out [B,T][, teacher [B,T]]) -> loss
  //   @encode(src [K,S], src_mask [K,S]) -> (carried..., [context [K,H]] | [memory, keys])
  //   @decode_step(token [K], carried..., [context] | [memory, keys, src_mask])
  //       -> (log_probs [K,V], carried'..., [attention [K,S]])
  // `carried` are the decoder's recurrent values: state_l (and state_l_c) per layer, and for
  // attention decoders `feed` (input feeding) and `position` (monotonic alignment).
  // `teacher` is there with scheduled sampling: 1 feeds the true previous token, 0 the
  // decoder's own most likely one.
  void seq2seq(ModuleOp module) {
    const RnnSpec &r = *spec.model.rnn, dr = decoderRnn();
    int64_t batch = spec.train.batchSize, srcLen = options.sourceLength;
    int64_t tgtLen = options.targetLength;
    Location l = loc(spec.model.loc);
    bool sampling = spec.train.teacherForcing.schedule != "constant" ||
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
    auto loss = lossEntry(lossInputs, lossNames, {{"encoder", srcLen}, {"decoder", tgtLen}}, l);
    Encoded enc = encoder(r, loss.getArgument(0), loss.getArgument(1), l);
    Value logits = sampling ? decodeSampled(dr, enc, loss.getArgument(1), loss.getArgument(2),
                                            loss.getArgument(4), l)
                            : decodeForced(dr, enc, loss.getArgument(1), loss.getArgument(2), l);
    dropout.clear();
    returnPaddedCrossEntropy(logits, loss.getArgument(3), l);

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


  bool chosContext() const { return spec.model.seq2seq.context == "every_step"; }
  bool attention() const { return spec.task == "seq2seq" && spec.model.attention.has_value(); }
  // Bahdanau's and Luong's concat scores are additive: v^T tanh(W s + U h).
  bool additive() const {
    return attention() &&
           (spec.model.attention->type == "bahdanau" || spec.model.attention->score == "concat");
  }
  bool luong() const { return attention() && spec.model.attention->type != "bahdanau"; }
  bool local() const { return attention() && spec.model.attention->type == "local"; }
  bool monotonic() const { return local() && spec.model.attention->align == "monotonic"; }
  bool inputFeeding() const { return luong() && spec.model.attention->inputFeeding; }

  // The encoder's output at every source position: both directions side by side for a
  // bidirectional concat encoder.
  int64_t memoryWidth() {
    const RnnSpec &r = *spec.model.rnn;
    return outWidth(r) * (r.bidirectional && r.merge == "concat" ? 2 : 1);
  }
  // The decoder's cells: model.rnn's, `model.seq2seq.decoder_hidden` wide if that is set.
  RnnSpec decoderRnn() const {
    RnnSpec d = *spec.model.rnn;
    if (spec.model.seq2seq.decoderHidden > 0)
      d.hidden = spec.model.seq2seq.decoderHidden;
    return d;
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
                        {options.sourceVocab, spec.model.embedding.dim}, "normal", 1.0f);
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
      Value v = param(l, "encoder.context.weight", {outWidth(r), r.hidden}, "uniform",
                      1.0f / std::sqrt((float)outWidth(r)));
      enc.context = b.create<mlir::attn::MatmulOp>(l, enc.finals[enc.finals.size() -
                                                                 stateTypes(r, 1).size()],
                                                   v, false, false);
    }
    return enc;
  }

  // mask [B, S] -> [B, S, 1]: a scan hands each step a [B, 1] column.
  Value perStep(Value mask, Location l) {
    auto shape = cast<RankedTensorType>(mask.getType()).getShape();
    return b.create<mlir::attn::ReshapeOp>(
        l, RankedTensorType::get({shape[0], shape[1], 1}, b.getF32Type()), mask);
  }

  struct Masked {
    SmallVector<Value> finals; // the states at the last token (reversed: the first)
    Value steps;               // the output at every step [B, S, W], in time order
  };

  // One direction of one layer over seq [B, S, I] under mask3 [B, S, 1]: past a row's last
  // token (before its first, reversed) its state stays, s' = s + m (cell(x, s) - s), so
  // right-padding changes neither direction's states at the real tokens.
  Masked maskedDirection(const RnnSpec &r, const std::string &prefix, int64_t layer, Value seq,
                         Value mask3, bool reverse, Location l) {
    auto seqType = cast<RankedTensorType>(seq.getType());
    int64_t batch = seqType.getShape()[0], steps = seqType.getShape()[1];
    int64_t in = seqType.getShape()[2];
    LayerParams w = layerParams(r, prefix, layer, in, reverse, l);
    SmallVector<Type> states = stateTypes(r, batch);
    SmallVector<Type> resultTypes(states);
    resultTypes.push_back(RankedTensorType::get({batch, steps, outWidth(r)}, b.getF32Type()));
    auto scan = b.create<mlir::attn::ScanOp>(l, resultTypes, zerosFor(states, l),
                                             ValueRange{seq, mask3}, ValueRange{}, /*axis=*/1,
                                             reverse, /*length=*/nullptr);
    SmallVector<Type> argTypes(states);
    argTypes.push_back(RankedTensorType::get({batch, in}, b.getF32Type()));
    argTypes.push_back(RankedTensorType::get({batch, 1}, b.getF32Type()));
    Block *body =
        b.createBlock(&scan.getBody(), {}, argTypes, SmallVector<Location>(argTypes.size(), l));
    b.setInsertionPointToStart(body);
    ValueRange args = body->getArguments();
    ValueRange old = args.take_front(states.size());
    Value x = args[states.size()], m = args[states.size() + 1];
    SmallVector<Value> kept;
    for (auto [s, n] : llvm::zip(old, cellStep(r, w, x, old, l)))
      kept.push_back(b.create<mlir::attn::AddOp>(
          l, s, b.create<mlir::attn::MulOp>(l, m, b.create<mlir::attn::SubOp>(l, n, s))));
    SmallVector<Value> yields(kept);
    yields.push_back(kept[0]);
    b.create<mlir::attn::YieldOp>(l, yields);
    b.setInsertionPointAfter(scan);
    Masked out;
    for (size_t k = 0; k < states.size(); ++k)
      out.finals.push_back(scan.getResult(k));
    out.steps = scan.getResults().back();
    return out;
  }

  // Stacked (bidirectional) layers over embedded tokens [B, S, E] under mask3: the last
  // layer's outputs at every step [B, S, W'] and its final output [B, W'] (both directions
  // merged).
  std::pair<Value, Value> maskedRnn(const RnnSpec &r, Value seq, Value mask3, Location l) {
    Value final;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      Masked forward = maskedDirection(r, "rnn", layer, seq, mask3, /*reverse=*/false, l);
      Value steps = forward.steps;
      final = forward.finals[0];
      if (r.bidirectional) {
        Masked backward = maskedDirection(r, "rnn", layer, seq, mask3, /*reverse=*/true, l);
        steps = merge(r, steps, backward.steps, l);
        final = merge(r, final, backward.finals[0], l);
      }
      seq = layer + 1 < r.layers ? dropBetweenLayers("rnn", layer, steps, l) : steps;
    }
    return {seq, final};
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
    return param(l, "attention.key.weight", {m, attentionDim(r)}, "uniform",
                 1.0f / std::sqrt((float)m));
  }

  Decoder decoderParams(const RnnSpec &r, Location l) {
    Decoder d;
    int64_t vocab = options.targetVocab, e = spec.model.embedding.dim, h = outWidth(r);
    d.embedding = param(loc(spec.model.embedding.loc), "decoder.embedding", {vocab, e},
                        "normal", 1.0f);
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
    d.outWeight = param(lo, "decoder.output.weight", {features, vocab}, "uniform", scale);
    d.outBias = param(lo, "decoder.output.bias", {vocab}, "uniform", scale);
    if (chosContext())
      d.contextWeight = param(lo, "decoder.context.weight", {r.hidden, vocab}, "uniform",
                              1.0f / std::sqrt((float)r.hidden));
    if (!attention())
      return d;
    Location la = loc(spec.model.attention->loc);
    int64_t m = memoryWidth(), a = attentionDim(r);
    auto uniform = [&](const std::string &name, ArrayRef<int64_t> shape, int64_t fanIn) {
      return param(la, name, shape, "uniform", 1.0f / std::sqrt((float)fanIn));
    };
    if (additive()) {
      d.query = uniform("attention.query.weight", {h, a}, h);
      d.v = uniform("attention.v", {a}, a);
    } else if (spec.model.attention->score == "general") {
      d.general = uniform("attention.weight", {h, m}, h);
    } else if (spec.model.attention->score == "cosine") {
      // tau = temperature, or temperature times a learned factor that starts at 1.
      const AttentionSpec &a = *spec.model.attention;
      d.temperature = b.create<mlir::attn::ConstantOp>(
          la, mlir::DenseElementsAttr::get(f32({1}), b.getF32FloatAttr((float)a.temperature)));
      if (a.learnTemperature)
        d.temperature = b.create<mlir::attn::MulOp>(
            la, d.temperature, param(la, "attention.temperature_scale", {1}, "ones", 1.0f));
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
      scores = b.create<mlir::attn::AttentionScoresOp>(l, q, mem.keys, d.v,
                                                       b.getStringAttr("additive"));
    } else {
      Value weight = a.score == "cosine" ? d.temperature : d.general;
      scores = b.create<mlir::attn::AttentionScoresOp>(l, query, mem.values, weight,
                                                       b.getStringAttr(a.score));
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
      weighting = window.getGaussian();
    }
    auto att = b.create<mlir::attn::AttentionOp>(l, scores, mask, mem.values, weighting);
    return {att.getContext(), att.getWeights()};
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
    SmallVector<Type> resultTypes;
    for (Value v : inits)
      resultTypes.push_back(v.getType());
    resultTypes.push_back(RankedTensorType::get({batch, steps, featureWidth(r)}, b.getF32Type()));
    SmallVector<Value> masks = decoderMasks(), xs = {embedded};
    xs.append(masks.begin(), masks.end());
    auto scan = b.create<mlir::attn::ScanOp>(l, resultTypes, inits, xs, ValueRange{}, 1, false,
                                             nullptr);
    SmallVector<Type> argTypes(resultTypes.begin(), resultTypes.end() - 1);
    argTypes.push_back(RankedTensorType::get({batch, spec.model.embedding.dim}, b.getF32Type()));
    for (Value m : masks)
      argTypes.push_back(stepSlice(m));
    Block *body =
        b.createBlock(&scan.getBody(), {}, argTypes, SmallVector<Location>(argTypes.size(), l));
    b.setInsertionPointToStart(body);
    ValueRange args = body->getArguments();
    size_t numCarried = inits.size();
    Step next = decoderStepWith(r, d, mem, enc.context, args[numCarried],
                                args.take_front(numCarried), l, args.drop_front(numCarried + 1));
    SmallVector<Value> yields(next.carried);
    yields.push_back(next.features);
    b.create<mlir::attn::YieldOp>(l, yields);
    b.setInsertionPointAfter(scan);
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

  // While a @loss is built: the keep masks of each stack's layers (see lossEntry).
  llvm::StringMap<SmallVector<Value>> dropout;
};

} // namespace

namespace {
// Per tensor and per program: the spec's per-key bounds (Schema.cpp) keep every dimension
// sane, but their products can still be far beyond memory (a 16384-wide LSTM has a
// [16384, 65536] recurrent weight), which LLVM then met with "out of memory". Checked on the
// types, before anything of that size exists.
constexpr int64_t kMaxTensorElements = int64_t(1) << 28;    // 1 GiB of f32
constexpr int64_t kMaxParameterElements = int64_t(1) << 28; // all weights together

LogicalResult checkSizes(ModuleOp module) {
  auto tooBig = [](Type type) {
    auto t = dyn_cast<RankedTensorType>(type);
    return t && t.hasStaticShape() && t.getNumElements() > kMaxTensorElements;
  };
  auto report = [](Operation *op, Type type, const char *what) {
    op->emitError() << what << " " << type << " has "
                    << cast<RankedTensorType>(type).getNumElements()
                    << " elements, more than attnc's limit of " << kMaxTensorElements
                    << " per tensor (1 GiB of f32); make the model or its batch smaller";
  };
  std::map<std::string, int64_t> parameters; // a parameter read by several functions is one
  WalkResult walk = module.walk([&](Operation *op) {
    if (auto p = dyn_cast<mlir::attn::ParamOp>(op))
      parameters[p.getName().str()] =
          cast<RankedTensorType>(p.getResult().getType()).getNumElements();
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments())
        if (tooBig(arg.getType())) {
          report(op, arg.getType(), "argument");
          return WalkResult::interrupt();
        }
    for (Value result : op->getResults())
      if (tooBig(result.getType())) {
        report(op, result.getType(), "result");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  int64_t total = 0;
  for (const auto &entry : parameters)
    total += entry.second;
  if (total > kMaxParameterElements)
    return module.emitError() << "the model has " << total
                              << " weights, more than attnc's limit of " << kMaxParameterElements
                              << " (1 GiB of f32)";
  return success();
}
} // namespace

OwningOpRef<ModuleOp> importRegressor(const Spec &spec, MLIRContext &context,
                                      const ImportOptions &options) {
  return Importer::regressor(spec, options, context);
}
OwningOpRef<ModuleOp> importLanguageModel(const Spec &spec, MLIRContext &context,
                                          const ImportOptions &options) {
  return Importer::lm(spec, options, context);
}
OwningOpRef<ModuleOp> importLabeller(const Spec &spec, MLIRContext &context,
                                     const ImportOptions &options) {
  return Importer::tagger(spec, options, context);
}
OwningOpRef<ModuleOp> importSeq2Seq(const Spec &spec, MLIRContext &context,
                                    const ImportOptions &options) {
  return Importer::encoderDecoder(spec, options, context);
}

OwningOpRef<ModuleOp> importSpec(const Spec &spec, MLIRContext &context,
                                 const ImportOptions &options) {
  context.loadDialect<mlir::attn::AttnDialect, func::FuncDialect>();
  const Family *family = familyOf(spec);
  if (!family)
    return nullptr;
  OwningOpRef<ModuleOp> module = family->import(spec, context, options);
  if (module && failed(checkSizes(*module)))
    return nullptr;
  return module;
}

std::string cName(const std::string &name) {
  std::string out;
  for (char c : name)
    out += std::isalnum((unsigned char)c) ? c : '_';
  if (out.empty() || std::isdigit((unsigned char)out[0]))
    out = "m_" + out;
  return out;
}

} // namespace attn::yaml
