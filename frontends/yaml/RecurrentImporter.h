// The layers the recurrent families share (regressor, language model, labeller, seq2seq):
// embeddings, mlp and rnn stacks (uni- and bidirectional, with dropout between layers), masked
// sequences over right-padded tokens, and the @loss entry with its per-step inputs. Each
// recurrent family's importer derives from RecurrentImporter in its own file and builds its
// entry points (`void entries(ModuleOp)`). Private to the frontend.
#pragma once

#include "frontends/yaml/ImportBuilder.h"

#include "attn/Names.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>
#include <string>

namespace attn::yaml::recurrent {

using namespace mlir;

class RecurrentImporter : protected ImportBuilder {
public:
  using ImportBuilder::ImportBuilder;

  // The module of `Importer` (a family's importer), with the entry points its `entries`
  // builds.
  template <typename Importer>
  static OwningOpRef<ModuleOp> import(const Spec &spec, const ImportOptions &options,
                                      MLIRContext &context) {
    Importer importer(spec, options, context);
    OwningOpRef<ModuleOp> module = importer.newModule();
    importer.entries(*module);
    return module;
  }

protected:
  static mlir::attn::GruForm gruForm(GruForm form) {
    switch (form) {
    case GruForm::Pytorch:
      return mlir::attn::GruForm::pytorch;
    case GruForm::Seed:
      return mlir::attn::GruForm::seed;
    case GruForm::Minimal:
      return mlir::attn::GruForm::minimal;
    }
    llvm_unreachable("every GRU form has a cell form");
  }

  // PyTorch's nn.Embedding initialisation: N(0, 1).
  Value embeddingTable() {
    return param(loc(spec.model.embedding.loc), "embedding",
                 {options.vocabSize, spec.model.embedding.dim}, Init::normal, 1.0f);
  }

  // The model from its input to its prediction: the network, then the dense head.
  Value network(Value x) {
    Value features = spec.model.rnn ? rnn(*spec.model.rnn, x) : mlp(*spec.model.mlp, x);
    return dense("output", features, spec.model.output.size, loc(spec.model.output.loc));
  }


