// RUN: attn-opt %s -split-input-file -attn-fuse-attention="remarks=1" -verify-diagnostics | FileCheck %s

// Bahdanau's additive scores feeding an attention whose weights are read: one fused op with
// one head and one query per row, v_a captured, the weights as a third result.
// CHECK-LABEL: func @additive
// CHECK-SAME: (%[[Q:.*]]: tensor<4x16xf32>, %[[K:.*]]: tensor<4x10x16xf32>, %[[V:.*]]: tensor<16xf32>, %[[M:.*]]: tensor<4x10xf32>, %[[H:.*]]: tensor<4x10x32xf32>)
// CHECK-DAG: %[[Q4:.*]] = attn.reshape %[[Q]] : tensor<4x16xf32> -> tensor<4x1x1x16xf32>
// CHECK-DAG: %[[K4:.*]] = attn.reshape %[[K]] : tensor<4x10x16xf32> -> tensor<4x1x10x16xf32>
// CHECK-DAG: %[[H4:.*]] = attn.reshape %[[H]] : tensor<4x10x32xf32> -> tensor<4x1x10x32xf32>
// CHECK: %[[O:.*]], %{{.*}}, %[[W:.*]] = attn.fused_attention %[[Q4]], %[[K4]], %[[H4]], %[[M]] captures(%[[V]] : tensor<16xf32>) {with_weights}
// CHECK-NEXT: ^bb0(%[[QI:.*]]: tensor<16xf32>, %[[KJ:.*]]: tensor<16xf32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>, %[[VA:.*]]: tensor<16xf32>):
// CHECK-NEXT: %[[S:.*]] = attn.add %[[QI]], %[[KJ]]
// CHECK-NEXT: %[[T:.*]] = attn.tanh %[[S]]
// CHECK-NEXT: %[[TV:.*]] = attn.mul %[[T]], %[[VA]]
// CHECK-NEXT: %[[E:.*]] = attn.reduce_sum %[[TV]] {axes = array<i64: 0>}
// CHECK-NEXT: attn.yield %[[E]] : tensor<f32>
// CHECK-NOT: attn.attention_scores
// CHECK: %[[C:.*]] = attn.reshape %[[O]] : tensor<4x1x1x32xf32> -> tensor<4x32xf32>
// CHECK: %[[A:.*]] = attn.reshape %[[W]] : tensor<4x1x1x10xf32> -> tensor<4x10xf32>
// CHECK: return %[[C]], %[[A]]
func.func @additive(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                    %m: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> (tensor<4x32xf32>, tensor<4x10xf32>) {
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
  return %c, %a : tensor<4x32xf32>, tensor<4x10xf32>
}

// -----

// Inside a decoder's scan body too; training reads no weights, so none are made.
// CHECK-LABEL: func @in_scan
// CHECK: attn.scan
// CHECK: attn.fused_attention
// CHECK-NOT: with_weights
// CHECK-SAME: -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
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

// Luong's dot score: a dot product in the region.
// CHECK-LABEL: func @dot
// CHECK-NOT: attn.attention_scores
// CHECK: attn.fused_attention
// CHECK: attn.mul
// CHECK-NEXT: attn.reduce_sum
// CHECK-NEXT: attn.yield
func.func @dot(%q: tensor<4x32xf32>, %m: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> tensor<4x32xf32> {
  %e = attn.attention_scores dot %q, %h : tensor<4x32xf32>, tensor<4x10x32xf32>
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
  return %c : tensor<4x32xf32>
}

// -----

// Luong's general score: the query projected before the op, then a dot.
// CHECK-LABEL: func @general
// CHECK-SAME: (%[[Q:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x32xf32>,
// CHECK: %[[QW:.*]] = attn.matmul %[[Q]], %[[W]]
// CHECK: %[[Q4:.*]] = attn.reshape %[[QW]] : tensor<4x32xf32> -> tensor<4x1x1x32xf32>
// CHECK: attn.fused_attention %[[Q4]]
func.func @general(%q: tensor<4x16xf32>, %w: tensor<16x32xf32>, %m: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> tensor<4x32xf32> {
  %e = attn.attention_scores general %q, %h, %w : tensor<4x16xf32>, tensor<4x10x32xf32>, tensor<16x32xf32>
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
  return %c : tensor<4x32xf32>
}

// -----

// Luong's local attention: the window's centre, width and Gaussian move into the fused op, and
// the local_window op goes.
// CHECK-LABEL: func @local
// CHECK-SAME: %[[M:[^:]*]]: tensor<4x10xf32>, %{{.*}}: tensor<4x10x16xf32>, %[[P:[^:]*]]: tensor<4x1xf32>)
// CHECK: %[[P3:.*]] = attn.reshape %[[P]] : tensor<4x1xf32> -> tensor<4x1x1xf32>
// CHECK: attn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] center(%[[P3]] : tensor<4x1x1xf32>) captures(%{{.*}} : tensor<16xf32>) {gaussian, window = 3 : i64}
// CHECK-NOT: attn.local_window
func.func @local(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                 %m: tensor<4x10xf32>, %h: tensor<4x10x16xf32>, %p: tensor<4x1xf32>) -> tensor<4x16xf32> {
  %wm, %g = attn.local_window %p, %m {window = 3 : i64} : tensor<4x1xf32>, tensor<4x10xf32>
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  %c, %a = attn.attention %e, %wm, %h weighting(%g : tensor<4x10xf32>) : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// A weighting that is not a local window's Gaussian stays unfused.
// CHECK-LABEL: func @weighted
// CHECK-NOT: attn.fused_attention
func.func @weighted(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                    %m: tensor<4x10xf32>, %g: tensor<4x10xf32>, %h: tensor<4x10x32xf32>) -> tensor<4x32xf32> {
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  // expected-remark @+1 {{not fused: its weighting is not a local window's Gaussian over that window}}
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

// -----

// Scaled dot-product attention: the fused op with a scaled-dot score (1/sqrt(16)), which
// attn-to-onednn runs as the flash kernels, with a key mask of ones where it had none.
// CHECK-LABEL: func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x10x16xf32>, %[[K:.*]]: tensor<2x4x12x16xf32>, %[[V:.*]]: tensor<2x4x12x8xf32>)
// CHECK: %[[ONES:.*]] = attn.constant dense<1.000000e+00> : tensor<2x12xf32>
// CHECK: %[[O:.*]], %{{.*}} = attn.fused_attention %[[Q]], %[[K]], %[[V]], %[[ONES]] {causal = true}
// CHECK-SAME: -> tensor<2x4x10x8xf32>, tensor<2x4x10xf32> {
// CHECK: %[[P:.*]] = attn.mul %{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>
// CHECK: %[[D:.*]] = attn.reduce_sum %[[P]]
// CHECK: %[[C:.*]] = attn.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[S:.*]] = attn.mul %[[D]], %[[C]]
// CHECK: attn.yield %[[S]]
// CHECK-NOT: attn.scaled_dot_product_attention
// CHECK: return %[[O]]
func.func @sdpa(%q: tensor<2x4x10x16xf32>, %k: tensor<2x4x12x16xf32>, %v: tensor<2x4x12x8xf32>) -> tensor<2x4x10x8xf32> {
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v {causal = true} : tensor<2x4x10x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x8xf32>
  return %o : tensor<2x4x10x8xf32>
}

// -----

// Weights that are read (plots) become the fused op's third result.
// CHECK-LABEL: func @sdpa_weights
// CHECK: %[[O:.*]], %{{.*}}, %[[W:.*]] = attn.fused_attention {{.*}} {with_weights}
// CHECK-NOT: attn.scaled_dot_product_attention
// CHECK: return %[[O]], %[[W]]
func.func @sdpa_weights(%q: tensor<2x4x10x16xf32>, %k: tensor<2x4x12x16xf32>, %v: tensor<2x4x12x8xf32>, %m: tensor<2x12xf32>) -> (tensor<2x4x10x8xf32>, tensor<2x4x10x12xf32>) {
  // expected-remark @+1 {{fused with its weights as a result (they are read): the generated kernel, not the GEMM-tiled one, computes it}}
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v, %m : tensor<2x4x10x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x8xf32>, tensor<2x12xf32>
  return %o, %w : tensor<2x4x10x8xf32>, tensor<2x4x10x12xf32>
}

// -----

// Multi-head cross attention: its projections stay dense ops around one fused attention that
// reads the key mask.
// CHECK-LABEL: func @mha
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x5xf32>)
// CHECK-NOT: attn.multi_head_attention
// CHECK: attn.dense
// CHECK: attn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] :
// CHECK: attn.dense
func.func @mha(%x: tensor<2x3x4xf32>, %mem: tensor<2x5x6xf32>, %wq: tensor<4x4xf32>, %bq: tensor<4xf32>,
               %wk: tensor<6x4xf32>, %bk: tensor<4xf32>, %wv: tensor<6x4xf32>, %bv: tensor<4xf32>,
               %wo: tensor<4x4xf32>, %bo: tensor<4xf32>, %m: tensor<2x5xf32>) -> tensor<2x3x4xf32> {
  %y, %w = attn.multi_head_attention %x, %mem, %wq, %bq, %wk, %bk, %wv, %bv, %wo, %bo, %m {heads = 2 : i64}
      : tensor<2x3x4xf32>, tensor<2x5x6xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<6x4xf32>,
        tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2x5xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Multi-head self-attention whose weights are read: fused with them as a result.
// CHECK-LABEL: func @mha_weights
// CHECK-NOT: attn.multi_head_attention
// CHECK: %{{.*}}, %{{.*}}, %[[W:.*]] = attn.fused_attention {{.*}} {with_weights}
// CHECK: return %[[W]]
func.func @mha_weights(%x: tensor<2x3x4xf32>, %wq: tensor<4x4xf32>, %bq: tensor<4xf32>) -> tensor<2x2x3x3xf32> {
  // expected-remark @+1 {{fused with its weights as a result (they are read): the generated kernel, not the GEMM-tiled one, computes it}}
  %y, %w = attn.multi_head_attention %x, %x, %wq, %bq, %wq, %bq, %wq, %bq, %wq, %bq {heads = 2 : i64}
      : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>,
        tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>
  return %w : tensor<2x2x3x3xf32>
}
