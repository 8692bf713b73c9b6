// RUN: attn-opt %s -attn-constants-to-buffers | FileCheck %s

// Each read of a global becomes a buffer of its own, filled by a copy queued on the GPU
// (gpu.memcpy), and every use (the kernel's launch, the runtime kernel's call) reads the
// buffer; the global stays for the copy. A kernel's own code is left alone.
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func @reads
// CHECK: %[[G:.*]] = memref.get_global @table : memref<4xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[B]], %[[G]] : memref<4xf32>, memref<4xf32>
// CHECK: gpu.launch
// CHECK: memref.load %[[B]]
// CHECK: call @kernel(%[[B]])
func.func private @kernel(memref<4xf32>)
func.func @reads(%out: memref<4xf32>) {
  %g = memref.get_global @table : memref<4xf32>
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c4, %v = %c1, %w = %c1) {
    %e = memref.load %g[%tx] : memref<4xf32>
    memref.store %e, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  call @kernel(%g) : (memref<4xf32>) -> ()
  return
}

// CHECK-LABEL: gpu.module @kernels
// CHECK: memref.get_global @table
// CHECK-NOT: memref.alloc
module attributes {gpu.container_module} {
  memref.global "private" constant @inner : memref<4xf32> = dense<0.0>
  gpu.module @kernels {
    memref.global "private" constant @table : memref<4xf32> = dense<0.0>
    gpu.func @k(%out: memref<4xf32>) kernel {
      %g = memref.get_global @table : memref<4xf32>
      %c0 = arith.constant 0 : index
      %e = memref.load %g[%c0] : memref<4xf32>
      memref.store %e, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
