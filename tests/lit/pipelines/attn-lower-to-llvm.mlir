// The lowering to LLVM as attnc builds it (pipelines::buildLoweredToLLVM), for each device of
// `attnc --device`: the packed entry, and for the GPU the loop nests as launches of PTX kernels,
// the buffer between them on the device (attn-device-buffers), and one wait before the entry
// returns; for cuda-on-cpu the same launches as CPU loops, the buffer the host's again.
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-lower-to-llvm)' | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-lower-to-llvm{device=cuda})' | FileCheck %s --check-prefix=CUDA
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-lower-to-llvm{device=cuda-on-cpu})' | FileCheck %s --check-prefix=CHECKED
// RUN: not attn-opt %s --pass-pipeline='builtin.module(attn-lower-to-llvm{device=gpu})' 2>&1 | FileCheck %s --check-prefix=BAD

// CPU: llvm.func @attn_double(%{{.*}}: !llvm.ptr)
// CPU: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CPU-NOT: gpu.

// CUDA: llvm.func @attn_double(%{{.*}}: !llvm.ptr)
// CUDA-NOT: _mlir_memref_to_llvm_aligned_alloc
// CUDA: llvm.call @mgpuMemAlloc
// CUDA: gpu.launch_func
// CUDA: gpu.launch_func
// CUDA: llvm.call @attn_rt_cuda_synchronize()
// CUDA: llvm.call @mgpuMemFree
// CUDA-NOT: _mlir_memref_to_llvm_aligned_alloc
// CUDA: gpu.binary {{.*}}#nvvm.target<chip = "sm_90">

// CHECKED: llvm.func @attn_double(%{{.*}}: !llvm.ptr)
// CHECKED: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECKED-NOT: gpu.
// CHECKED-NOT: mgpu

// BAD: for the --device option: Cannot find option named 'gpu'!
#id = affine_map<(i) -> (i)>
func.func @double(%x: tensor<1024xf32> {attn.name = "x"}) -> (tensor<1024xf32> {attn.name = "y"}) {
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  %t = tensor.empty() : tensor<1024xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<1024xf32>) outs(%t : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  return %z : tensor<1024xf32>
}
