#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnDialect.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace attn::pipelines {

void registerDialects(DialectRegistry &registry) {
  registry
      .insert<mlir::attn::AttnDialect, affine::AffineDialect, arith::ArithDialect,
              bufferization::BufferizationDialect, cf::ControlFlowDialect, func::FuncDialect,
              gpu::GPUDialect, linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
              memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect, tensor::TensorDialect>();
  // One-shot bufferization needs each dialect's bufferization model.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // Translation of the final module to LLVM IR.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // The generated GPU kernels' PTX (buildLoweredToPTX), and, for --device cuda, the
  // translation of the launches and of the PTX embedded beside them (#gpu.select_object).
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void buildFusion(OpPassManager &pm, const FusionOptions &o) {
  if (o.recurrence)
    pm.addPass(mlir::attn::createAttnFuseRecurrence({o.remarks}));
  if (o.attention)
    pm.addPass(mlir::attn::createAttnFuseAttention({o.remarks, o.precision}));
  // After the fusions, which want to see whole cells and whole attention.
  if (o.hoist)
    pm.addPass(mlir::attn::createAttnHoistScanProjections());
  // Before autodiff: the gradient rules give each product's backward its precision.
  pm.addPass(mlir::attn::createAttnPrecision({o.precision, o.remarks}));
}

void buildTraining(OpPassManager &pm, const TrainingOptions &o) {
  buildFusion(pm, o.fusion);
  mlir::attn::AttnTrainStepOptions step;
  step.optimizer = o.optimizer;
  step.momentum = o.momentum;
  step.beta1 = o.beta1;
  step.beta2 = o.beta2;
  step.epsilon = o.epsilon;
  step.weightDecay = o.weightDecay;
  step.clipNorm = o.clipNorm;
  step.splitUpdate = o.dataParallel;
  pm.addPass(mlir::attn::createAttnAutodiff());
  // Right after autodiff, which paired each forward scan with its backward.
  if (o.fusion.hoist && o.scanMemoryMb > 0)
    pm.addPass(mlir::attn::createAttnStoreScanResiduals({o.scanMemoryMb, o.storeRemarks}));
  pm.addPass(mlir::attn::createAttnTrainStep(step));
  if (o.dataParallel)
    pm.addPass(mlir::attn::createAttnLossWeight());
}

namespace {

// attn-opt's spelling of TrainingOptions: --pass-pipeline='builtin.module(attn-train{...})'.
struct TrainingPipelineOptions : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> optimizer{*this, "optimizer", llvm::cl::desc("adam | adamw | sgd"),
                                llvm::cl::init("adam")};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("sgd momentum"), llvm::cl::init(0.0)};
  Option<double> weightDecay{*this, "weight-decay", llvm::cl::desc("adamw weight decay"),
                             llvm::cl::init(0.0)};
  Option<double> clipNorm{*this, "clip-norm", llvm::cl::desc("global norm clip; 0: none"),
                          llvm::cl::init(0.0)};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("structural fusion first"),
                    llvm::cl::init(true)};
  Option<int64_t> scanMemory{*this, "scan-memory",
                             llvm::cl::desc("MiB forward scans store for their backward"),
                             llvm::cl::init(1024)};
  Option<bool> dataParallel{*this, "data-parallel",
                            llvm::cl::desc("also @apply_update and @loss_weight"),
                            llvm::cl::init(false)};
  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("attn-precision's policy: f32 | bf16 | int8"),
                                llvm::cl::init("f32")};
};

// attn-opt's spelling of buildLoweredToLLVM's device: attn-lower-to-llvm{device=cuda}.
struct LoweringPipelineOptions : public PassPipelineOptions<LoweringPipelineOptions> {
  Option<Device> device{*this, "device", llvm::cl::desc("where the program runs"),
                        llvm::cl::init(Device::CPU),
                        llvm::cl::values(clEnumValN(Device::CPU, "cpu", "the CPU"),
                                         clEnumValN(Device::CUDA, "cuda", "an NVIDIA GPU"),
                                         clEnumValN(Device::CUDAOnCPU, "cuda-on-cpu",
                                                    "the GPU's generated kernels as CPU loops"))};
};

} // namespace

