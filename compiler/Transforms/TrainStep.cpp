// attn-train-step: @loss_grad -> @train_step, one compiled call per training step: loss,
// gradients, global-norm clipping and the optimizer update of every parameter; with
// split-update also @apply_update, the update alone (data parallelism combines the
// gradients in between).
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

  // The results of both entries' update: grad_norm, then "update:<name>" per parameter and
  // optimizer state.
  struct Update {
    SmallVector<Value> values;
    SmallVector<std::string> names;
  };

  // Global-norm clipping and the optimizer step of every parameter `names[i]` (an attn.param
  // in `func`) from its gradient `grads[i]`, before `b`'s insertion point.
  Update emitUpdate(OpBuilder &b, Location loc, func::FuncOp func, SmallVector<Value> grads,
                    ArrayRef<std::string> names, Value lr, Value count) {
    Block &body = func.front();
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

    Update out{{norm}, {::attn::names::kGradNorm}};
    auto state = [&](ParamOp p, StringRef suffix) -> Value {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&body);
      return b.create<ParamOp>(p.getLoc(), p.getType(), (p.getName() + "/" + suffix).str(),
                               Init::zeros, APFloat(0.0f), /*trainable=*/false);
    };
    auto update = [&](Value v, StringRef name) {
      out.values.push_back(v);
      out.names.push_back((::attn::names::kUpdatePrefix + name).str());
    };
    for (auto [name, g] : llvm::zip(names, grads)) {
      ParamOp p = findParam(func, name);
      if (optimizer == "sgd") {
        // Without momentum the velocity is just the gradient: no state to keep.
        Value velocity = momentum != 0.0f ? state(p, "momentum") : zerosOf(b, loc, p.getType());
        auto op = b.create<SgdUpdateOp>(loc, p, g, velocity, lr, b.getF32FloatAttr(momentum),
                                        b.getF32FloatAttr(weightDecay));
        update(op.getNewParam(), name);
        if (momentum != 0.0f)
          update(op.getNewVelocity(), name + "/momentum");
        continue;
      }
      Value m = state(p, "adam_m"), v = state(p, "adam_v");
      auto op = b.create<AdamUpdateOp>(
          loc, p, g, m, v, lr, count, b.getF32FloatAttr(beta1), b.getF32FloatAttr(beta2),
          b.getF32FloatAttr(epsilon), b.getF32FloatAttr(weightDecay),
          optimizer == "adamw" ? b.getUnitAttr() : UnitAttr());
      update(op.getNewParam(), name);
      update(op.getNewM(), name + "/adam_m");
      update(op.getNewV(), name + "/adam_v");
    }
    return out;
  }

  static DictionaryAttr named(OpBuilder &b, StringRef name) {
    return b.getDictionaryAttr(b.getNamedAttr("attn.name", b.getStringAttr(name)));
  }

  // Replaces `func`'s terminator by a return of `results` (named) and retypes it.
  static void returnNamed(OpBuilder &b, func::FuncOp func, ArrayRef<Value> results,
                          ArrayRef<std::string> names) {
    Operation *old = func.front().getTerminator();
    b.setInsertionPoint(old);
    b.create<func::ReturnOp>(old->getLoc(), results);
    old->erase();
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    for (auto [v, n] : llvm::zip(results, names)) {
      types.push_back(v.getType());
      attrs.push_back(named(b, n));
    }
    func.setFunctionType(b.getFunctionType(func.front().getArgumentTypes(), types));
    func.setAllResultAttrs(attrs);
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
    step.insertArgument(numArgs, scalar, named(b, ::attn::names::kLearningRate), loc);
    step.insertArgument(numArgs + 1, scalar, named(b, ::attn::names::kStep), loc);
    Value lr = body.getArgument(numArgs), count = body.getArgument(numArgs + 1);

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    SmallVector<Value> grads(ret.getOperands().drop_front());
    SmallVector<std::string> names;
    for (unsigned i = 1; i < ret.getNumOperands(); ++i)
      names.push_back(step.getResultAttrOfType<StringAttr>(i, "attn.name")
                          .getValue()
                          .drop_front(strlen(::attn::names::kGradPrefix))
                          .str());
    Update u = emitUpdate(b, loc, step, grads, names, lr, count);
    SmallVector<Value> results = {ret.getOperand(0)};
    SmallVector<std::string> resultNames = {::attn::names::kLoss};
    results.append(u.values);
    resultNames.append(u.names);
    returnNamed(b, step, results, resultNames);
    if (splitUpdate)
      buildApplyUpdate(b, lossGrad, step, names);
  }

  // @apply_update(grad:<p>..., lr, step) -> (grad_norm, update:...): @train_step's update
  // from gradients given as arguments.
  void buildApplyUpdate(OpBuilder &b, func::FuncOp lossGrad, func::FuncOp step,
                        ArrayRef<std::string> names) {
    Location loc = lossGrad.getLoc();
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    SmallVector<Type> argTypes(lossGrad.getResultTypes().drop_front());
    argTypes.append({scalar, scalar});
    b.setInsertionPointAfter(step);
    auto apply = b.create<func::FuncOp>(loc, "apply_update", b.getFunctionType(argTypes, {}));
    Block *body = apply.addEntryBlock();
    for (unsigned i = 0; i < names.size(); ++i)
      apply.setArgAttrs(i, named(b, (::attn::names::kGradPrefix + names[i])));
    apply.setArgAttrs(names.size(), named(b, ::attn::names::kLearningRate));
    apply.setArgAttrs(names.size() + 1, named(b, ::attn::names::kStep));
    b.setInsertionPointToStart(body);
    // The parameters it updates, as @loss_grad reads them.
    for (const std::string &name : names)
      b.clone(*findParam(lossGrad, name));
    SmallVector<Value> grads(body->getArguments().take_front(names.size()));
    auto ret = b.create<func::ReturnOp>(loc);
    b.setInsertionPoint(ret);
    Update u = emitUpdate(b, loc, apply, grads, names, body->getArgument(names.size()),
                          body->getArgument(names.size() + 1));
    returnNamed(b, apply, u.values, u.names);
  }
};
} // namespace
