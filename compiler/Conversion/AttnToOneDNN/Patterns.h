// Pattern sets of attn-to-onednn, one populate function per op family.
#pragma once

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn::onednn {
/// matmul and dense -> calls of the runtime's oneDNN kernels (runtime/cpu/matmul.cpp).
void populateCorePatterns(RewritePatternSet &patterns);
/// rnn, gru, lstm and their *_grad ops -> calls of the runtime's oneDNN RNN kernels
/// (runtime/cpu/recurrent.cpp).
void populateRecurrentPatterns(RewritePatternSet &patterns);
/// fused_attention and fused_attention_grad -> calls of the runtime's fused attention kernels
/// (runtime/cpu/attention.cpp).
void populateAttentionPatterns(RewritePatternSet &patterns);
} // namespace mlir::attn::onednn
