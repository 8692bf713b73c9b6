// Pattern sets of attn-to-linalg, one populate function per op family.
#pragma once

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn::linalg_lowering {
/// Elementwise, softmax, layer_norm, reductions, shape ops, embedding, constant, and the
/// embedding's gradient unless `embeddingGrad` is false (a GPU program's is attn-to-cuda's).
void populateCorePatterns(RewritePatternSet &patterns, bool embeddingGrad = true);
/// attn.scan -> scf.for over time.
void populateRecurrentPatterns(RewritePatternSet &patterns);
/// mse, cross_entropy and its gradient.
void populateLossPatterns(RewritePatternSet &patterns);
/// sgd_update, adam_update; with `gpu`, Adam's scalars are computed in its kernel.
void populateOptimPatterns(RewritePatternSet &patterns, bool gpu = false);
} // namespace mlir::attn::linalg_lowering
