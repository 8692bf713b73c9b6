// attn-params-to-args: parameters become leading arguments of every entry point.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARAMSTOARGS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ParamsToArgs : mlir::attn::impl::AttnParamsToArgsBase<ParamsToArgs> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // name -> the first op that declared it; its type/init/scale are the parameter's.
    llvm::MapVector<StringRef, ParamOp> params;
    WalkResult walk = module.walk([&](ParamOp op) {
      auto [it, inserted] = params.insert({op.getName(), op});
      ParamOp first = it->second;
      if (!inserted && (first.getType() != op.getType() || first.getInit() != op.getInit() ||
                        first.getScale() != op.getScale())) {
        op.emitError("parameter '") << op.getName() << "' redeclared as " << op.getType()
                                    << " init " << op.getInit() << ", first declared as "
                                    << first.getType() << " init " << first.getInit();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    OpBuilder b(module.getContext());
    SmallVector<Attribute> table;
    SmallVector<Type> paramTypes;
    for (auto &[name, op] : params) {
      table.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", op.getNameAttr()),
          b.getNamedAttr("type", TypeAttr::get(op.getType())),
          b.getNamedAttr("init", op.getInitAttr()),
          b.getNamedAttr("scale", op.getScaleAttr()),
          b.getNamedAttr("trainable", op.getTrainableAttr()),
      }));
      paramTypes.push_back(op.getType());
    }
    module->setAttr("attn.params", b.getArrayAttr(table));

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      // Prepend one argument per parameter, in table order.
      unsigned n = paramTypes.size();
      SmallVector<unsigned> indices(n, 0);
      SmallVector<DictionaryAttr> argAttrs;
      SmallVector<Location> locs;
      for (auto &[name, op] : params) {
        argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("attn.param", op.getNameAttr())));
        locs.push_back(op.getLoc());
      }
      func.insertArguments(indices, paramTypes, argAttrs, locs);
      DenseMap<StringRef, Value> argOf;
      for (auto [i, entry] : llvm::enumerate(params))
        argOf[entry.first] = func.getArgument(i);
      func.walk([&](ParamOp op) {
        op.replaceAllUsesWith(argOf[op.getName()]);
        op.erase();
      });
    }
  }
};
} // namespace
