// task: regress, an mlp or rnn that maps a window of numbers to the next one, or to the next
// data.horizon values: an mlp predicts them at once, an rnn becomes an encoder-decoder
// forecaster (the seed's N -> M form) that feeds back its own predictions. With
// data.builtin: wave (or a data.path file of vectors, data.features) the input is one vector
// and the output a sequence (the seed's 1 -> N).
#include "frontends/yaml/Family.h"
#include "frontends/yaml/RecurrentImporter.h"

#include "attn/data/Sine.h"

namespace attn::yaml::recurrent {
namespace {

class RegressorImporter : public RecurrentImporter {
public:
  using RecurrentImporter::RecurrentImporter;

  // @forward(x) -> y and @loss(x, target) -> mean squared error.
  void entries(ModuleOp module) {
    b.setInsertionPointToEnd(module.getBody());
    int64_t batch = spec.train.batchSize, window = spec.data.window;
    // The rnn reads one feature per step; the mlp sees the whole window as one vector; a
    // wave's input is one vector of features for either.
    SmallVector<int64_t> xShape = wave()           ? SmallVector<int64_t>{batch, vectorWidth()}
                                  : spec.model.rnn ? SmallVector<int64_t>{batch, window, 1}
                                                   : SmallVector<int64_t>{batch, window};
    auto xType = RankedTensorType::get(xShape, b.getF32Type());
    int64_t outputs = wave() && spec.model.rnn ? spec.data.horizon : spec.model.output.size;
    auto yType = RankedTensorType::get({batch, outputs}, b.getF32Type());
    Location l = loc(spec.model.loc);

    auto forward = entry("forward", {xType}, {"x"}, {yType}, {"y"}, l);
    b.create<func::ReturnOp>(l, predict(forward.getArgument(0)));

    b.setInsertionPointToEnd(module.getBody());
    int64_t steps = wave() ? spec.data.horizon : window;
    auto loss = lossEntry({xType, yType}, {"x", "target"}, {{"rnn", steps}}, l);
    Value prediction = predict(loss.getArgument(0));
    dropout.clear();
    b.create<func::ReturnOp>(l, b.create<mlir::attn::MseOp>(l, prediction, loss.getArgument(1))
                                    .getResult());

    if (spec.model.rnn && !wave() && !spec.model.rnn->bidirectional)
      forwardState(module, xType, yType, l);
  }

private:
  bool wave() const { return oneToMany(spec); }
  // A one-to-many example's input: the builtin wave's (a, w, cos phi, sin phi), or a file's
  // data.features numbers.
  int64_t vectorWidth() const {
    return spec.data.path.empty() ? data::kWaveFeatures : spec.data.features;
  }

  // A stateful @forward (Keras's initial_state and return_state), for streaming a series
  // window by window: the stack starts from the given states and returns its final ones.
  //   @forward_state(x [B,N,1], state<l> [B,W] (and state<l>_c [B,H] for an lstm), ...)
  //       -> (y [B,1], state<l>', ...)
  // With zero states it is @forward; fed its own final states it continues the series.
  void forwardState(ModuleOp module, Type xType, Type yType, Location l) {
    const RnnSpec &r = *spec.model.rnn;
    size_t perLayer = stateTypes(r, 1).size();
    b.setInsertionPointToEnd(module.getBody());
    auto f = statefulEntry("forward_state", r, spec.train.batchSize, xType, "x", yType, "y", l);
    Location lr = loc(r.loc);
    SmallVector<Value> outs = {Value()};
    Value seq = f.getArgument(0);
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      ValueRange initial = f.getArguments().slice(1 + layer * perLayer, perLayer);
      LayerRun run = runLayer(r, "rnn", layer, seq, /*reverse=*/false,
                              /*stack=*/layer + 1 < r.layers, lr, initial);
      outs.append(run.finals.begin(), run.finals.end());
      seq = run.steps;
      if (layer + 1 == r.layers)
        outs[0] =
            dense("output", run.finals[0], spec.model.output.size, loc(spec.model.output.loc));
    }
    b.create<func::ReturnOp>(l, outs);
  }

  Value predict(Value x) { return wave() && spec.model.rnn ? generate(x) : network(x); }

