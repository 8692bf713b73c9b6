// RUN: attn-opt %s -split-input-file -attn-fuse-attention="remarks=1" -verify-diagnostics | FileCheck %s

// Additive scores feeding an unweighted attention: one fused op.
// CHECK-LABEL: func @additive
// CHECK-SAME: (%[[Q:.*]]: tensor<4x16xf32>, %[[K:.*]]: tensor<4x10x16xf32>, %[[V:.*]]: tensor<16xf32>, %[[M:.*]]: tensor<4x10xf32>, %[[H:.*]]: tensor<4x10x32xf32>)
// CHECK: %[[C:.*]], %[[A:.*]] = attn.fused_attention additive %[[Q]], %[[K]], %[[V]], %[[M]], %[[H]]
// CHECK-NOT: attn.attention_scores
// CHECK: return %[[C]], %[[A]]
func.func @additive(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                    %m: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> (tensor<4x32xf32>, tensor<4x10xf32>) {
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
  return %c, %a : tensor<4x32xf32>, tensor<4x10xf32>
}

// -----

// Inside a decoder's scan body too.
// CHECK-LABEL: func @in_scan
// CHECK: attn.scan
// CHECK: attn.fused_attention
func.func @in_scan(%q: tensor<4x3x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                   %m: tensor<4x10xf32>, %h: tensor<4x10x32xf32>, %c0: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %r = attn.scan inits(%c0) over(%q) {axis = 1 : i64} : (tensor<4x32xf32>, tensor<4x3x16xf32>) -> tensor<4x32xf32> {
  ^bb0(%prev: tensor<4x32xf32>, %qt: tensor<4x16xf32>):
    %e = attn.attention_scores additive %qt, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
    %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
    attn.yield %c : tensor<4x32xf32>
  }
  return %r : tensor<4x32xf32>
}

// -----

// No fused kernel for dot scores yet.
// CHECK-LABEL: func @dot
// CHECK: attn.attention_scores
// CHECK-NOT: attn.fused_attention
func.func @dot(%q: tensor<4x32xf32>, %m: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> tensor<4x32xf32> {
  %e = attn.attention_scores dot %q, %h : tensor<4x32xf32>, tensor<4x10x32xf32>
  // expected-remark @+1 {{not fused: no fused kernel for 'dot' scores yet}}
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
  return %c : tensor<4x32xf32>
}

// -----

// Local attention's Gaussian weighting stays unfused.
// CHECK-LABEL: func @weighted
// CHECK-NOT: attn.fused_attention
func.func @weighted(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                    %m: tensor<4x10xf32>, %g: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> tensor<4x32xf32> {
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  // expected-remark @+1 {{not fused: it has a weighting (local attention's Gaussian)}}
  %c, %a = attn.attention %e, %m, %h weighting(%g : tensor<4x10xf32>) : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
  return %c : tensor<4x32xf32>
}

// -----

// Scores that something else also reads stay.
// CHECK-LABEL: func @shared_scores
// CHECK-NOT: attn.fused_attention
func.func @shared_scores(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                         %m: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> (tensor<4x32xf32>, tensor<4x10xf32>) {
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  // expected-remark @+1 {{not fused: its scores have other users}}
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
  return %c, %e : tensor<4x32xf32>, tensor<4x10xf32>
}
