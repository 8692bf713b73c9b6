// attn-train-step: @loss_grad -> @train_step, one compiled call per training step: loss,
// gradients, global-norm clipping and the optimizer update of every parameter.
#include "compiler/Transforms/Passes.h"
#include "attn/Names.h"
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"

#include <cstring>
#include <numeric>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTRAINSTEP
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct TrainStep : mlir::attn::impl::AttnTrainStepBase<TrainStep> {
  using AttnTrainStepBase::AttnTrainStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw") {
      module.emitError("attn-train-step: unknown optimizer '")
          << optimizer << "' (expected sgd, adam or adamw)";
      return signalPassFailure();
    }
    auto lossGrad = module.lookupSymbol<func::FuncOp>("loss_grad");
    if (!lossGrad) {
      module.emitError("attn-train-step: no @loss_grad; run attn-autodiff first");
      return signalPassFailure();
    }
    build(lossGrad);
  }

  // The first `attn.param` named `name` in `func`.
  static ParamOp findParam(func::FuncOp func, StringRef name) {
    ParamOp found;
    func.walk([&](ParamOp p) {
      if (!found && p.getName() == name)
        found = p;
    });
    return found;
  }

  void build(func::FuncOp lossGrad) {
    OpBuilder b(lossGrad);
    b.setInsertionPointAfter(lossGrad);
    auto step = cast<func::FuncOp>(b.clone(*lossGrad));
    step.setSymName("train_step");
    Block &body = step.front();
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Location loc = step.getLoc();
    unsigned numArgs = body.getNumArguments();
    step.insertArgument(numArgs, scalar,
                        b.getDictionaryAttr(b.getNamedAttr("attn.name", b.getStringAttr("lr"))), loc);
    step.insertArgument(numArgs + 1, scalar,
                        b.getDictionaryAttr(b.getNamedAttr("attn.name", b.getStringAttr("step"))), loc);
    Value lr = body.getArgument(numArgs), count = body.getArgument(numArgs + 1);

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    Value loss = ret.getOperand(0);
    SmallVector<Value> grads(ret.getOperands().drop_front());
    SmallVector<StringRef> names;
    for (unsigned i = 1; i < ret.getNumOperands(); ++i)
      names.push_back(step.getResultAttrOfType<StringAttr>(i, "attn.name").getValue().drop_front(
          strlen(::attn::names::kGradPrefix)));

    // Global L2 norm over every gradient, before clipping.
    Value sumSq = scalarOf(b, loc, 0.0f);
    for (Value g : grads) {
      auto rank = cast<RankedTensorType>(g.getType()).getRank();
      SmallVector<int64_t> all(rank);
      std::iota(all.begin(), all.end(), 0);
      Value sq = b.create<MulOp>(loc, g, g);
      Value s = rank ? b.create<ReduceSumOp>(loc, sq, b.getDenseI64ArrayAttr(all),
                                             b.getBoolAttr(false)).getResult()
                     : sq;
      sumSq = b.create<AddOp>(loc, sumSq, s);
    }
    Value norm = b.create<SqrtOp>(loc, sumSq);
    if (clipNorm > 0.0f) {
      Value clip = scalarOf(b, loc, clipNorm);
      Value scale = b.create<DivOp>(loc, clip, b.create<MaximumOp>(loc, norm, clip));
      for (Value &g : grads)
        g = b.create<MulOp>(loc, g, scale);
    }

    SmallVector<Value> results = {loss, norm};
    SmallVector<std::string> resultNames = {::attn::names::kLoss, ::attn::names::kGradNorm};
    auto state = [&](ParamOp p, StringRef suffix) -> Value {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&body);
      return b.create<ParamOp>(p.getLoc(), p.getType(), (p.getName() + "/" + suffix).str(),
                               Init::zeros, APFloat(0.0f), /*trainable=*/false);
    };
    auto update = [&](Value v, StringRef name) {
      results.push_back(v);
      resultNames.push_back((::attn::names::kUpdatePrefix + name).str());
    };
    for (auto [name, g] : llvm::zip(names, grads)) {
      ParamOp p = findParam(step, name);
      if (optimizer == "sgd") {
        // Without momentum the velocity is just the gradient: no state to keep.
        Value velocity = momentum != 0.0f ? state(p, "momentum") : zerosOf(b, loc, p.getType());
        auto op = b.create<SgdUpdateOp>(loc, p, g, velocity, lr, b.getF32FloatAttr(momentum),
                                        b.getF32FloatAttr(weightDecay));
        update(op.getNewParam(), name);
        if (momentum != 0.0f)
          update(op.getNewVelocity(), (name + "/momentum").str());
        continue;
      }
      Value m = state(p, "adam_m"), v = state(p, "adam_v");
      auto op = b.create<AdamUpdateOp>(
          loc, p, g, m, v, lr, count, b.getF32FloatAttr(beta1), b.getF32FloatAttr(beta2),
          b.getF32FloatAttr(epsilon), b.getF32FloatAttr(weightDecay),
          optimizer == "adamw" ? b.getUnitAttr() : UnitAttr());
      update(op.getNewParam(), name);
      update(op.getNewM(), (name + "/adam_m").str());
      update(op.getNewV(), (name + "/adam_v").str());
    }
    b.create<func::ReturnOp>(loc, results);
    ret.erase();
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    for (auto [v, n] : llvm::zip(results, resultNames)) {
      types.push_back(v.getType());
      attrs.push_back(b.getDictionaryAttr(b.getNamedAttr("attn.name", b.getStringAttr(n))));
    }
    step.setFunctionType(b.getFunctionType(body.getArgumentTypes(), types));
    step.setAllResultAttrs(attrs);
  }
};
} // namespace
