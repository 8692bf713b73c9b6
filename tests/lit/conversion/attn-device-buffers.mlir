// RUN: attn-opt %s -attn-device-buffers | FileCheck %s

// A buffer that only kernels touch (a launch, the CUDA runtime's calls), through views too,
// comes from the device, and its frees (of it or of a view's base buffer) go back there.
// CHECK-LABEL: func @only_the_gpu
// CHECK:       %[[T0:.*]] = gpu.wait async
// CHECK-NEXT:  %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%{{.*}}) : memref<?x4xf32>
// CHECK-NEXT:  gpu.wait [%[[T1]]]
// CHECK:       call @attn_rt_cuda_matmul(%{{.*}})
// CHECK:       %[[T2:.*]] = gpu.wait async
// CHECK-NEXT:  %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[BASE:.*]] : memref<f32>
// CHECK-NEXT:  gpu.wait [%[[T3]]]
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   memref.dealloc
func.func private @attn_rt_cuda_matmul(memref<?x4xf32, strided<[4, 1], offset: 4>>)
func.func @only_the_gpu(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x4xf32>
  %rows = memref.subview %a[1, 0] [%n, 4] [1, 1] : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: 4>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %a[%c0, %c0] : memref<?x4xf32>
    gpu.terminator
  }
  call @attn_rt_cuda_matmul(%rows) : (memref<?x4xf32, strided<[4, 1], offset: 4>>) -> ()
  // Its shape and address (the deallocation's bookkeeping) are the host's to read.
  %d = memref.dim %a, %c0 : memref<?x4xf32>
  %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %rows : memref<?x4xf32, strided<[4, 1], offset: 4>> -> memref<f32>, index, index, index, index, index
  %p = memref.extract_aligned_pointer_as_index %base : memref<f32> -> index
  memref.dealloc %base : memref<f32>
  return
}

// The host reads what a kernel writes, a CPU kernel takes it, a loop carries it, an entry
// returns it: it stays the runtime's (managed memory).
// CHECK-LABEL: func @the_host
// CHECK-NOT:   gpu.alloc
// CHECK-COUNT-4: memref.alloc()
// CHECK-NOT:   gpu.alloc
// CHECK:       return
func.func private @cpu_kernel(memref<4xf32>)
func.func @the_host(%n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %loaded = memref.alloc() : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %loaded[%c0] : memref<4xf32>
    gpu.terminator
  }
  %x = memref.load %loaded[%c0] : memref<4xf32>
  %kernel = memref.alloc() : memref<4xf32>
  call @cpu_kernel(%kernel) : (memref<4xf32>) -> ()
  %carried = memref.alloc() : memref<4xf32>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%s = %carried) -> memref<4xf32> {
    scf.yield %s : memref<4xf32>
  }
  memref.dealloc %loaded : memref<4xf32>
  memref.dealloc %kernel : memref<4xf32>
  %returned = memref.alloc() : memref<4xf32>
  return %returned : memref<4xf32>
}

