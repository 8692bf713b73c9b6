// Pattern sets of attn-to-onednn, one populate function per op family.
#pragma once

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::attn::onednn {
/// matmul and dense -> calls of the runtime's oneDNN kernels (runtime/cpu/matmul.cpp).
void populateCorePatterns(RewritePatternSet &patterns);
/// matmul and dense in f32 and bf16 -> calls of `matmul` and `dense` (`_bf16` appended for a
/// bf16 product), which have the signatures of the CPU's kernels (attn-to-cuda: cuBLASLt);
/// int8 products are left alone.
void populateCorePatterns(RewritePatternSet &patterns, StringRef matmul, StringRef dense);
/// rnn, gru, lstm and their *_grad ops -> calls of the runtime's oneDNN RNN kernels
/// (runtime/cpu/recurrent.cpp).
void populateRecurrentPatterns(RewritePatternSet &patterns);
/// rnn, gru, lstm and their *_grad ops -> calls of `forward` and `backward`, which have the
/// signatures of the CPU's RNN kernels (attn-to-cuda: the GPU's sequence loop takes every
/// layer the CPU kernels do).
void populateRecurrentPatterns(RewritePatternSet &patterns, StringRef forward, StringRef backward);
/// fused_attention and fused_attention_grad -> calls of the runtime's fused attention kernels
/// (runtime/cpu/attention.cpp).
void populateAttentionPatterns(RewritePatternSet &patterns);
} // namespace mlir::attn::onednn
