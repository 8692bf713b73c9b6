// Calls of the runtime's kernels at the tensor level, shared by the families of
// attn-to-onednn: `bufferization.to_memref` -> `func.call` -> `bufferization.to_tensor
// restrict`, so the kernels take part in one-shot bufferization with the rest of a function.
#pragma once

#include "dialect/AttnInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <string>
#include <utility>

namespace mlir::attn::onednn {

/// memref<?x...xf32, strided<[?, ...], offset: ?>>: the one argument type of every kernel, so
/// a single declaration serves all shapes (bf16 elements for a bf16 product's factors).
MemRefType kernelMemrefType(MLIRContext *ctx, int64_t rank, Type element = {});

/// Declares `@name(kernel memrefs of `memrefRanks`..., i64 x numI64, f32 x numF32)` once per
/// module.
func::FuncOp declareKernel(PatternRewriter &rewriter, Operation *from, StringRef name,
                           ArrayRef<int64_t> memrefRanks, unsigned numI64, unsigned numF32 = 0);
/// Declares `@name(inputs...)` once per module (`llvm.emit_c_interface`).
func::FuncOp declareKernel(PatternRewriter &rewriter, Operation *from, StringRef name,
                           TypeRange inputs);

/// A tensor operand as a kernel argument: its buffer, viewed with a dynamic layout (its
/// element type kept).
Value asKernelOperand(PatternRewriter &rewriter, Location loc, Value tensor);

/// A fresh output buffer of `shape`, plus its kernel view.
std::pair<Value, Value> allocKernelResult(PatternRewriter &rewriter, Location loc,
                                          ArrayRef<int64_t> shape);

/// The tensor of a buffer a kernel has written (`to_tensor restrict writable`).
Value asTensor(PatternRewriter &rewriter, Location loc, Value buffer);

/// The kernel `name` of the precision `op` computes in (attn-precision): `name` for f32,
/// `name`_bf16 (the same arguments) for bf16.
std::string precisionKernel(StringRef name, PrecisionOpInterface op);

/// Replaces `op` with a call of `kernel` on its operands, fresh buffers for its results (which
/// replace it), the integers `flags` and the floats `scalars` (attn-to-onednn's attention and
/// attn-to-cuda's calls).
LogicalResult replaceWithKernelCall(Operation *op, PatternRewriter &rewriter, StringRef kernel,
                                    ArrayRef<int64_t> flags = {}, ArrayRef<float> scalars = {});

/// A call of `kernel` on the tensors `operands`, fresh buffers of the tensor types `results`,
/// the integers `flags`, the floats `scalars` and the addresses of `functions` (in that order);
/// returns the tensors the kernel wrote.
SmallVector<Value> callKernel(PatternRewriter &rewriter, Operation *from, StringRef kernel,
                              ValueRange operands, TypeRange results, ArrayRef<int64_t> flags,
                              ArrayRef<float> scalars = {}, ArrayRef<func::FuncOp> functions = {});

/// A name `<base>_<n>` no symbol of `op`'s module has yet (a generated kernel's).
std::string freshKernelName(Operation *op, StringRef base);

} // namespace mlir::attn::onednn
