// RUN: attn-opt %s -attn-gpu-host-sync | FileCheck %s

// The host waits for the GPU before it touches memory, once per stretch of queued work, and
// before an entry returns; not before the CUDA runtime's calls, which queue in order, nor
// before a launch or a linalg op (a launch once attn-linalg-to-gpu has run).
// CHECK-LABEL: func @entry
// CHECK: memref.load
// CHECK-NEXT: gpu.launch
// CHECK: call @attn_rt_cuda_matmul
// CHECK-NEXT: call @attn_rt_cuda_synchronize()
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.copy
// CHECK-NEXT: gpu.launch
// CHECK: call @attn_rt_cuda_synchronize()
// CHECK-NEXT: call @cpu_kernel
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: call @attn_rt_cuda_synchronize()
// CHECK-NEXT: return
func.func private @attn_rt_cuda_matmul(memref<4xf32>)
func.func private @cpu_kernel(memref<4xf32>)
func.func @entry(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  // At an entry's start, nothing of this call is queued, but the block waits (conservative);
  // the first access waits once.
  %x = memref.load %a[%c0] : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %x, %a[%c0] : memref<4xf32>
    gpu.terminator
  }
  call @attn_rt_cuda_matmul(%a) : (memref<4xf32>) -> ()
  // One wait covers both accesses.
  memref.store %f, %b[%c0] : memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %b[%c0] : memref<4xf32>
    gpu.terminator
  }
  // A CPU kernel reads on the host; the runtime reads the results after the return.
  call @cpu_kernel(%b) : (memref<4xf32>) -> ()
  // A linalg op on buffers is a launch once attn-linalg-to-gpu has run.
  linalg.fill ins(%f : f32) outs(%b : memref<4xf32>)
  return
}

// In a loop, each iteration waits before its host access (the previous one may have queued
// work); allocation and deallocation need no wait; a private function's return does not wait
// (its caller does, where it touches memory).
// CHECK-LABEL: func private @helper
// CHECK: scf.for
// CHECK-NEXT: gpu.launch
// CHECK: memref.alloc
// CHECK-NEXT: call @attn_rt_cuda_synchronize()
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: }
// CHECK-NEXT: gpu.launch
// CHECK: }
// CHECK-NEXT: return
func.func private @helper(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      gpu.terminator
    }
    %t = memref.alloc() : memref<4xf32>
    %v = memref.load %a[%i] : memref<4xf32>
    memref.dealloc %t : memref<4xf32>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// A loop that calls one of the program's functions may leave its work queued: the host access
// after it waits.
// CHECK-LABEL: func @loop_of_calls
// CHECK: scf.for
// CHECK-NEXT: call @helper
// CHECK-NEXT: }
// CHECK-NEXT: call @attn_rt_cuda_synchronize()
// CHECK-NEXT: memref.load
func.func @loop_of_calls(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // (The entry's first access, before the loop, has waited already.)
  %f = arith.constant 0.0 : f32
  memref.store %f, %a[%c0] : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    func.call @helper(%a) : (memref<4xf32>) -> ()
  }
  %v = memref.load %a[%c0] : memref<4xf32>
  return %v : f32
}

// A constant's copy (attn-constants-to-buffers' gpu.memcpy) is the GPU's work, queued: no
// wait before it, even at an entry's start; the host's read of the buffer after it waits.
// CHECK-LABEL: func @constant_copy
// CHECK-NEXT: memref.get_global
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: gpu.memcpy
// CHECK-NEXT: arith.constant
// CHECK-NEXT: call @attn_rt_cuda_synchronize()
// CHECK-NEXT: memref.load
memref.global "private" constant @table : memref<4xf32> = dense<1.0>
func.func @constant_copy() -> f32 {
  %g = memref.get_global @table : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  gpu.memcpy %b, %g : memref<4xf32>, memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %b[%c0] : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %v : f32
}
