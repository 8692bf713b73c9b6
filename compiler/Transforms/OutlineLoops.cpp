// attn-outline-loops: one linalg op per function, so LLVM's compile time stays linear in the
// number of loops (see Passes.td).
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNOUTLINELOOPS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct OutlineLoops : mlir::attn::impl::AttnOutlineLoopsBase<OutlineLoops> {
  using AttnOutlineLoopsBase::AttnOutlineLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      SmallVector<linalg::LinalgOp> loops;
      func.walk([&](linalg::LinalgOp op) {
        if (op.hasPureBufferSemantics())
          loops.push_back(op);
      });
      if (loops.size() < minLoops)
        continue;
      unsigned n = 0;
      for (linalg::LinalgOp op : loops)
        outline(op, func.getName().str() + "_loop" + std::to_string(n++), symbols);
    }
  }

  // Replaces `op` by a call of a new function `name` holding a clone of it. Its operands and
  // the values its region reads from above become arguments, constants excepted (cloned).
  void outline(linalg::LinalgOp op, const std::string &name, SymbolTable &symbols) {
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    SmallVector<Value> args(op->getOperands());
    SmallVector<Operation *> constants;
    for (Value v : captured) {
      Operation *def = v.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else if (!llvm::is_contained(args, v))
        args.push_back(v);
    }
    SmallVector<Type> types;
    for (Value v : args)
      types.push_back(v.getType());

    OpBuilder b(op->getParentOfType<func::FuncOp>());
    auto callee = b.create<func::FuncOp>(op.getLoc(), name, b.getFunctionType(types, {}));
    callee.setPrivate();
    callee->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
    Block *body = callee.addEntryBlock();
    b.setInsertionPointToStart(body);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(args, body->getArguments()))
      map.map(v, arg);
    for (Operation *c : constants)
      b.clone(*c, map);
    b.clone(*op, map);
    b.create<func::ReturnOp>(op.getLoc());
    symbols.insert(callee);

    OpBuilder at(op);
    at.create<func::CallOp>(op.getLoc(), callee, args);
    op->erase();
    for (Operation *c : constants)
      if (c->use_empty())
        c->erase();
  }
};
} // namespace
