// RUN: attn-opt %s -split-input-file -attn-loss-weight -verify-diagnostics | FileCheck %s

// A cross-entropy loss weighs as many terms as it has labels that count: its shards' means
// combine with these weights into the whole batch's mean. Only the count is left of @loss.
// CHECK: func.func @loss(
// CHECK: func.func @loss_weight(%{{.*}}: tensor<2x3x5xf32>, %[[LABELS:.*]]: tensor<2x3xi32>) -> (tensor<f32> {attn.name = "weight"})
// CHECK-NEXT: %[[N:.*]] = attn.label_count %[[LABELS]] {classes = 5 : i64, ignore_index = 0 : i64} : tensor<2x3xi32>
// CHECK-NEXT: return %[[N]]
func.func @loss(%x: tensor<2x3x5xf32>, %y: tensor<2x3xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<5x5xf32>
  %logits = attn.matmul %x, %w : tensor<2x3x5xf32>, tensor<5x5xf32>
  %l = attn.cross_entropy %logits, %y {ignore_index = 0 : i64} : tensor<2x3x5xf32>, tensor<2x3xi32>
  return %l : tensor<f32>
}

// -----

// Every shard of an mse loss has as many elements: the weight is 1.
// CHECK: func.func @loss_weight(%{{.*}}: tensor<4x1xf32>
// CHECK: %[[ONE:.*]] = attn.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: return %[[ONE]]
func.func @loss(%p: tensor<4x1xf32>, %t: tensor<4x1xf32>) -> tensor<f32> {
  %l = attn.mse %p, %t : tensor<4x1xf32>, tensor<4x1xf32>
  return %l : tensor<f32>
}

// -----

// Terms added to a mean (hard attention's estimator and entropy bonus) weigh what it does.
// CHECK: func.func @loss_weight(%{{.*}}: tensor<2x3x5xf32>, %[[LABELS:.*]]: tensor<2x3xi32>, %{{.*}}: tensor<f32>)
// CHECK-NEXT: %[[N:.*]] = attn.label_count %[[LABELS]]
// CHECK-NEXT: return %[[N]]
func.func @loss(%logits: tensor<2x3x5xf32>, %y: tensor<2x3xi32>, %term: tensor<f32>) -> tensor<f32> {
  %ce = attn.cross_entropy %logits, %y {ignore_index = 0 : i64} : tensor<2x3x5xf32>, tensor<2x3xi32>
  %a = attn.sub %ce, %term : tensor<f32>, tensor<f32>
  %l = attn.add %a, %term : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}

// -----

// A loss of another form has no known weight across shards.
func.func @loss(%p: tensor<4x1xf32>, %t: tensor<4x1xf32>) -> tensor<f32> {
  %l = attn.mse %p, %t : tensor<4x1xf32>, tensor<4x1xf32>
  // expected-error @+1 {{attn-loss-weight: @loss returns attn.mul; a shard's weight is known for attn.cross_entropy and attn.mse only}}
  %twice = attn.mul %l, %l : tensor<f32>, tensor<f32>
  return %twice : tensor<f32>
}
