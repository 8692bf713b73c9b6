// The one place where pass order lives. attnc and attn-opt both build their pipelines here.
//
//   attn (importer output)
//     --buildFusion----------->  scans over oneDNN cells -> rnn/gru/lstm (before autodiff)
//     --buildAttnToLowered-->  linalg/tensor/scf on tensors + oneDNN kernel calls  ("lowered")
//     --buildLoweredToLLVM-->  LLVM dialect with packed entry points               ("llvm")
#pragma once

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace attn::pipelines {

/// Every dialect attnc produces or consumes, registered in one place (InitAll* headers are
/// deliberately avoided: they cost minutes of compile time per translation unit).
void registerDialects(mlir::DialectRegistry &registry);

/// Structural fusion on attn (attn-fuse-recurrence): scans over a oneDNN cell become sequence
/// ops. Runs before attn-autodiff, so that fused ops differentiate as one op.
void buildFusion(mlir::OpPassManager &pm);

/// attn -> tensors of linalg/tensor/scf/arith/math plus func.calls of runtime kernels. Starts
/// with buildFusion unless `fuse` is false.
void buildAttnToLowered(mlir::OpPassManager &pm, bool fuse = true);

/// Lowered tensors -> LLVM dialect. Entry points become `<entryPrefix><name>(void **args)`.
void buildLoweredToLLVM(mlir::OpPassManager &pm, const std::string &entryPrefix);

/// Registers our passes and the pipelines `attn-lower` (attn -> lowered) and
/// `attn-lower-to-llvm` (lowered -> LLVM) for attn-opt.
void registerPassesAndPipelines();

} // namespace attn::pipelines