  Value mlp(const MlpSpec &m, Value x) {
    Location l = loc(m.loc);
    for (auto [i, width] : llvm::enumerate(m.hidden)) {
      x = dense("mlp.layer" + std::to_string(i), x, width, l);
      if (m.activation == MlpActivation::Tanh)
        x = b.create<mlir::attn::TanhOp>(l, x);
      else if (m.activation == MlpActivation::Relu)
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

  // What a layer hands on: the hidden state, projected for an lstm with a projection.
  int64_t outWidth(const RnnSpec &r) {
    return r.cell == Cell::Lstm && r.projection > 0 ? r.projection : r.hidden;
  }

  // The recurrent cells, one row each: the states a layer carries, its weights (initialised
  // like PyTorch's recurrent layers: U(+-1/sqrt(H))) and one step of it. A new cell is a row.
  using ParamFn = std::function<Value(const std::string &name, ArrayRef<int64_t> shape)>;
  struct CellRule {
    Cell cell;
    int states; // h, and for an lstm the cell c (the first is what the layer hands on)
    LayerParams (*params)(const RnnSpec &r, int64_t in, int64_t out, const ParamFn &u);
    SmallVector<Value> (*step)(OpBuilder &b, Location l, const RnnSpec &r, const LayerParams &w,
                               Value x, ValueRange state);
  };
  static const CellRule &cellRule(Cell cell) {
    static const CellRule rules[] = {
        {Cell::Rnn, 1,
         [](const RnnSpec &r, int64_t in, int64_t, const ParamFn &u) {
           int64_t h = r.hidden;
           LayerParams w;
           w.wih = u("w_ax", {in, h});
           w.whh = u("w_aa", {h, h});
           w.bias = u("b_a", {h});
           return w;
         },
         [](OpBuilder &b, Location l, const RnnSpec &, const LayerParams &w, Value x,
            ValueRange state) -> SmallVector<Value> {
           return {b.create<mlir::attn::RnnCellOp>(l, x, state[0], w.wih, w.whh, w.bias)};
         }},
        {Cell::Gru, 1,
         [](const RnnSpec &r, int64_t in, int64_t, const ParamFn &u) {
           int64_t h = r.hidden, gates = r.gruForm == GruForm::Minimal ? 2 : 3;
           LayerParams w;
           w.wih = u("w_ih", {in, gates * h});
           w.whh = u("w_hh", {h, gates * h});
           w.bias = u("b_ih", {gates * h});
           w.bhh = u("b_hh", {gates * h});
           return w;
         },
         [](OpBuilder &b, Location l, const RnnSpec &r, const LayerParams &w, Value x,
            ValueRange state) -> SmallVector<Value> {
           return {b.create<mlir::attn::GruCellOp>(l, x, state[0], w.wih, w.whh, w.bias, w.bhh,
                                                   gruForm(r.gruForm))};
         }},
        {Cell::Lstm, 2,
         [](const RnnSpec &r, int64_t in, int64_t out, const ParamFn &u) {
           int64_t h = r.hidden;
           LayerParams w;
           w.wih = u("w_ih", {in, 4 * h});
           w.whh = u("w_hh", {out, 4 * h});
           w.bias = u("b", {4 * h});
           if (r.peephole == Peephole::Diagonal)
             w.peephole = u("w_peephole", {3, h}); // rows: gates i, f, o
           else if (r.peephole == Peephole::Full)
             w.peephole = u("w_peephole", {h, 4 * h}); // column blocks: gates i, f, g, o
           if (r.projection > 0) {
             w.proj = u("w_proj", {h, out});
             w.projBias = u("b_proj", {out});
           }
           return w;
         },
         [](OpBuilder &b, Location l, const RnnSpec &r, const LayerParams &w, Value x,
            ValueRange state) -> SmallVector<Value> {
           auto form = r.peephole == Peephole::Full ? mlir::attn::PeepholeForm::full
                                                    : mlir::attn::PeepholeForm::diagonal;
           auto cell =
               b.create<mlir::attn::LstmCellOp>(l, x, state[0], state[1], w.wih, w.whh, w.bias,
                                                w.peephole, w.proj, w.projBias, form);
           return {cell.getNewHidden(), cell.getNewCell()};
         }},
    };
    return rules[static_cast<size_t>(cell)];
  }

  // The state a layer carries: h [B, out], then for an lstm the cell c [B, H].
  SmallVector<Type> stateTypes(const RnnSpec &r, int64_t batch) {
    auto f32 = b.getF32Type();
    SmallVector<Type> types = {RankedTensorType::get({batch, outWidth(r)}, f32)};
    if (cellRule(r.cell).states > 1)
      types.push_back(RankedTensorType::get({batch, r.hidden}, f32));
    return types;
  }

  // An entry `name`(input, every layer's states) -> (result, every layer's new states), the
  // states named state<l> (and state<l>_c for an lstm) [batch, ...] on both sides, as a
  // language model's @step and a regressor's @forward_state carry them; the builder is left
  // at its start. Argument 1 + l * (states per layer) is layer l's first state.
  func::FuncOp statefulEntry(StringRef name, const RnnSpec &r, int64_t batch, Type input,
                             StringRef inputName, Type result, StringRef resultName, Location l) {
    SmallVector<Type> states = stateTypes(r, batch);
    SmallVector<Type> inputs = {input}, results = {result};
    SmallVector<std::string> names = {inputName.str()}, resultNames = {resultName.str()};
    for (int64_t layer = 0; layer < r.layers; ++layer)
      for (auto [k, t] : llvm::enumerate(states)) {
        std::string state = "state" + std::to_string(layer) + (k ? "_c" : "");
        inputs.push_back(t);
        results.push_back(t);
        names.push_back(state);
        resultNames.push_back(state);
      }
    SmallVector<StringRef> nameRefs(names.begin(), names.end());
    SmallVector<StringRef> resultRefs(resultNames.begin(), resultNames.end());
    return entry(name, inputs, nameRefs, results, resultRefs, l);
  }

  // Layer `layer`'s weights (see CellRule).
  LayerParams layerParams(const RnnSpec &r, const std::string &prefix, int64_t layer, int64_t in,
                          bool reverse, Location l) {
    std::string p = prefix + ".layer" + std::to_string(layer) + (reverse ? ".reverse." : ".");
    float scale = 1.0f / std::sqrt((float)r.hidden);
    ParamFn u = [&](const std::string &name, ArrayRef<int64_t> shape) {
      return param(l, p + name, shape, Init::uniform, scale);
    };
    return cellRule(r.cell).params(r, in, outWidth(r), u);
  }

  // One step of a layer: the new states (the first is what the layer hands on).
  SmallVector<Value> cellStep(const RnnSpec &r, const LayerParams &w, Value x, ValueRange state,
                              Location l) {
    return cellRule(r.cell).step(b, l, r, w, x, state);
  }

  // One direction of one layer over seq [B, T, I]: its final output [B, W] and, with
  // `stack`, its output at every step [B, T, W] (in time order also when reversed).
  std::pair<Value, Value> direction(const RnnSpec &r, int64_t layer, Value seq, bool reverse,
                                    bool stack, Location l) {
    LayerRun run = runLayer(r, "rnn", layer, seq, reverse, stack, l);
    return {run.finals[0], run.steps};
  }

  // What runLayer gives: the final states (h, and for an lstm c) and, when asked for, the
  // output at every step [B, T, W] (in time order also when reversed).
  struct LayerRun {
    SmallVector<Value> finals;
    Value steps;
  };

  // One direction of layer `layer` of the stack `prefix` ("rnn", "encoder") over seq
  // [B, T, I] from `initial` (its states, see stateTypes), or from zero states.
  LayerRun runLayer(const RnnSpec &r, const std::string &prefix, int64_t layer, Value seq,
                    bool reverse, bool stack, Location l, ValueRange initial = {}) {
    auto seqType = cast<RankedTensorType>(seq.getType());
    int64_t batch = seqType.getShape()[0], steps = seqType.getShape()[1];
    int64_t in = seqType.getShape()[2];
    SmallVector<Type> states = stateTypes(r, batch);
    LayerParams w = layerParams(r, prefix, layer, in, reverse, l);
    SmallVector<Value> inits(initial.begin(), initial.end());
    if (inits.empty())
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
    return {SmallVector<Value>(scan.getResults().take_front(states.size())),
            stack ? scan.getResults().back() : Value()};
  }

  // The two directions' outputs as one: concatenated features, or their sum.
  Value merge(const RnnSpec &r, Value forward, Value backward, Location l) {
    if (r.merge == Merge::Sum)
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
      // Dropout between layers only: the last layer's steps (allSteps) go out as they are.
      if (stack)
        seq = layer + 1 < r.layers ? dropBetweenLayers("rnn", layer, steps, l) : steps;
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

  // The decoder's cells: model.rnn's, `model.seq2seq.decoder_hidden` wide if that is set.
  RnnSpec decoderRnn() const {
    RnnSpec d = *spec.model.rnn;
    if (spec.model.seq2seq.decoderHidden > 0)
      d.hidden = spec.model.seq2seq.decoderHidden;
    return d;
  }

  // What a layer of `stack` hands on: both directions side by side for a bidirectional
  // concat stack (the decoder is never bidirectional).
  int64_t layerWidth(const RnnSpec &r, StringRef stack) {
    if (stack == "decoder")
      return outWidth(decoderRnn());
    bool both = r.bidirectional && r.merge == Merge::Concat;
    return outWidth(r) * (both ? 2 : 1);
  }

  // x [B, T, W], the outputs of layer `layer` of `stack`, times its keep mask (if any).
  Value dropBetweenLayers(StringRef stack, int64_t layer, Value x, Location l) {
    auto it = dropout.find(stack);
    if (it == dropout.end())
      return x;
    return b.create<mlir::attn::MulOp>(l, x, it->second[layer]);
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

  // While a @loss is built: the keep masks of each stack's layers (see lossEntry).
  llvm::StringMap<SmallVector<Value>> dropout;
};

} // namespace attn::yaml::recurrent
