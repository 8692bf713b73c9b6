// The kernels generated for attn.fused_attention and attn.fused_attention_grad: loop nests with
// the op's score regions inlined (ScoreEmitter), one private function per op. attn-to-onednn
// calls them the way it calls the runtime's kernels; attn-to-cuda calls their GPU form.
#pragma once

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::attn::linalg_lowering {

/// How a kernel runs its rows: loops on the calling thread, or gpu.launch ops of one thread
/// per row (the GPU's generated kernels, or their loop form under --device cuda-on-cpu).
enum class KernelForm { Loops, GpuLaunch };

/// Defines `name`, the forward kernel of `op`: (operands..., output, lse[, weights]) as fully
/// dynamic memrefs, the results written.
func::FuncOp defineAttentionKernel(OpBuilder &b, FusedAttentionOp op, StringRef name,
                                   KernelForm form = KernelForm::Loops);
/// Defines `name`, the backward kernel of `op`: (operands..., gradients...).
func::FuncOp defineAttentionGradKernel(OpBuilder &b, FusedAttentionGradOp op, StringRef name,
                                       KernelForm form = KernelForm::Loops);

} // namespace mlir::attn::linalg_lowering
