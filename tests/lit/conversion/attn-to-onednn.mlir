// RUN: attn-opt %s -attn-to-onednn | FileCheck %s

// CHECK-DAG: func.func private @attn_rt_matmul(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @attn_rt_dense(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}

// A rank-2 matmul goes through the rank-3 kernel as batch 1; transposes become flags.
// CHECK-LABEL: func @matmul
// CHECK: %[[T:.*]] = arith.constant 1 : i64
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x4x5xf32>
// CHECK: call @attn_rt_matmul({{.*}}, %[[T]])
// CHECK: bufferization.to_tensor %{{.*}} restrict writable
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x4x5xf32> into tensor<4x5xf32>
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>) -> tensor<4x5xf32> {
  %c = attn.matmul %a, %b {transpose_rhs = true} : tensor<4x8xf32>, tensor<5x8xf32>
  return %c : tensor<4x5xf32>
}

// dense over [B, T, K] runs on [B*T, K] rows.
// CHECK-LABEL: func @dense
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK: call @attn_rt_dense
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
func.func @dense(%x: tensor<2x3x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y = attn.dense %x, %w, %b : tensor<2x3x8xf32>, tensor<8x4xf32>, tensor<4xf32>
  return %y : tensor<2x3x4xf32>
}

// Without a bias, dense is a matmul.
// CHECK-LABEL: func @dense_no_bias
// CHECK: call @attn_rt_matmul
// CHECK-NOT: attn_rt_dense(
// CHECK-NOT: attn.matmul
func.func @dense_no_bias(%x: tensor<6x8xf32>, %w: tensor<8x4xf32>) -> tensor<6x4xf32> {
  %y = attn.dense %x, %w : tensor<6x8xf32>, tensor<8x4xf32>
  return %y : tensor<6x4xf32>
}
