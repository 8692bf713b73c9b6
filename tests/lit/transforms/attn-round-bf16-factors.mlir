// RUN: attn-opt %s -split-input-file -attn-round-bf16-factors | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-round-bf16-factors -attn-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// A dense layer's forward and its two gradients: x, w and the output gradient d are each
// rounded once, and the three bf16 products share the roundings. The f32 product keeps its
// f32 factors.
// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>, %[[D:[a-z0-9]+]]: tensor<4x16xf32>
// CHECK-DAG: %[[D16:.+]] = linalg.generic {{.*}} ins(%[[D]] : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xbf16>)
// CHECK-DAG: %[[W16:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xbf16>)
// CHECK-DAG: %[[X16:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: arith.truncf
// CHECK: attn.dense %[[X16]], %[[W16]], %[[B]] {precision = #attn.precision<bf16>} : tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xf32>
// CHECK: attn.matmul %[[X16]], %[[D16]] {precision = #attn.precision<bf16>, transpose_lhs = true} : tensor<4x8xbf16>, tensor<4x16xbf16>
// CHECK: attn.matmul %[[D16]], %[[W16]] {precision = #attn.precision<bf16>, transpose_rhs = true} : tensor<4x16xbf16>, tensor<8x16xbf16>
// CHECK: attn.dense %[[X]], %[[W]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>
func.func @layer(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %d: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<8x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>) {
  %y = attn.dense %x, %w, %b {precision = #attn.precision<bf16>} : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>
  %dw = attn.matmul %x, %d {precision = #attn.precision<bf16>, transpose_lhs = true} : tensor<4x8xf32>, tensor<4x16xf32>
  %dx = attn.matmul %d, %w {precision = #attn.precision<bf16>, transpose_rhs = true} : tensor<4x16xf32>, tensor<8x16xf32>
  %z = attn.dense %x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>
  return %y, %dw, %dx, %z : tensor<4x16xf32>, tensor<8x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

// A value read through a reshape and a transpose is rounded once, at its source; the views
// are taken of the rounding. The rounding follows the op that computes the value, so
// attn-fuse-elementwise makes them one loop nest when only bf16 products read the value.
// CHECK-LABEL: func.func @views(
// CHECK: %[[H:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x8xf32>)
// CHECK: %[[H16:.+]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x3x8xf32>) outs(%{{.*}} : tensor<2x3x8xbf16>)
// CHECK: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: tensor.collapse_shape %[[H16]] {{\[}}[0, 1], [2]] : tensor<2x3x8xbf16> into tensor<6x8xbf16>
// CHECK: linalg.transpose ins(%[[H16]] : tensor<2x3x8xbf16>) outs(%{{.*}} : tensor<2x8x3xbf16>) permutation = [0, 2, 1]
// FUSED-LABEL: func.func @views(
// FUSED: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x8xbf16>)
// FUSED: math.tanh
// FUSED: arith.truncf
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @views(%a: tensor<2x3x8xf32>, %w: tensor<8x4xbf16>, %v: tensor<2x3x5xbf16>) -> (tensor<6x4xf32>, tensor<2x8x5xf32>) {
  %e = tensor.empty() : tensor<2x3x8xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x3x8xf32>) outs(%e : tensor<2x3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<2x3x8xf32>
  %rows = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %y = attn.matmul %rows, %w {precision = #attn.precision<bf16>} : tensor<6x8xf32>, tensor<8x4xbf16>
  %et = tensor.empty() : tensor<2x8x3xf32>
  %ht = linalg.transpose ins(%h : tensor<2x3x8xf32>) outs(%et : tensor<2x8x3xf32>) permutation = [0, 2, 1]
  %z = attn.matmul %ht, %v {precision = #attn.precision<bf16>} : tensor<2x8x3xf32>, tensor<2x3x5xbf16>
  return %y, %z : tensor<6x4xf32>, tensor<2x8x5xf32>
}

// -----

// A weight read by a loop's body is rounded once, before the loop.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8x8xf32>
// CHECK: %[[W16:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xbf16>)
// CHECK: scf.for
// CHECK: %[[H16:.+]] = linalg.generic
// CHECK: attn.matmul %[[H16]], %[[W16]] {precision = #attn.precision<bf16>}
func.func @loop(%w: tensor<8x8xf32>, %h0: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %h = scf.for %i = %c0 to %c4 step %c1 iter_args(%hi = %h0) -> (tensor<2x8xf32>) {
    %next = attn.matmul %hi, %w {precision = #attn.precision<bf16>} : tensor<2x8xf32>, tensor<8x8xf32>
    scf.yield %next : tensor<2x8xf32>
  }
  return %h : tensor<2x8xf32>
}
