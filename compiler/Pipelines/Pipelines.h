// The one place where pass order lives. attnc and attn-opt both build their pipelines here.
//
//   attn (importer output)
//     --buildTraining--------->  + @loss_grad, @train_step (@apply_update, @loss_weight) ("grad")
//     --buildFusion----------->  scans over oneDNN cells -> rnn/gru/lstm (before autodiff)
//     --buildAttnToLowered-->  linalg/tensor/scf on tensors + oneDNN kernel calls  ("lowered")
//                              (+ CUDA kernel calls for the fused attention, Device::CUDA)
//     --buildLoweredToLLVM-->  LLVM dialect with packed entry points               ("llvm")
#pragma once

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>

namespace attn::pipelines {

/// Every dialect attnc produces or consumes, registered in one place (InitAll* headers are
/// deliberately avoided: they cost minutes of compile time per translation unit).
void registerDialects(mlir::DialectRegistry &registry);

/// Which structural fusions run; `remarks`: each says why what it left was not fused.
struct FusionOptions {
  bool recurrence = true; // attn-fuse-recurrence
  bool attention = true;  // attn-fuse-attention
  bool hoist = true;      // the scan rewrites: attn-hoist-scan-projections, attn-batch-scan-
                          // gradients and (training) attn-store-scan-residuals
  bool remarks = false;
  /// attn-precision's policy (f32 | bf16), applied after the fusions (and again after
  /// attn-decompose in the lowering): the number type every product computes in.
  std::string precision = "f32";
};

/// Structural fusion on attn (attn-fuse-recurrence, attn-fuse-attention): scans over a oneDNN
/// cell become sequence ops, attention fused kernels; then attn-hoist-scan-projections takes
/// what does not depend on the carried state out of the remaining scans, and attn-precision
/// sets the products' precision. Runs before attn-autodiff, so that fused ops differentiate
/// as one op, hoisted products outside the backward scan, and each product's backward in its
/// precision.
void buildFusion(mlir::OpPassManager &pm, const FusionOptions &options = {});

/// What `train:` asks of the compiler.
struct TrainingOptions {
  std::string optimizer = "adam"; // adam | adamw | sgd
  double momentum = 0.0, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, weightDecay = 0.0;
  double clipNorm = 0.0; // 0: no clipping
  /// attn-store-scan-residuals' budget (MiB); it runs when fusion.hoist is on and this is > 0.
  int64_t scanMemoryMb = 1024;
  bool storeRemarks = false; // attn-store-scan-residuals says what it stores (--remarks)
  FusionOptions fusion;  // buildFusion first
  /// Also @apply_update and @loss_weight: the entries data-parallel training calls around
  /// its gradient all-reduce.
  bool dataParallel = false;
};

/// The training pipeline (stage "grad"): structural fusion (so that a fused op differentiates
/// as one op, its backward a fused op too), attn-autodiff on @loss (adds @loss_grad), then
/// attn-train-step with the optimizer and clipping (adds @train_step; with dataParallel
/// also @apply_update, and attn-loss-weight's @loss_weight).
void buildTraining(mlir::OpPassManager &pm, const TrainingOptions &options);

/// Where the runtime kernels run: the CPU (oneDNN and attnc's kernels), or, for what the GPU
/// kernels compute, an NVIDIA GPU (attn-to-cuda; docs/cuda.md). CUDAOnCPU is the check of
/// the compiler's generated GPU kernels without a GPU: every linalg op becomes a gpu.launch
/// (attn-linalg-to-gpu), which then runs as CPU loops (attn-gpu-launch-to-loops); the
/// runtime's kernels stay the CPU's.
enum class Device { CPU, CUDA, CUDAOnCPU };

/// "cpu" | "cuda" | "cuda-on-cpu"; nullopt for anything else.
std::optional<Device> parseDevice(const std::string &name);
/// The spelling parseDevice reads.
const char *deviceName(Device device);

/// attn -> tensors of linalg/tensor/scf/arith/math plus func.calls of runtime kernels. Starts
/// with buildFusion; with Device::CUDA, attn-to-cuda runs before attn-to-onednn.
void buildAttnToLowered(mlir::OpPassManager &pm, const FusionOptions &fusion = {},
                        Device device = Device::CPU);

/// Lowered tensors -> LLVM dialect. Entry points become `<entryPrefix><name>(void **args)`.
/// With Device::CUDAOnCPU the loops go through the GPU kernels' form first.
void buildLoweredToLLVM(mlir::OpPassManager &pm, const std::string &entryPrefix,
                        Device device = Device::CPU);

/// Lowered tensors -> the generated GPU kernels compiled to PTX for `chip`: bufferization as
/// for the CPU, attn-linalg-to-gpu, kernel outlining, the kernels through NVVM (their math
/// as attn-expand-math's polynomials: no libdevice), and gpu-module-to-binary's PTX. The
/// host code stays unlowered: only the kernels are the product (`attnc emit --stage=ptx`).
void buildLoweredToPTX(mlir::OpPassManager &pm, const std::string &chip = "sm_90");

/// Registers our passes and the pipelines `attn-train` (attn -> grad), `attn-lower`
/// (attn -> lowered) and `attn-lower-to-llvm` (lowered -> LLVM) for attn-opt.
void registerPassesAndPipelines();

} // namespace attn::pipelines
