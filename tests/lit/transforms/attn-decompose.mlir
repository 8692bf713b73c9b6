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

// Additive scores: v^T tanh(q + k) as a broadcast add, tanh, a multiply by v and a sum.
// CHECK-LABEL: func @additive_scores(
// CHECK: %[[Q3:.*]] = attn.reshape %{{.*}} : tensor<4x16xf32> -> tensor<4x1x16xf32>
// CHECK: %[[SUM:.*]] = attn.add %[[Q3]], %{{.*}} : tensor<4x1x16xf32>, tensor<4x10x16xf32>
// CHECK: %[[T:.*]] = attn.tanh %[[SUM]]
// CHECK: %[[TV:.*]] = attn.mul %[[T]], %{{.*}} : tensor<4x10x16xf32>, tensor<16xf32>
// CHECK: attn.reduce_sum %[[TV]] {axes = array<i64: 2>} : tensor<4x10x16xf32>
// CHECK-NOT: attn.attention_scores
func.func @additive_scores(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>) -> tensor<4x10xf32> {
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  return %e : tensor<4x10xf32>
}

// Cosine scores: query and keys divided by their norms (sqrt of the sum of squares over the
// last axis, kept for broadcasting), their batched dot product, times the temperature.
// CHECK-LABEL: func @cosine_scores(
// CHECK: %[[QQ:.*]] = attn.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = true} : tensor<4x16xf32>
// CHECK: %[[QN:.*]] = attn.sqrt
// CHECK: %[[QU:.*]] = attn.div %{{.*}}, %[[QN]] : tensor<4x16xf32>, tensor<4x1xf32>
// CHECK: attn.reduce_sum %{{.*}} {axes = array<i64: 2>, keepdims = true} : tensor<4x10x16xf32>
// CHECK: %[[KN:.*]] = attn.sqrt
// CHECK: %[[KU:.*]] = attn.div %{{.*}}, %[[KN]] : tensor<4x10x16xf32>, tensor<4x10x1xf32>
// CHECK: %[[Q3:.*]] = attn.reshape %[[QU]] : tensor<4x16xf32> -> tensor<4x1x16xf32>
// CHECK: attn.matmul %[[Q3]], %[[KU]] {transpose_rhs = true} : tensor<4x1x16xf32>, tensor<4x10x16xf32>
// CHECK: attn.mul %{{.*}}, %{{.*}} : tensor<4x10xf32>, tensor<1xf32>
// CHECK-NOT: attn.attention_scores
func.func @cosine_scores(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %t: tensor<1xf32>) -> tensor<4x10xf32> {
  %e = attn.attention_scores cosine %q, %k, %t : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<1xf32>
  return %e : tensor<4x10xf32>
}

// Masked softmax (masked scores pushed down before the max, exp times the mask, a guarded
// sum) and the context as a batched matmul of the weights with the values.
// CHECK-LABEL: func @attention(
// CHECK: attn.reduce_max
// CHECK: attn.exp
// CHECK: attn.maximum
// CHECK: %[[A:.*]] = attn.div
// CHECK: %[[A3:.*]] = attn.reshape %[[A]] : tensor<4x10xf32> -> tensor<4x1x10xf32>
// CHECK: attn.matmul %[[A3]], %{{.*}} : tensor<4x1x10xf32>, tensor<4x10x16xf32>
// CHECK-NOT: attn.attention
func.func @attention(%e: tensor<4x10xf32>, %m: tensor<4x10xf32>, %h: tensor<4x10x16xf32>) -> (tensor<4x16xf32>, tensor<4x10xf32>) {
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x16xf32>
  return %c, %a : tensor<4x16xf32>, tensor<4x10xf32>
}

// A causal convolution is one GEMM over the unfolded input: the padded input's three taps
// side by side [B, T, 3C], times the weight read as [3C, N].
// CHECK-LABEL: func @conv1d(
// CHECK: %[[PAD:.*]] = attn.pad %{{.*}} {high = array<i64: 0, 0, 0>, low = array<i64: 0, 2, 0>} : tensor<4x10x16xf32>
// CHECK: %[[T0:.*]] = attn.slice %[[PAD]] {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 4, 10, 16>}
// CHECK: %[[T1:.*]] = attn.slice %[[PAD]] {offsets = array<i64: 0, 1, 0>, sizes = array<i64: 4, 10, 16>}
// CHECK: %[[T2:.*]] = attn.slice %[[PAD]] {offsets = array<i64: 0, 2, 0>, sizes = array<i64: 4, 10, 16>}
// CHECK: %[[COLS:.*]] = attn.concat %[[T0]], %[[T1]], %[[T2]] {axis = 2 : i64}
// CHECK: %[[W:.*]] = attn.reshape %{{.*}} : tensor<3x16x32xf32> -> tensor<48x32xf32>
// CHECK: attn.dense %[[COLS]], %[[W]], %{{.*}} : tensor<4x10x48xf32>, tensor<48x32xf32>, tensor<32xf32>
// CHECK-NOT: attn.conv1d
func.func @conv1d(%x: tensor<4x10x16xf32>, %w: tensor<3x16x32xf32>, %b: tensor<32xf32>) -> tensor<4x10x32xf32> {
  %y = attn.conv1d %x, %w, %b {pad_low = 2 : i64} : tensor<4x10x16xf32>, tensor<3x16x32xf32>, tensor<32xf32>
  return %y : tensor<4x10x32xf32>
}

// The gated linear unit: the first half times the sigmoid of the second.
// CHECK-LABEL: func @glu(
// CHECK: %[[A:.*]] = attn.slice %{{.*}} {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 8>}
// CHECK: %[[G:.*]] = attn.slice %{{.*}} {offsets = array<i64: 0, 8>, sizes = array<i64: 4, 8>}
// CHECK: %[[S:.*]] = attn.sigmoid %[[G]]
// CHECK: attn.mul %[[A]], %[[S]]
// CHECK-NOT: attn.glu
func.func @glu(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %y = attn.glu %x : tensor<4x16xf32>
  return %y : tensor<4x8xf32>
}

// stop_gradient is the identity once gradients are built.
// CHECK-LABEL: func @stop_gradient(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32>
// CHECK-NEXT: return %[[X]]
func.func @stop_gradient(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = attn.stop_gradient %x : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
