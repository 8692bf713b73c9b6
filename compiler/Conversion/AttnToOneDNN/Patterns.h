// Pattern sets of attn-to-onednn, one populate function per op family.
#pragma once

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn::onednn {
/// matmul and dense -> calls of the runtime's oneDNN kernels (runtime/cpu/matmul.cpp).
void populateCorePatterns(RewritePatternSet &patterns);
} // namespace mlir::attn::onednn