  // One to many (the seed's figures 2.5 and 2.6): the vector x [B, F] becomes a sequence
  // [B, N, F], x at step 0 and zeros after it (feed: first_step) or x at every step
  // (every_step); the stack runs over it and a dense head reads its output at every step:
  // y [B, N].
  Value generate(Value x) {
    const RnnSpec &r = *spec.model.rnn;
    Location l = loc(r.loc);
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    int64_t batch = shape[0], features = shape[1], steps = spec.data.horizon;
    Type f32 = b.getF32Type();
    SmallVector<float> where(steps, r.feed == Feed::EveryStep ? 1.0f : 0.0f);
    where[0] = 1.0f;
    auto whereType = RankedTensorType::get({1, steps, 1}, f32);
    Value pattern = b.create<mlir::attn::ConstantOp>(
        l, DenseElementsAttr::get(whereType, ArrayRef<float>(where)));
    Value x3 =
        b.create<mlir::attn::ReshapeOp>(l, RankedTensorType::get({batch, 1, features}, f32), x);
    Value seq = b.create<mlir::attn::MulOp>(l, x3, pattern); // [B, N, F]
    Value y = dense("output", rnn(r, seq, /*allSteps=*/true), 1, loc(spec.model.output.loc));
    return b.create<mlir::attn::ReshapeOp>(l, RankedTensorType::get({batch, steps}, f32), y);
  }
};

// The forecaster, for model.rnn with data.horizon M > 1 (seed 000's N -> M form, seed 003's
// time-series seq2seq): the encoder (model.rnn's stack) reads the window; the decoder (a stack
// of the same shape with its own weights) starts from the encoder's final states (h, and c for
// an lstm, per layer) and, at step k, reads one value and predicts the next,
//   s_k = cells(v_k, s_{k-1}),   y^_k = s_k W_out + b_out   ([B, 1]),
// where v_0 is the window's last value and v_k (k > 0) the true y_{k-1} where the coin
// forecast_teacher[:, k] is 1 (teacher forcing; train.teacher_forcing draws the coins, all 1
// by default), else the model's own y^_{k-1} (scheduled sampling). Validation gets all-zero
// coins, so the validation loss (and the best checkpoint) is the free-running forecast's, as
// is @forward, which forecasts from the window alone.
//   @forward(x [B,N,1]) -> y [B,M]
//   @loss(x [B,N,1], target [B,M], forecast_teacher [B,M]) -> mean squared error over all M
// Unlike a token decoder's argmax, the fed-back prediction is differentiable: its gradient
// flows back through the steps that read it.
class ForecasterImporter : public RecurrentImporter {
public:
  using RecurrentImporter::RecurrentImporter;

  void entries(ModuleOp module) {
    const RnnSpec &r = *spec.model.rnn;
    int64_t batch = spec.train.batchSize, window = spec.data.window;
    int64_t horizon = spec.data.horizon;
    Type f32 = b.getF32Type();
    auto xType = RankedTensorType::get({batch, window, 1}, f32);
    auto yType = RankedTensorType::get({batch, horizon}, f32);
    Location l = loc(spec.model.loc);

    b.setInsertionPointToEnd(module.getBody());
    auto forward = entry("forward", {xType}, {"x"}, {yType}, {"y"}, l);
    b.create<func::ReturnOp>(l, forecast(r, forward.getArgument(0), Value(), Value(), l));

    b.setInsertionPointToEnd(module.getBody());
    auto loss = lossEntry({xType, yType, yType}, {"x", "target", ::attn::names::kForecastTeacher},
                          {{"encoder", window}, {"decoder", horizon}}, l);
    Value prediction =
        forecast(r, loss.getArgument(0), loss.getArgument(1), loss.getArgument(2), l);
    dropout.clear();
    b.create<func::ReturnOp>(
        l, b.create<mlir::attn::MseOp>(l, prediction, loss.getArgument(1)).getResult());
  }

private:
  // y^ [B, M] for the window x [B, N, 1]; `target` [B, M] feeds the decoder where the coins
  // `teacher` [B, M] are 1; without them it feeds back its own predictions.
  Value forecast(const RnnSpec &r, Value x, Value target, Value teacher, Location l) {
    auto xShape = cast<RankedTensorType>(x.getType()).getShape();
    int64_t batch = xShape[0], window = xShape[1], horizon = spec.data.horizon;
    Type f32 = b.getF32Type();
    auto column = RankedTensorType::get({batch, 1}, f32);

    // The encoder: every layer's final states start the decoder's same layer.
    SmallVector<Value> states;
    Value seq = x;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      LayerRun run = runLayer(r, "encoder", layer, seq, /*reverse=*/false,
                              /*stack=*/layer + 1 < r.layers, l);
      states.append(run.finals);
      if (run.steps)
        seq = dropBetweenLayers("encoder", layer, run.steps, l);
    }
    Value last = b.create<mlir::attn::ReshapeOp>(
        l, column,
        b.create<mlir::attn::SliceOp>(l, x, b.getDenseI64ArrayAttr({0, window - 1, 0}),
                                      b.getDenseI64ArrayAttr({batch, 1, 1})));

