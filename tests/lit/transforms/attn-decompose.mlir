// RUN: attn-opt %s -attn-decompose | FileCheck %s

// The seed's cell: tanh(x W_ax + b_a + h W_aa), the bias riding on the input projection.
// CHECK-LABEL: func @cell(
// CHECK-SAME: %[[X:.*]]: tensor<4x1xf32>, %[[H:.*]]: tensor<4x8xf32>, %[[WAX:.*]]: tensor<1x8xf32>, %[[WAA:.*]]: tensor<8x8xf32>, %[[B:.*]]: tensor<8xf32>
// CHECK: %[[IN:.*]] = attn.dense %[[X]], %[[WAX]], %[[B]]
// CHECK: %[[REC:.*]] = attn.matmul %[[H]], %[[WAA]]
// CHECK: %[[SUM:.*]] = attn.add %[[IN]], %[[REC]]
// CHECK: attn.tanh %[[SUM]]
// CHECK-NOT: attn.rnn_cell
func.func @cell(%x: tensor<4x1xf32>, %h: tensor<4x8xf32>, %wax: tensor<1x8xf32>,
                %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = attn.rnn_cell %x, %h, %wax, %waa, %b : tensor<4x1xf32>, tensor<4x8xf32>, tensor<1x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
}
