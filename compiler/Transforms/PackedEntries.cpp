// attn-packed-entries: the runtime's `void f(void **args)` ABI for every entry point.
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPACKEDENTRIES
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
// The memref descriptor MLIR's LLVM lowering uses:
// {allocated ptr, aligned ptr, offset, sizes[rank], strides[rank]}.
LLVM::LLVMStructType descriptorType(MLIRContext *ctx, int64_t rank) {
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> fields = {ptr, ptr, i64};
  if (rank > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  return LLVM::LLVMStructType::getLiteral(ctx, fields);
}

// Rebuilds a dense row-major descriptor of `type` around the raw buffer pointer `data`.
Value buildDescriptor(OpBuilder &b, Location loc, MemRefType type, Value data) {
  MLIRContext *ctx = b.getContext();
  auto i64 = b.getI64Type();
  auto structTy = descriptorType(ctx, type.getRank());
  Value desc = b.create<LLVM::UndefOp>(loc, structTy);
  auto cst = [&](int64_t v) { return b.create<LLVM::ConstantOp>(loc, i64, v); };
  desc = b.create<LLVM::InsertValueOp>(loc, desc, data, ArrayRef<int64_t>{0});
  desc = b.create<LLVM::InsertValueOp>(loc, desc, data, ArrayRef<int64_t>{1});
  desc = b.create<LLVM::InsertValueOp>(loc, desc, cst(0), ArrayRef<int64_t>{2});
  int64_t stride = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    desc = b.create<LLVM::InsertValueOp>(loc, desc, cst(type.getDimSize(d)),
                                         ArrayRef<int64_t>{3, d});
    desc = b.create<LLVM::InsertValueOp>(loc, desc, cst(stride), ArrayRef<int64_t>{4, d});
    stride *= type.getDimSize(d);
  }
  return b.create<UnrealizedConversionCastOp>(loc, type, desc).getResult(0);
}

struct PackedEntries : mlir::attn::impl::AttnPackedEntriesBase<PackedEntries> {
  using AttnPackedEntriesBase::AttnPackedEntriesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    for (func::FuncOp func : entries)
      if (failed(wrap(func)))
        return signalPassFailure();
  }

  LogicalResult wrap(func::FuncOp func) {
    FunctionType type = func.getFunctionType();
    if (type.getNumResults() != 0)
      return func.emitError("entry point '")
             << func.getSymName() << "' still returns values " << type.getResults()
             << "; run buffer-results-to-out-params first";
    for (Type t : type.getInputs()) {
      auto m = dyn_cast<MemRefType>(t);
      if (!m || !m.hasStaticShape() || !m.getLayout().isIdentity())
        return func.emitError("entry point '")
               << func.getSymName() << "' takes " << t
               << "; the packed ABI needs static, dense memrefs";
    }
    MLIRContext *ctx = func.getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    OpBuilder b(func);
    Location loc = func.getLoc();
    auto wrapper = b.create<func::FuncOp>(loc, prefix + func.getSymName().str(),
                                          b.getFunctionType({ptrTy}, {}));
    Block *body = wrapper.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value args = body->getArgument(0);
    SmallVector<Value> memrefs;
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      Value slot = b.create<LLVM::GEPOp>(loc, ptrTy, ptrTy, args,
                                         ArrayRef<LLVM::GEPArg>{(int32_t)i});
      Value data = b.create<LLVM::LoadOp>(loc, ptrTy, slot);
      memrefs.push_back(buildDescriptor(b, loc, cast<MemRefType>(t), data));
    }
    b.create<func::CallOp>(loc, func, memrefs);
    b.create<func::ReturnOp>(loc);
    func.setPrivate();
    return success();
  }
};
} // namespace
