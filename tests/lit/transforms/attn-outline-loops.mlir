// RUN: attn-opt --attn-outline-loops=min-loops=1 %s | FileCheck %s
// RUN: attn-opt --attn-outline-loops %s | FileCheck %s --check-prefix=FEW

// With the default min-loops (200), functions this small stay whole.
// FEW-NOT: call @

// Each linalg op on buffers becomes a call of its own noinline function; a constant its
// region reads is cloned into it, other values it reads from above become arguments.

// CHECK: func.func private @f_loop0(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>, %{{.*}}: f32) attributes {passthrough = ["noinline"]}
// CHECK-NEXT: arith.constant 2.0
// CHECK-NEXT: linalg.generic
// CHECK: func.func private @f_loop1(%{{.*}}: f32, %{{.*}}: memref<4x8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-NEXT: linalg.fill
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>, %[[S:.*]]: f32)
// CHECK-NEXT: call @f_loop0(%[[X]], %[[Y]], %[[S]]) : (memref<4x8xf32>, memref<4x8xf32>, f32) -> ()
// CHECK-NEXT: call @f_loop1(%[[S]], %[[Y]]) : (f32, memref<4x8xf32>) -> ()
// CHECK-NEXT: return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %s: f32) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    %a = arith.addf %m, %s : f32
    linalg.yield %a : f32
  }
  linalg.fill ins(%s : f32) outs(%y : memref<4x8xf32>)
  return
}

// Ops on tensors (not yet bufferized) stay.
// CHECK-LABEL: func.func @tensors
// CHECK: linalg.fill
func.func @tensors(%s: f32) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}