    // The decoder's weights, outside its scan.
    SmallVector<LayerParams> layers;
    for (int64_t layer = 0; layer < r.layers; ++layer)
      layers.push_back(layerParams(r, "decoder", layer, layer == 0 ? 1 : outWidth(r),
                                   /*reverse=*/false, l));
    int64_t width = outWidth(r);
    float scale = 1.0f / std::sqrt((float)width);
    Value wOut = param(l, "decoder.output.weight", {width, 1}, Init::uniform, scale);
    Value bOut = param(l, "decoder.output.bias", {1}, Init::uniform, scale);

    // The values read at each step under teacher forcing: [last, y_0, ..., y_{M-2}].
    SmallVector<Value> xs;
    if (target) {
      Value gold = last;
      if (horizon > 1)
        gold = b.create<mlir::attn::ConcatOp>(
            l,
            ValueRange{last,
                       b.create<mlir::attn::SliceOp>(l, target, b.getDenseI64ArrayAttr({0, 0}),
                                                     b.getDenseI64ArrayAttr({batch, horizon - 1}))},
            b.getI64IntegerAttr(1));
      auto steps3 = RankedTensorType::get({batch, horizon, 1}, f32);
      xs.push_back(b.create<mlir::attn::ReshapeOp>(l, steps3, gold));
      if (teacher)
        xs.push_back(b.create<mlir::attn::ReshapeOp>(l, steps3, teacher));
    }
    // Dropout between the decoder's layers (@loss only): keep masks [B, M, W], per step [B, W].
    SmallVector<Value> masks;
    if (auto it = dropout.find("decoder"); it != dropout.end())
      masks = it->second;
    xs.append(masks.begin(), masks.end());

    // Carried: every layer's states, then the previous prediction.
    SmallVector<Value> inits(states);
    inits.push_back(last);
    SmallVector<Type> resultTypes;
    for (Value v : inits)
      resultTypes.push_back(v.getType());
    resultTypes.push_back(RankedTensorType::get({batch, horizon, 1}, f32));
    auto scan = b.create<mlir::attn::ScanOp>(l, resultTypes, inits, xs, ValueRange{}, /*axis=*/1,
                                             /*reverse=*/false,
                                             xs.empty() ? b.getI64IntegerAttr(horizon) : nullptr);
    SmallVector<Type> argTypes(resultTypes.begin(), resultTypes.end() - 1);
    for (Value x : xs) {
      auto shape = cast<RankedTensorType>(x.getType()).getShape();
      argTypes.push_back(RankedTensorType::get({shape[0], shape[2]}, f32));
    }
    Block *body =
        b.createBlock(&scan.getBody(), {}, argTypes, SmallVector<Location>(argTypes.size(), l));
    b.setInsertionPointToStart(body);
    ValueRange args = body->getArguments();
    size_t numStates = states.size();
    Value previous = args[numStates], v = previous;
    if (target) {
      Value gold = args[numStates + 1];
      // v = own + coin (gold - own): the true value where the coin is 1.
      v = teacher ? b.create<mlir::attn::AddOp>(
                        l, previous,
                        b.create<mlir::attn::MulOp>(l, args[numStates + 2],
                                                    b.create<mlir::attn::SubOp>(l, gold, previous)))
                  : gold;
    }
    ValueRange stepMasks = args.take_back(masks.size());
    SmallVector<Value> yields;
    size_t perLayer = cellRule(r.cell).states;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      SmallVector<Value> next =
          cellStep(r, layers[layer], v, args.slice(layer * perLayer, perLayer), l);
      yields.append(next);
      v = next[0];
      if (layer + 1 < r.layers && !stepMasks.empty())
        v = b.create<mlir::attn::MulOp>(l, v, stepMasks[layer]);
    }
    Value predicted = b.create<mlir::attn::DenseOp>(l, v, wOut, bOut);
    yields.push_back(predicted);
    yields.push_back(predicted);
    b.create<mlir::attn::YieldOp>(l, yields);
    b.setInsertionPointAfter(scan);
    return b.create<mlir::attn::ReshapeOp>(l, RankedTensorType::get({batch, horizon}, f32),
                                           scan.getResults().back());
  }
};