// Through a call of the program's own functions (attn-outline-loops' kernels): a parameter
// that the callee only hands to a launch is the GPU's; one it reads on the host, or frees, is
// not.
// CHECK-LABEL: func @through_calls
// CHECK:       gpu.alloc async
// CHECK:       memref.alloc()
// CHECK:       memref.alloc()
// CHECK-NOT:   gpu.alloc
// CHECK:       return
func.func private @launches(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %x[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}
func.func private @loads(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}
func.func private @frees(%x: memref<4xf32>) {
  memref.dealloc %x : memref<4xf32>
  return
}
func.func @through_calls() {
  %gpu = memref.alloc() : memref<4xf32>
  call @launches(%gpu) : (memref<4xf32>) -> ()
  call @launches(%gpu) : (memref<4xf32>) -> ()
  memref.dealloc %gpu : memref<4xf32>
  %host = memref.alloc() : memref<4xf32>
  call @launches(%host) : (memref<4xf32>) -> ()
  %v = call @loads(%host) : (memref<4xf32>) -> f32
  memref.dealloc %host : memref<4xf32>
  %freed = memref.alloc() : memref<4xf32>
  call @frees(%freed) : (memref<4xf32>) -> ()
  return
}

// A constant's copy (attn-constants-to-buffers' gpu.memcpy) is queued on the stream: its
// buffer is the GPU's, and the copy gets the asynchronous form gpu-to-llvm lowers.
// CHECK-LABEL: func @constant
// CHECK:       %[[G:.*]] = memref.get_global @table
// CHECK:       %[[B:.*]], %{{.*}} = gpu.alloc async
// CHECK:       %[[T0:.*]] = gpu.wait async
// CHECK-NEXT:  %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[B]], %[[G]]
// CHECK-NEXT:  gpu.wait [%[[T1]]]
// CHECK:       call @attn_rt_cuda_matmul2(%[[B]])
// CHECK:       gpu.dealloc async
memref.global "private" constant @table : memref<4xf32> = dense<1.0>
func.func private @attn_rt_cuda_matmul2(memref<4xf32>)
func.func @constant() {
  %g = memref.get_global @table : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  gpu.memcpy %b, %g : memref<4xf32>, memref<4xf32>
  call @attn_rt_cuda_matmul2(%b) : (memref<4xf32>) -> ()
  memref.dealloc %b : memref<4xf32>
  return
}

// A small buffer of a static shape that only the host's loads and stores touch (buffer
// deallocation's arrays, and its helper's parameters) moves to the stack at the function's
// start, out of the loop, its free gone. One a kernel also touches, or too large, or of a
// dynamic shape, stays the runtime's.
// CHECK-LABEL: func @host_arrays
// CHECK-NEXT:  %[[S:.*]] = memref.alloca() : memref<2xindex>
// CHECK:       scf.for
// CHECK-NOT:   memref.alloc()
// CHECK:       memref.store %{{.*}}, %[[S]]
// CHECK:       call @helper(%[[S]])
// CHECK-NOT:   memref.dealloc %[[S]]
// CHECK:       }
// CHECK:       memref.alloc() : memref<2xindex>
// CHECK:       memref.alloc() : memref<512xindex>
// CHECK:       memref.alloc(%{{.*}}) : memref<?xindex>
func.func private @helper(%a: memref<2xindex>) -> index {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<2xindex>
  %d = memref.dim %a, %c0 : memref<2xindex>
  %s = arith.addi %v, %d : index
  return %s : index
}
func.func @host_arrays(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<2xindex>
    memref.store %i, %a[%c0] : memref<2xindex>
    %r = func.call @helper(%a) : (memref<2xindex>) -> index
    memref.dealloc %a : memref<2xindex>
  }
  %both = memref.alloc() : memref<2xindex>
  memref.store %n, %both[%c0] : memref<2xindex>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %both[%c0] : memref<2xindex>
    gpu.terminator
  }
  memref.dealloc %both : memref<2xindex>
  %large = memref.alloc() : memref<512xindex>
  memref.store %n, %large[%c0] : memref<512xindex>
  memref.dealloc %large : memref<512xindex>
  %dynamic = memref.alloc(%n) : memref<?xindex>
  memref.store %n, %dynamic[%c0] : memref<?xindex>
  memref.dealloc %dynamic : memref<?xindex>
  return
}

// What hands a buffer on keeps it the runtime's: a select between two buffers, an scf.if's
// result, a view the host loads.
// CHECK-LABEL: func @handed_on
// CHECK-NOT:   gpu.alloc
// CHECK:       return
func.func @handed_on(%c: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %a[%c0] : memref<4xf32>
    memref.store %f, %b[%c0] : memref<4xf32>
    gpu.terminator
  }
  %s = arith.select %c, %a, %b : memref<4xf32>
  %d = memref.alloc() : memref<4xf32>
  %e = scf.if %c -> memref<4xf32> {
    scf.yield %d : memref<4xf32>
  } else {
    scf.yield %d : memref<4xf32>
  }
  %v = memref.alloc() : memref<8xf32>
  %view = memref.subview %v[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %v[%c0] : memref<8xf32>
    gpu.terminator
  }
  %x = memref.load %view[%c0] : memref<4xf32, strided<[1], offset: 4>>
  return %x : f32
}
