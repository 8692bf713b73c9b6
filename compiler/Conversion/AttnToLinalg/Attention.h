// The kernels generated for attn.fused_attention and attn.fused_attention_grad: loop nests with
// the op's score regions inlined (ScoreEmitter), one private function per op. attn-to-onednn
// calls them the way it calls the runtime's kernels.
#pragma once

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::attn::linalg_lowering {

/// Defines `name`, the forward kernel of `op`: (operands..., output, lse[, weights]) as fully
/// dynamic memrefs, the results written.
func::FuncOp defineAttentionKernel(OpBuilder &b, FusedAttentionOp op, StringRef name);
/// Defines `name`, the backward kernel of `op`: (operands..., gradients...).
func::FuncOp defineAttentionGradKernel(OpBuilder &b, FusedAttentionGradOp op, StringRef name);

} // namespace mlir::attn::linalg_lowering
