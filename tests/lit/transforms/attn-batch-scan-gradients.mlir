// RUN: attn-opt %s -attn-batch-scan-gradients | FileCheck %s

// A backward scan's weight gradient: acc + h_t^T d_t per step. The saved states are a
// sequence already; d_t becomes a per-step output; one [T B, H]^T x [T B, G] product after the
// scan, added to the initial value, replaces the carried value.
// CHECK-LABEL: func @weight_gradient(
// CHECK-SAME: %[[HS:[^:]*]]: tensor<4x6x8xf32>, %[[G0:[^:]*]]: tensor<4x8xf32>, %[[ACC0:[^:]*]]: tensor<8x8xf32>, %[[W:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[S:.*]]:2 = attn.scan reverse inits(%[[G0]]) over(%[[HS]]) consts(%[[W]])
// CHECK-SAME: -> (tensor<4x8xf32>, tensor<4x6x8xf32>)
// CHECK: ^bb0(%{{[^:]*}}: tensor<4x8xf32>, %{{[^:]*}}: tensor<4x8xf32>, %{{[^:]*}}: tensor<8x8xf32>):
// CHECK-NOT: transpose_lhs
// CHECK: %[[D:.*]] = attn.mul
// CHECK: %[[DG:.*]] = attn.matmul %[[D]], %{{.*}} {transpose_rhs = true}
// CHECK: attn.yield %[[DG]], %[[D]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-DAG: %[[A:.*]] = attn.reshape %[[HS]] : tensor<4x6x8xf32> -> tensor<24x8xf32>
// CHECK-DAG: %[[B:.*]] = attn.reshape %[[S]]#1 : tensor<4x6x8xf32> -> tensor<24x8xf32>
// CHECK: %[[P:.*]] = attn.matmul %[[A]], %[[B]] {transpose_lhs = true} : tensor<24x8xf32>, tensor<24x8xf32>
// CHECK: %[[F:.*]] = attn.add %[[ACC0]], %[[P]]
// CHECK: return %[[S]]#0, %[[F]]
func.func @weight_gradient(%hs: tensor<4x6x8xf32>, %g0: tensor<4x8xf32>, %acc0: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<8x8xf32>) {
  %g, %acc = attn.scan reverse inits(%g0, %acc0) over(%hs) consts(%w) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x6x8xf32>, tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<8x8xf32>) {
  ^bb0(%gp: tensor<4x8xf32>, %accp: tensor<8x8xf32>, %ht: tensor<4x8xf32>, %kw: tensor<8x8xf32>):
    %t = attn.tanh %ht : tensor<4x8xf32>
    %d = attn.mul %gp, %t : tensor<4x8xf32>, tensor<4x8xf32>
    %dw = attn.matmul %ht, %d {transpose_lhs = true} : tensor<4x8xf32>, tensor<4x8xf32>
    %accn = attn.add %accp, %dw : tensor<8x8xf32>, tensor<8x8xf32>
    %dg = attn.matmul %d, %kw {transpose_rhs = true} : tensor<4x8xf32>, tensor<8x8xf32>
    attn.yield %dg, %accn : tensor<4x8xf32>, tensor<8x8xf32>
  }
  return %g, %acc : tensor<4x8xf32>, tensor<8x8xf32>
}

// Left alone: an accumulator the body reads otherwise (a), and one whose product is not
// a^T b (b).
// CHECK-LABEL: func @kept(
// CHECK: attn.scan inits(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: transpose_lhs = true
// CHECK-NOT: transpose_lhs
// CHECK: attn.yield
func.func @kept(%hs: tensor<4x6x8xf32>, %a0: tensor<8x8xf32>, %b0: tensor<8x8xf32>, %c0: tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) {
  %a, %b, %c = attn.scan inits(%a0, %b0, %c0) over(%hs) : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) {
  ^bb0(%ap: tensor<8x8xf32>, %bp: tensor<8x8xf32>, %cp: tensor<4x8xf32>, %ht: tensor<4x8xf32>):
    %p = attn.matmul %ht, %ht {transpose_lhs = true} : tensor<4x8xf32>, tensor<4x8xf32>
    %an = attn.add %ap, %p : tensor<8x8xf32>, tensor<8x8xf32>
    %q = attn.matmul %p, %ap : tensor<8x8xf32>, tensor<8x8xf32>
    %bn = attn.add %bp, %q : tensor<8x8xf32>, tensor<8x8xf32>
    %s = attn.matmul %cp, %p : tensor<4x8xf32>, tensor<8x8xf32>
    attn.yield %an, %bn, %s : tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>
  }
  return %a, %b, %c : tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>
}
