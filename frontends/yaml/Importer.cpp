#include "frontends/yaml/Importer.h"

#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cctype>
#include <cmath>

using namespace mlir;

namespace attn::yaml {
namespace {

class Importer {
public:
  Importer(const Spec &spec, const ImportOptions &options, MLIRContext &ctx)
      : spec(spec), options(options), b(&ctx) {}

  OwningOpRef<ModuleOp> run() {
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc(Loc{spec.file, 1, 1}));
    (*module)->setAttr("attn.model", b.getStringAttr(spec.name));
    if (spec.task == "lm")
      languageModel(*module);
    else
      regression(*module);
    return module;
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
    auto loss = entry("loss", {xType, yType}, {"x", "target"}, {scalar}, {"loss"}, l);
    Value prediction = network(loss.getArgument(0));
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
    auto loss = entry("loss", {ids, ids}, {"tokens", "next"}, {scalar}, {"loss"}, l);
    Value embedded = b.create<mlir::attn::EmbeddingOp>(l, embeddingTable(), loss.getArgument(0));
    Value outputs = rnn(*spec.model.rnn, embedded, /*allSteps=*/true);
    Value logits = dense("output", outputs, vocab, loc(spec.model.output.loc));
    b.create<func::ReturnOp>(
        l, b.create<mlir::attn::CrossEntropyOp>(l, logits, loss.getArgument(1),
                                                b.getI64IntegerAttr(-1), b.getF32FloatAttr(0.0f))
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
      LayerParams w = layerParams(r, layer, in, /*reverse=*/false, l);
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
  Location loc(const Loc &l) {
    return FileLineColLoc::get(b.getStringAttr(l.file.empty() ? spec.file : l.file), l.line,
                               l.col);
  }

  // A public function with named inputs and results; the builder is left in its body.
  func::FuncOp entry(StringRef name, ArrayRef<Type> inputs, ArrayRef<StringRef> inputNames,
                     ArrayRef<Type> results, ArrayRef<StringRef> resultNames, Location l) {
    auto func = b.create<func::FuncOp>(l, name, b.getFunctionType(inputs, results));
    for (auto [i, n] : llvm::enumerate(inputNames))
      func.setArgAttr(i, "attn.name", b.getStringAttr(n));
    for (auto [i, n] : llvm::enumerate(resultNames))
      func.setResultAttr(i, "attn.name", b.getStringAttr(n));
    b.setInsertionPointToStart(func.addEntryBlock());
    return func;
  }

  // The model from its input to its prediction: the network, then the dense head.
  Value network(Value x) {
    Value features = spec.model.rnn ? rnn(*spec.model.rnn, x) : mlp(*spec.model.mlp, x);
    return dense("output", features, spec.model.output.size, loc(spec.model.output.loc));
  }

  Value param(Location l, const std::string &name, ArrayRef<int64_t> shape, StringRef init,
              float scale) {
    return b.create<mlir::attn::ParamOp>(l, RankedTensorType::get(shape, b.getF32Type()),
                                   b.getStringAttr(name), b.getStringAttr(init),
                                   b.getF32FloatAttr(scale), /*trainable=*/b.getBoolAttr(true));
  }

  // x [..., K] -> [..., n], weights initialised like PyTorch's nn.Linear: U(+-1/sqrt(K)).
  Value dense(const std::string &name, Value x, int64_t n, Location l) {
    int64_t k = cast<RankedTensorType>(x.getType()).getShape().back();
    float scale = 1.0f / std::sqrt((float)k);
    Value w = param(l, name + ".weight", {k, n}, "uniform", scale);
    Value bias = param(l, name + ".bias", {n}, "uniform", scale);
    return b.create<mlir::attn::DenseOp>(l, x, w, bias);
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
  LayerParams layerParams(const RnnSpec &r, int64_t layer, int64_t in, bool reverse,
                          Location l) {
    std::string p = "rnn.layer" + std::to_string(layer) + (reverse ? ".reverse." : ".");
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
    LayerParams w = layerParams(r, layer, in, reverse, l);
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
        seq = steps;
    }
    return allSteps ? seq : last;
  }

  const Spec &spec;
  ImportOptions options;
  OpBuilder b;
};

} // namespace

OwningOpRef<ModuleOp> importSpec(const Spec &spec, MLIRContext &context,
                                 const ImportOptions &options) {
  context.loadDialect<mlir::attn::AttnDialect, func::FuncDialect>();
  return Importer(spec, options, context).run();
}

void addTrainingPasses(OpPassManager &pm, const TrainSpec &t) {
  mlir::attn::AttnTrainStepOptions step;
  step.optimizer = t.optimizer.type;
  step.momentum = t.optimizer.momentum;
  step.beta1 = t.optimizer.beta1;
  step.beta2 = t.optimizer.beta2;
  step.epsilon = t.optimizer.epsilon;
  step.weightDecay = t.optimizer.weightDecay;
  step.clipNorm = t.clipNorm;
  pm.addPass(mlir::attn::createAttnAutodiff());
  pm.addPass(mlir::attn::createAttnTrainStep(step));
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
