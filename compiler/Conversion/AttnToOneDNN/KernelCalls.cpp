// Building calls of the runtime's kernels at the tensor level (see KernelCalls.h).
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlir::attn::onednn {

MemRefType kernelMemrefType(MLIRContext *ctx, int64_t rank, Type element) {
  SmallVector<int64_t> dyn(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dyn);
  return MemRefType::get(dyn, element ? element : Float32Type::get(ctx), layout);
}

func::FuncOp declareKernel(PatternRewriter &rewriter, Operation *from, StringRef name,
                           ArrayRef<int64_t> memrefRanks, unsigned numI64, unsigned numF32) {
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<Type> inputs;
  for (int64_t r : memrefRanks)
    inputs.push_back(kernelMemrefType(ctx, r));
  inputs.append(numI64, rewriter.getI64Type());
  inputs.append(numF32, rewriter.getF32Type());
  return declareKernel(rewriter, from, name, inputs);
}

func::FuncOp declareKernel(PatternRewriter &rewriter, Operation *from, StringRef name,
                           TypeRange inputs) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto f = rewriter.create<func::FuncOp>(module.getLoc(), name,
                                         rewriter.getFunctionType(inputs, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
  return f;
}

Value asKernelOperand(PatternRewriter &rewriter, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<int64_t> dynStrides(type.getRank(), ShapedType::kDynamic);
  auto viewType = MemRefType::get(type.getShape(), type.getElementType(),
                                  StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dynStrides));
  // read_only: the kernels never write their inputs, so bufferization need not copy an
  // operand that is still read later (a weight used at every step of a scan, say).
  Value view = rewriter.create<bufferization::ToMemrefOp>(loc, viewType, tensor,
                                                          /*read_only=*/true);
  return rewriter.create<memref::CastOp>(
      loc, kernelMemrefType(ctx, type.getRank(), type.getElementType()), view);
}

std::pair<Value, Value> allocKernelResult(PatternRewriter &rewriter, Location loc,
                                          ArrayRef<int64_t> shape) {
  auto type = MemRefType::get(shape, rewriter.getF32Type());
  Value buffer = rewriter.create<memref::AllocOp>(loc, type, rewriter.getI64IntegerAttr(64));
  Value view = rewriter.create<memref::CastOp>(
      loc, kernelMemrefType(rewriter.getContext(), shape.size()), buffer);
  return {buffer, view};
}

Value asTensor(PatternRewriter &rewriter, Location loc, Value buffer) {
  return rewriter.create<bufferization::ToTensorOp>(loc, buffer, /*restrict=*/true,
                                                    /*writable=*/true);
}

LogicalResult replaceWithKernelCall(Operation *op, PatternRewriter &rewriter, StringRef kernel,
                                    ArrayRef<int64_t> flags, ArrayRef<float> scalars) {
  rewriter.replaceOp(op, callKernel(rewriter, op, kernel, op->getOperands(), op->getResultTypes(),
                                    flags, scalars));
  return success();
}

SmallVector<Value> callKernel(PatternRewriter &rewriter, Operation *from, StringRef kernel,
                              ValueRange operands, TypeRange results, ArrayRef<int64_t> flags,
                              ArrayRef<float> scalars, ArrayRef<func::FuncOp> functions) {
  Location loc = from->getLoc();
  SmallVector<Value> args;
  for (Value v : operands)
    args.push_back(asKernelOperand(rewriter, loc, v));
  SmallVector<Value> buffers;
  for (Type r : results) {
    auto [buffer, view] = allocKernelResult(rewriter, loc, cast<RankedTensorType>(r).getShape());
    buffers.push_back(buffer);
    args.push_back(view);
  }
  for (int64_t flag : flags)
    args.push_back(rewriter.create<arith::ConstantIntOp>(loc, flag, 64));
  for (float scalar : scalars)
    args.push_back(
        rewriter.create<arith::ConstantFloatOp>(loc, APFloat(scalar), rewriter.getF32Type()));
  for (func::FuncOp f : functions)
    args.push_back(rewriter.create<func::ConstantOp>(loc, f.getFunctionType(), f.getSymName()));
  auto decl = declareKernel(rewriter, from, kernel, ValueRange(args).getTypes());
  rewriter.create<func::CallOp>(loc, decl, args);
  SmallVector<Value> tensors;
  for (Value buffer : buffers)
    tensors.push_back(asTensor(rewriter, loc, buffer));
  return tensors;
}

std::string precisionKernel(StringRef name, PrecisionOpInterface op) {
  Precision p = op.getComputePrecision();
  return p == Precision::f32 ? name.str() : (name + "_" + stringifyPrecision(p)).str();
}

std::string freshKernelName(Operation *op, StringRef base) {
  auto module = op->getParentOfType<ModuleOp>();
  std::string name;
  for (int n = 0; name.empty() || module.lookupSymbol(name); ++n)
    name = (base + "_" + std::to_string(n)).str();
  return name;
}

} // namespace mlir::attn::onednn
