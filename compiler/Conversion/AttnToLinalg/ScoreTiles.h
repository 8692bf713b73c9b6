// The tile functions of the GEMM-tiled flash kernels for score and mask regions (the _regions
// kernels of runtime/cpu/flash_attention.cpp, attn/kernels.h's attn_tile_fn and
// attn_tile_grad_fn): a fused attention's score region f(q . k, i, j, captures), its derivative
// and its mask region, each inlined by ScoreEmitter into a loop over one tile of scores, which
// LLVM vectorises along the keys. The GEMMs that make the tile's products stay oneDNN's.
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::linalg_lowering {

/// score and mask: (tile, captures : memref<?xf32>, ld, rows, cols, i0, j0 : i64).
FunctionType tileFunctionType(MLIRContext *ctx);
/// score_grad: (dots, ds, captures, d_captures : memref<?xf32>, ld, rows, cols, i0, j0 : i64).
FunctionType tileGradFunctionType(MLIRContext *ctx);

/// Defines `name`: t[r, c] = f(t[r, c], i0 + r, j0 + c, captures), f the score region `score`
/// with its product q . k (`dot`, score_region::dotThenScalars) read from the tile.
func::FuncOp defineScoreTile(OpBuilder &b, Operation *op, Block &score, Operation *dot,
                             StringRef name);
/// Defines `name`: t[r, c] = mask(i0 + r, j0 + c, captures) != 0 ? 1 : 0.
func::FuncOp defineMaskTile(OpBuilder &b, Operation *op, Block &mask, StringRef name);
/// Defines `name` from the score_grad region `grad` (score_region::dotCotangent: its
/// `cotangent` X and its own product `dot`, null when it has none): ds[r, c] = X at
/// (dots[r, c], ds[r, c], i0 + r, j0 + c, captures), 0 where ds is 0 (a hidden key, whose
/// derivative need not be finite), and d_captures[n] += the capture gradients it yields,
/// summed over the tile.
func::FuncOp defineScoreGradTile(OpBuilder &b, Operation *op, Block &grad, Operation *dot,
                                 Value cotangent, StringRef name);

} // namespace mlir::attn::linalg_lowering
