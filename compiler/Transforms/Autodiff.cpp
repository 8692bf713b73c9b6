// attn-autodiff: @loss -> @loss_grad (the loss and the gradient of every trainable
// parameter), through each op's DifferentiableOpInterface rule (dialect/Autodiff.h).
#include "compiler/Transforms/Passes.h"
#include "attn/Names.h"
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNAUTODIFF
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct Autodiff : mlir::attn::impl::AttnAutodiffBase<Autodiff> {
  using AttnAutodiffBase::AttnAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto loss = module.lookupSymbol<func::FuncOp>(funcName);
    if (!loss) {
      module.emitError("attn-autodiff: no function @") << funcName << " to differentiate";
      return signalPassFailure();
    }
    if (failed(differentiate(loss)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp loss) {
    FunctionType type = loss.getFunctionType();
    auto scalar = RankedTensorType::get({}, Float32Type::get(&getContext()));
    if (type.getNumResults() < 1 || type.getResult(0) != scalar)
      return loss.emitError("@") << loss.getSymName()
                                 << " must return the loss, a rank-0 f32 tensor, first; got "
                                 << type.getResults();
    OpBuilder b(loss);
    b.setInsertionPointAfter(loss);
    auto grad = cast<func::FuncOp>(b.clone(*loss));
    grad.setSymName((loss.getSymName() + "_grad").str());
    Block &body = grad.front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    // Trainable parameters by name: several ops may read the same one.
    llvm::MapVector<StringRef, SmallVector<Value>> params;
    SmallVector<Value> wrt;
    grad.walk([&](ParamOp p) {
      if (p.getTrainable()) {
        params[p.getName()].push_back(p.getResult());
        wrt.push_back(p.getResult());
      }
    });

    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    ops = prepareForGradient(b, ops, wrt);
    // prepareForGradient may have replaced the loss's producer: read it from the return.
    Value lossValue = ret.getOperand(0);
    b.setInsertionPoint(ret);
    Location loc = ret.getLoc();
    auto grads = buildBackward(b, ops, {{lossValue, scalarOf(b, loc, 1.0f)}}, wrt);
    if (failed(grads))
      return failure();

    SmallVector<Value> results = {lossValue};
    SmallVector<Attribute> names = {b.getStringAttr("loss")};
    // The gradients come in the order of `wrt`; a name's reads need not be adjacent there
    // (one embedding table shared by an encoder and a decoder).
    llvm::DenseMap<Value, unsigned> position;
    for (auto [i, v] : llvm::enumerate(wrt))
      position[v] = i;
    for (auto &[name, values] : params) {
      Value total;
      for (Value v : values) {
        Value g = (*grads)[position.lookup(v)];
        if (g)
          total = total ? b.create<AddOp>(loc, total, g).getResult() : g;
      }
      // A parameter the loss does not depend on has a zero gradient.
      results.push_back(total ? total : zerosOf(b, loc, values.front().getType()));
      names.push_back(b.getStringAttr((::attn::names::kGradPrefix + name).str()));
    }
    b.create<func::ReturnOp>(loc, results);
    ret.erase();
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    grad.setFunctionType(b.getFunctionType(type.getInputs(), resultTypes));
    SmallVector<DictionaryAttr> resultAttrs;
    for (Attribute name : names)
      resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("attn.name", name)));
    grad.setAllResultAttrs(resultAttrs);
    return success();
  }
};
} // namespace
