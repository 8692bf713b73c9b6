#include "frontends/yaml/Importer.h"

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
  Importer(const Spec &spec, MLIRContext &ctx) : spec(spec), b(&ctx) {}

  OwningOpRef<ModuleOp> run() {
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc(Loc{spec.file, 1, 1}));
    (*module)->setAttr("attn.model", b.getStringAttr(spec.name));
    b.setInsertionPointToEnd(module->getBody());
    int64_t batch = spec.train.batchSize, window = spec.data.window;
    // The rnn reads one feature per step; the mlp sees the whole window as one vector.
    SmallVector<int64_t> xShape = spec.model.rnn ? SmallVector<int64_t>{batch, window, 1}
                                                 : SmallVector<int64_t>{batch, window};
    auto xType = RankedTensorType::get(xShape, b.getF32Type());
    auto yType = RankedTensorType::get({batch, spec.model.output.size}, b.getF32Type());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Location l = loc(spec.model.loc);

    // @forward(x) -> y: inference.
    auto forward = entry("forward", {xType}, {"x"}, {yType}, {"y"}, l);
    b.create<func::ReturnOp>(l, network(forward.getArgument(0)));

    // @loss(x, target) -> mean squared error: what training differentiates.
    b.setInsertionPointToEnd(module->getBody());
    auto loss = entry("loss", {xType, yType}, {"x", "target"}, {scalar}, {"loss"}, l);
    Value prediction = network(loss.getArgument(0));
    b.create<func::ReturnOp>(l, b.create<mlir::attn::MseOp>(l, prediction, loss.getArgument(1))
                                    .getResult());
    return module;
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

  // Stacked vanilla RNN over x [B, T, I]; returns the last layer's final state [B, H].
  // Weights initialised like PyTorch's nn.RNN: U(+-1/sqrt(H)).
  Value rnn(const RnnSpec &r, Value x) {
    Location l = loc(r.loc);
    int64_t batch = cast<RankedTensorType>(x.getType()).getShape()[0];
    int64_t hidden = r.hidden;
    float scale = 1.0f / std::sqrt((float)hidden);
    auto stateType = RankedTensorType::get({batch, hidden}, b.getF32Type());
    Value seq = x, last;
    for (int64_t layer = 0; layer < r.layers; ++layer) {
      std::string prefix = "rnn.layer" + std::to_string(layer);
      auto seqType = cast<RankedTensorType>(seq.getType());
      int64_t in = seqType.getShape()[2];
      Value wax = param(l, prefix + ".w_ax", {in, hidden}, "uniform", scale);
      Value waa = param(l, prefix + ".w_aa", {hidden, hidden}, "uniform", scale);
      Value bias = param(l, prefix + ".b_a", {hidden}, "uniform", scale);
      Value h0 = b.create<mlir::attn::ConstantOp>(
          l, DenseElementsAttr::get(stateType, b.getF32FloatAttr(0.0f)));
      // Every layer but the last also hands its per-step states to the next layer.
      bool stack = layer + 1 < r.layers;
      SmallVector<Type> resultTypes = {stateType};
      if (stack)
        resultTypes.push_back(
            RankedTensorType::get({batch, seqType.getShape()[1], hidden}, b.getF32Type()));
      auto scan = b.create<mlir::attn::ScanOp>(l, resultTypes, ValueRange{h0}, ValueRange{seq}, ValueRange{},
                                         /*axis=*/1, /*reverse=*/false, /*length=*/nullptr);
      Block *body = b.createBlock(&scan.getBody(), {},
                                  {stateType, RankedTensorType::get({batch, in}, b.getF32Type())},
                                  {l, l});
      b.setInsertionPointToStart(body);
      Value h = b.create<mlir::attn::RnnCellOp>(l, body->getArgument(1), body->getArgument(0), wax,
                                          waa, bias);
      SmallVector<Value> yields = {h};
      if (stack)
        yields.push_back(h);
      b.create<mlir::attn::YieldOp>(l, yields);
      b.setInsertionPointAfter(scan);
      last = scan.getResult(0);
      if (stack)
        seq = scan.getResult(1);
    }
    return last;
  }

  const Spec &spec;
  OpBuilder b;
};

} // namespace

OwningOpRef<ModuleOp> importSpec(const Spec &spec, MLIRContext &context) {
  context.loadDialect<mlir::attn::AttnDialect, func::FuncDialect>();
  return Importer(spec, context).run();
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
