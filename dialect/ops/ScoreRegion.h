// The contract of attn.fused_attention's score regions (and of the grad op's score_grad
// region): what the verifier checks and what the generated kernels (attn-to-onednn) rely on when they
// inlines a region into the loop nest it generates.
//
// A region value is a *scalar* (tensor<f32> or tensor<1xf32>) or a *row* (tensor<Dxf32>, D the
// head width). Its ops are attn's elementwise ops (with broadcasting between rows and
// scalars), reductions of a row to a scalar, broadcasts, reshapes between the scalar forms,
// and constants that are scalars or splat rows; `attn.yield` ends it.
#pragma once

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeRange.h"

#include <optional>

namespace mlir::attn::score_region {

/// tensor<f32> or tensor<1xf32>.
bool isScalar(Type type);
/// tensor<f32>, tensor<1xf32> or tensor<{width}xf32>.
bool isScalarOrRow(Type type, int64_t width);
/// Whether a capture of type `capture`, read by the region argument of type `arg`, is per
/// head: a tensor<Hxf32> (`heads` = H) that each head reads as its own tensor<f32> (an ALiBi
/// slope per head).
bool isPerHead(Type capture, Type arg, int64_t heads);
/// Whether capture `n` of a fused_attention(_grad) op is per head (its score region's
/// argument 4 + n is its element).
template <typename Op> bool isPerHeadCapture(Op op, unsigned n) {
  return isPerHead(op.getCaptures()[n].getType(),
                   op.getScore().front().getArgument(4 + n).getType(),
                   mlir::cast<mlir::RankedTensorType>(op.getQuery().getType()).getShape()[1]);
}
/// The elementwise attn ops a region may hold (binary with broadcasting, or unary).
bool isElementwise(Operation *op);

/// Checks `block` (the region `name` of `op`): block arguments of types `args`, one yield of
/// `yields`, every op of the contract, every value a scalar or a row of `width`. Reports the
/// first violation on `op`, naming the region, the op inside it and the shapes.
LogicalResult verify(Operation *op, StringRef name, Block &block, int64_t width, TypeRange args,
                     TypeRange yields);

/// The scale c when `block` computes `c * sum(q * k)` of its first two arguments (c = 1 without
/// the product; the factors in either order): the score a lowering may compute with GEMM tiles.
std::optional<float> dotProductScale(Block &block);

/// The reduction `sum(q * k)` of the first two arguments when it is the only thing `block` (a
/// score region) computes from rows: the score is f(q . k, i, j, captures) with f scalar code
/// and every capture a scalar, so a lowering may compute the products as GEMM tiles and run f
/// on each tile. Null otherwise.
Operation *dotThenScalars(Block &block);

/// In the score_grad region `grad` derived from such a score: the scalar X with
/// d_query = X k and d_keys = X q (X = ds * df / d(q . k)), and in `dot` the region's own
/// `sum(q * k)` (null when f's derivative does not read it). nullopt when the region is not of
/// that form (then only the generated kernels run it).
std::optional<Value> dotCotangent(Block &grad, Operation *&dot);

/// Whether every value of `block` (a mask region) is a scalar.
bool scalarsOnly(Block &block);

/// A sliding window: query i sees key j where i - left <= j <= i + right; -1 leaves a side open.
struct Window {
  int64_t left = -1, right = -1;
};
/// The window a mask region `block` (arguments i, j, captures) is, when it is only that: the
/// comparison `e < c` or `e <= c` of a constant c with e one of i - j (keys at most that far
/// back), j - i (ahead) or abs(i - j) (both), as attn's expressions build them (`step(c - e)`,
/// `1 - step(e - c)`; the spec's `sliding_window: W` is `abs(i - j) < W`). A lowering may then
/// compute it from the indices instead of calling the region. nullopt for any other mask, and
/// for one that hides every key.
std::optional<Window> slidingWindow(Block &block);

} // namespace mlir::attn::score_region

namespace mlir::attn {

/// The scale c of an attn.fused_attention (or _grad) that FlashAttention-2's kernels compute,
/// on the CPU (runtime/cpu/flash_attention.cpp, in f32 or bf16) and on the GPU (runtime/cuda):
/// a score c * sum(q * k) and nothing else (no centre, window, Gaussian, captures or mask
/// region), so that the operands are exactly (q, k, v, mask[, out, lse, d_out, d_lse]). The
/// caller checks for weights.
template <typename Op> std::optional<float> flashScale(Op op) {
  if (op.getCenter() || op.getWindow() || op.getGaussian() || !op.getCaptures().empty() ||
      !op.getMask().empty())
    return std::nullopt;
  return score_region::dotProductScale(op.getScore().front());
}

/// The product `sum(q * k)` of an attn.fused_attention (or _grad) whose score the flash
/// kernels' _regions form computes on its GEMM tiles: a score of scalar code around that
/// product (score_region::dotThenScalars), a mask region of scalar code or none, none of the
/// local attention's centre, window and Gaussian; for the _grad op also a score_grad region
/// of the form score_region::dotCotangent recognises. Null otherwise. The caller checks for
/// weights.
template <typename Op> Operation *regionsOnTiles(Op op) {
  if (op.getCenter() || op.getWindow() || op.getGaussian())
    return nullptr;
  if (!op.getMask().empty() && !score_region::scalarsOnly(op.getMask().front()))
    return nullptr;
  return score_region::dotThenScalars(op.getScore().front());
}

} // namespace mlir::attn