// (clang-format 14 reads `import <` as a C++20 module import and splits it.)
// clang-format off
template <typename Importer>
mlir::OwningOpRef<mlir::ModuleOp> importWith(const Spec &spec, const ImportOptions &options,
                                             mlir::MLIRContext &context) {
  return RecurrentImporter::import<Importer>(spec, options, context);
}
// clang-format on

} // namespace
} // namespace attn::yaml::recurrent

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == Task::Regress; }

void validate(const Spec &s, Problems &p) {
  bool wave = oneToMany(s);
  if (s.data.path.empty() && s.data.builtin != "sine" && s.data.builtin != "sines" && !wave)
    p.error(s.data.loc,
            "task 'regress' learns from numbers, but data.builtin is '" + s.data.builtin + "'",
            "set data.builtin: sine, sines or wave, data.path: a series file, or task: lm");
  int64_t horizon = s.data.horizon;
  if (wave && s.data.window != DataSpec().window)
    p.error("data.window", s.data.loc,
            s.data.path.empty()
                ? "data.window does not apply to data.builtin wave: its input is one vector "
                  "(a, w, cos phi, sin phi), and data.horizon is the length of the wave"
                : "data.window does not apply to a file of vectors (data.features): each "
                  "line's input is one vector, and data.horizon is its sequence's length",
            "remove data.window");
  if (s.data.features > 0 && s.data.path.empty())
    p.error("data.features", s.data.loc,
            "data.features is the width of the vectors in a data.path file, but the data is "
            "data.builtin: " +
                s.data.builtin +
                (s.data.builtin == "wave" ? " (its vectors are (a, w, cos phi, sin phi))" : ""),
            "remove data.features, or set data.path");

  if (forecaster(s)) {
    const RnnSpec &r = *s.model.rnn;
    if (s.model.output.size != 1)
      p.error(s.model.output.loc,
              "a forecaster (model.rnn, data.horizon " + std::to_string(horizon) +
                  ") predicts one value per step, but model.output.size is " +
                  std::to_string(s.model.output.size),
              "set model.output.size to 1");
    if (r.bidirectional)
      p.error(r.loc,
              "a forecaster's decoder starts from its encoder's final states, which a "
              "bidirectional encoder does not end in",
              "remove model.rnn.bidirectional");
  } else if (wave && s.model.rnn) {
    if (s.model.output.size != 1)
      p.error(s.model.output.loc,
              "a one-to-many rnn predicts one value per step, but model.output.size is " +
                  std::to_string(s.model.output.size),
              "set model.output.size to 1");
  } else if (s.model.output.size != horizon) {
    p.error(
        s.model.output.loc,
        (s.data.path.empty() ? "data.builtin " + s.data.builtin : std::string("a series file")) +
            " has " + std::to_string(horizon) + " target value" + (horizon == 1 ? "" : "s") +
            " per example (data.horizon), but model.output.size is " +
            std::to_string(s.model.output.size),
        "set model.output.size to " + std::to_string(horizon));
  }
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> importRegressor(const Spec &spec, mlir::MLIRContext &context,
                                                  const ImportOptions &options) {
  if (forecaster(spec))
    return recurrent::importWith<recurrent::ForecasterImporter>(spec, options, context);
  return recurrent::importWith<recurrent::RegressorImporter>(spec, options, context);
}

const Family kRegressorFamily = {"regressor",
                                 "mlp and rnn regressors of the next value (or values) of a "
                                 "sequence, and rnn encoder-decoder forecasters",
                                 claims, validate, importRegressor};

} // namespace attn::yaml