std::optional<Device> parseDevice(const std::string &name) {
  if (name == "cpu")
    return Device::CPU;
  if (name == "cuda")
    return Device::CUDA;
  if (name == "cuda-on-cpu")
    return Device::CUDAOnCPU;
  return std::nullopt;
}

const char *deviceName(Device device) {
  switch (device) {
  case Device::CPU:
    return "cpu";
  case Device::CUDA:
    return "cuda";
  case Device::CUDAOnCPU:
    return "cuda-on-cpu";
  }
  return "cpu";
}

void buildAttnToLowered(OpPassManager &pm, const FusionOptions &fusion, Device device) {
  buildFusion(pm, fusion);
  // After autodiff (which ran before, for training) and after hoisting, which made the backward
  // scans' saved states sequences.
  if (fusion.hoist)
    pm.addPass(mlir::attn::createAttnBatchScanGradients());
  pm.addPass(mlir::attn::createAttnParamsToArgs());
  pm.addPass(mlir::attn::createAttnDecompose());
  // The products decompositions made (multi-head attention, convolutions, cells in scans).
  pm.addPass(mlir::attn::createAttnPrecision({fusion.precision, false}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(mlir::attn::createAttnToLinalg({/*gpu=*/device != Device::CPU}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // After CSE, so that equal values are one value, rounded once; before the elementwise
  // fusion, which folds a rounding into the loop nest computing its value.
  pm.addPass(mlir::attn::createAttnRoundBf16Factors());
  // Chains of elementwise ops (a decomposed softmax, layer norm or GELU, an optimizer
  // update) become one loop nest each: fewer passes over memory, and far fewer loops for
  // LLVM, whose compile time grows faster than linearly in a function's loops.
  pm.addPass(mlir::attn::createAttnFuseElementwise());
  // Gradient sums (and other updates) that scans carry are bufferized in place, one buffer
  // per loop instead of one per step.
  pm.addPass(mlir::attn::createAttnUpdateCarriedInPlace());
  // Last, and with nothing after them: one-shot bufferization must see each kernel call's
  // to_memref / to_tensor exactly as emitted (see AttnToOneDNN.cpp). The GPU takes its ops
  // first; the CPU the rest.
  // (The CPU's check of the GPU program builds the same generated attention kernels, with
  // the CPU's runtime kernels standing in for the GPU's.)
  if (device != Device::CPU)
    pm.addPass(mlir::attn::createAttnToCUDA({fusion.remarks, device == Device::CUDA}));
  pm.addPass(mlir::attn::createAttnToOneDNN());
}

namespace {
// Tensors -> buffers: one-shot bufferization, outputs as caller-provided buffers, buffer
// deallocation. The CPU's and the GPU kernels' lowerings start here.
void buildBufferization(OpPassManager &pm, Device device) {
  bufferization::OneShotBufferizationOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // A scan step produces fresh buffers for its carried values; the loop may hand them on.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  // Copies become linalg.copy (plain loops after convert-linalg-to-loops) rather than
  // memref.copy, whose strided form calls MLIR's C runner library: the runtime links no MLIR.
  auto copyAsLoops = [](OpBuilder &b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  bufferize.memCpyFn = copyAsLoops;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  // Outputs become caller-provided buffers: the packed ABI passes every tensor by pointer.
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  outParams.memCpyFn = copyAsLoops;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Before deallocation, which frees the buffers it makes: the GPU reads no host global. (Also
  // on the CPU's check of the GPU program, cuda-on-cpu, which so runs the same buffers.)
  if (device != Device::CPU)
    pm.addPass(mlir::attn::createAttnConstantsToBuffers());
  // Launches run asynchronously: the host waits where it touches memory (before the
  // deallocation helpers, whose loads and stores are the host's own bookkeeping).
  if (device == Device::CUDA)
    pm.addPass(mlir::attn::createAttnGPUHostSync());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
}
} // namespace

namespace {
// The gpu.launch ops -> outlined kernels compiled to PTX, one gpu.binary per kernel; the host
// keeps gpu.launch_func ops.
void buildKernelsToPTX(OpPassManager &pm, const std::string &chip) {
  pm.addPass(createGpuKernelOutliningPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = chip;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(mlir::attn::createAttnExpandMath());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertSCFToCFPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  // What convert-gpu-to-nvvm has no lowering for (math.fma), and libdevice's one-instruction
  // functions as those instructions: no libdevice to link.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(mlir::attn::createAttnNVVMMath());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa"; // PTX text, compiled by the driver where the program runs
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
} // namespace

void buildLoweredToLLVM(OpPassManager &pm, const std::string &entryPrefix, Device device) {
  buildBufferization(pm, device);
  pm.addPass(mlir::attn::createAttnPackedEntries(mlir::attn::AttnPackedEntriesOptions{entryPrefix}));
  pm.addPass(mlir::attn::createAttnOutlineLoops());
  // Every loop nest a GPU kernel: launched on the GPU (its PTX in the program), or, checked
  // on the CPU, the same launches with their grids as loops.
  if (device != Device::CPU) {
    pm.addPass(mlir::attn::createAttnLinalgToGPU());
    // Once every loop nest is a launch: what only the GPU touches is device memory.
    pm.addPass(mlir::attn::createAttnDeviceBuffers());
  }
  if (device == Device::CUDA)
    buildKernelsToPTX(pm, "sm_90");
  if (device == Device::CUDAOnCPU)
    pm.addPass(mlir::attn::createAttnGPULaunchToLoops());
  pm.addPass(createConvertLinalgToLoopsPass());
  // Polynomial tanh/exp/log: plain arithmetic that LLVM can vectorize, unlike libm calls.
  pm.addPass(mlir::attn::createAttnExpandMath());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  // Allocations go through the runtime's recycling allocator (attn/Alloc.h).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  // Blocks come 64-byte aligned from the allocator, not by rounding an address up in integer
  // arithmetic, so that LLVM sees which allocation each buffer is (Target/Object.cpp).
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // The launches: calls of the runtime's mgpu* functions (runtime/cuda/launch.cpp) when the
  // module is translated, the PTX a constant beside them.
  if (device == Device::CUDA)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(mlir::attn::createAttnInternalize(mlir::attn::AttnInternalizeOptions{entryPrefix}));
}

void buildLoweredToPTX(OpPassManager &pm, const std::string &chip) {
  buildBufferization(pm, Device::CUDA);
  pm.addPass(mlir::attn::createAttnLinalgToGPU());
  buildKernelsToPTX(pm, chip);
}

void registerPassesAndPipelines() {
  mlir::attn::registerAttnTransformsPasses();
  mlir::attn::registerAttnConversionPasses();
  registerCanonicalizerPass();
  registerCSEPass();
  PassPipelineRegistration<TrainingPipelineOptions>(
      "attn-train", "attn -> fused attn with @loss_grad and @train_step (stage grad)",
      [](OpPassManager &pm, const TrainingPipelineOptions &p) {
        TrainingOptions o;
        o.optimizer = p.optimizer;
        o.momentum = p.momentum;
        o.weightDecay = p.weightDecay;
        o.clipNorm = p.clipNorm;
        o.scanMemoryMb = p.scanMemory;
        o.fusion.recurrence = o.fusion.attention = o.fusion.hoist = p.fuse;
        o.dataParallel = p.dataParallel;
        o.fusion.precision = p.precision;
        buildTraining(pm, o);
      });
  PassPipelineRegistration<>("attn-lower", "attn -> linalg/tensor/scf + oneDNN kernel calls",
                             [](OpPassManager &pm) { buildAttnToLowered(pm); });
  PassPipelineRegistration<LoweringPipelineOptions>(
      "attn-lower-to-llvm", "lowered tensors -> LLVM dialect with packed entry points",
      [](OpPassManager &pm, const LoweringPipelineOptions &o) {
        buildLoweredToLLVM(pm, "attn_", o.device);
      });
}

} // namespace attn::pipelines
