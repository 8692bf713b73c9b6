// RUN: attn-opt %s -split-input-file -verify-diagnostics -attn-gpu-launch-to-loops -canonicalize | FileCheck %s

// A launch becomes the scf.parallel over its blocks and threads; the ids are the loop's
// indices, the sizes the launch's (as block arguments and as ops). (The canonicalizer drops
// the loops of size 1: block y and z, thread y and z.)
// CHECK-LABEL: func.func @launch
// CHECK-SAME:    (%[[X:.*]]: memref<?xf32>, %[[G:.*]]: index)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         scf.parallel (%[[BX:.*]], %[[TX:.*]]) = (%[[C0]], %[[C0]]) to (%[[G]], %[[C64]])
// CHECK:           %[[B:.*]] = arith.muli %[[BX]], %[[C64]]
// CHECK:           %[[P:.*]] = arith.addi %[[B]], %[[TX]]
// CHECK:           %[[Q:.*]] = arith.addi %[[P]], %[[G]]
// CHECK:           memref.store %{{.*}}, %[[X]][%[[Q]]]
// CHECK-NOT:     gpu.
func.func @launch(%x: memref<?xf32>, %g: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %b = arith.muli %bx, %sx : index
    %p = arith.addi %b, %tx : index
    %grid = gpu.grid_dim x
    %q = arith.addi %p, %grid : index
    memref.store %z, %x[%q] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Threads that wait for each other have no loop form.
func.func @barrier() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'gpu.launch' op has no loop form: its threads synchronise or exchange values ('gpu.barrier')}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

// Nor do threads that share memory.
func.func @shared() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'gpu.launch' op has no loop form: it has workgroup or private memory}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// -----

// attn-device-buffers' device buffers are the host's on the CPU; the waits around them go.
// CHECK-LABEL: func.func @device_buffer
// CHECK-SAME:    (%[[N:.*]]: index)
// CHECK-NEXT:    %[[A:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NEXT:    call @fill(%[[A]])
// CHECK-NEXT:    memref.dealloc %[[A]] : memref<?xf32>
// CHECK-NEXT:    return
func.func private @fill(memref<?xf32>)
func.func @device_buffer(%n: index) {
  %t0 = gpu.wait async
  %a, %t1 = gpu.alloc async [%t0] (%n) : memref<?xf32>
  gpu.wait [%t1]
  call @fill(%a) : (memref<?xf32>) -> ()
  %t2 = gpu.wait async
  %t3 = gpu.dealloc async [%t2] %a : memref<?xf32>
  gpu.wait [%t3]
  return
}

// -----

// attn-constants-to-buffers' copies are the host's memref.copy on the CPU.
// CHECK-LABEL: func.func @constant_copy
// CHECK-NEXT:    %[[G:.*]] = memref.get_global @table
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    memref.copy %[[G]], %[[B]]
// CHECK-NEXT:    call @read(%[[B]])
memref.global "private" constant @table : memref<4xf32> = dense<1.0>
func.func private @read(memref<4xf32>)
func.func @constant_copy() {
  %g = memref.get_global @table : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %b, %g : memref<4xf32>, memref<4xf32>
  gpu.wait [%t1]
  call @read(%b) : (memref<4xf32>) -> ()
  memref.dealloc %b : memref<4xf32>
  return
}
