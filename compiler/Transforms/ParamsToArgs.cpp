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
        op.emitError("parameter '")
            << op.getName() << "' redeclared as " << op.getType() << " init "
            << stringifyInit(op.getInit()) << ", first declared as " << first.getType() << " init "
            << stringifyInit(first.getInit());
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    // What every entry point needs of each parameter, copied out: the first declaring op
    // may sit in a function whose params are replaced (and erased) before the next one's.
    struct Param {
      StringAttr name;
      Type type;
      Location loc;
    };
    OpBuilder b(module.getContext());
    SmallVector<Param> table;
    SmallVector<Attribute> entries;
    for (auto &[name, op] : params) {
      table.push_back({op.getNameAttr(), op.getType(), op.getLoc()});
      entries.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", op.getNameAttr()),
          b.getNamedAttr("type", TypeAttr::get(op.getType())),
          b.getNamedAttr("init", op.getInitAttr()),
          b.getNamedAttr("scale", op.getScaleAttr()),
          b.getNamedAttr("trainable", op.getTrainableAttr()),
      }));
    }
    module->setAttr("attn.params", b.getArrayAttr(entries));

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      // Prepend one argument per parameter, in table order.
      SmallVector<unsigned> indices(table.size(), 0);
      SmallVector<Type> types;
      SmallVector<DictionaryAttr> argAttrs;
      SmallVector<Location> locs;
      for (const Param &p : table) {
        types.push_back(p.type);
        argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr("attn.param", p.name)));
        locs.push_back(p.loc);
      }
      func.insertArguments(indices, types, argAttrs, locs);
      DenseMap<StringAttr, Value> argOf;
      for (auto [i, p] : llvm::enumerate(table))
        argOf[p.name] = func.getArgument(i);
      func.walk([&](ParamOp op) {
        op.replaceAllUsesWith(argOf[op.getNameAttr()]);
        op.erase();
      });
    }
  }
};
} // namespace
