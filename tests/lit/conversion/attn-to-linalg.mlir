// RUN: attn-opt %s -attn-to-linalg -split-input-file -verify-diagnostics | FileCheck %s
// A GPU program's embedding gradient is left for attn-to-cuda (see @embedding_grad).
// RUN: attn-opt %s -attn-to-linalg=gpu=true -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=GPU

// Broadcasting reads index 0 of size-1 dims and skips missing leading ones.
// CHECK: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_broadcast
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ROW]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = attn.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  return %c : tensor<4x8xf32>
}

// Softmax: max, exp(x - max), sum, divide.
// CHECK-LABEL: func @softmax
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = attn.softmax %a : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// scan: an scf.for over time carrying the state and the stacked outputs.
// CHECK-LABEL: func @scan
// CHECK: %[[N:[[:alnum:]_]+]] = arith.constant 5 : index
// CHECK: scf.for %[[T:[[:alnum:]_]+]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[H:[[:alnum:]_]+]] = %{{.*}}, %[[YS:[[:alnum:]_]+]] = %{{.*}}) -> (tensor<4x8xf32>, tensor<4x5x8xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, %[[T]], 0] [4, 1, 8] [1, 1, 1] : tensor<4x5x8xf32> to tensor<4x8xf32>
// CHECK: math.tanh
// CHECK: tensor.insert_slice %{{.*}} into %[[YS]][0, %[[T]], 0] [4, 1, 8] [1, 1, 1]
// CHECK: scf.yield
func.func @scan(%h0: tensor<4x8xf32>, %x: tensor<4x5x8xf32>) -> tensor<4x5x8xf32> {
  %h, %ys = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x5x8xf32>) -> (tensor<4x8xf32>, tensor<4x5x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x8xf32>):
    %s = attn.add %hp, %xt : tensor<4x8xf32>, tensor<4x8xf32>
    %hn = attn.tanh %s : tensor<4x8xf32>
    attn.yield %hn, %hn : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %ys : tensor<4x5x8xf32>
}

// A reversed scan walks t = T-1 .. 0.
// CHECK-LABEL: func @scan_reverse
// CHECK: scf.for %[[I:[[:alnum:]_]+]] =
// CHECK: %[[LAST:[[:alnum:]_]+]] = arith.constant 4 : index
// CHECK: arith.subi %[[LAST]], %[[I]]
func.func @scan_reverse(%h0: tensor<4x8xf32>, %x: tensor<4x5x8xf32>) -> tensor<4x8xf32> {
  %h = attn.scan reverse inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x5x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x8xf32>):
    %s = attn.add %hp, %xt : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %s : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// CHECK-LABEL: func @shapes
// CHECK: tensor.collapse_shape
// CHECK: tensor.expand_shape
// CHECK: linalg.transpose
// CHECK: tensor.insert_slice
// CHECK: tensor.extract_slice
func.func @shapes(%a: tensor<4x8xf32>) -> tensor<8x2xf32> {
  %r = attn.reshape %a : tensor<4x8xf32> -> tensor<2x16xf32>
  %t = attn.transpose %r {perm = array<i64: 1, 0>} : tensor<2x16xf32>
  %c = attn.concat %t, %t {axis = 0 : i64} : tensor<16x2xf32>, tensor<16x2xf32>
  %s = attn.slice %c {offsets = array<i64: 8, 0>, sizes = array<i64: 8, 2>} : tensor<32x2xf32>
  return %s : tensor<8x2xf32>
}

// CHECK-LABEL: func @embedding
// CHECK: linalg.index 2
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<10x4xf32>
func.func @embedding(%t: tensor<10x4xf32>, %ids: tensor<2x3xi32>) -> tensor<2x3x4xf32> {
  %e = attn.embedding %t, %ids : tensor<10x4xf32>, tensor<2x3xi32>
  return %e : tensor<2x3x4xf32>
}

// The embedding's gradient: a loop over the positions adding each in-range one's row; with
// gpu=true it stays (attn-to-cuda makes it a GPU kernel).
// CHECK-LABEL: func @embedding_grad
// CHECK: scf.for
// CHECK: scf.if
// CHECK: tensor.insert_slice
// CHECK-NOT: attn.embedding_grad
// GPU-LABEL: func @embedding_grad
// GPU: attn.embedding_grad
func.func @embedding_grad(%ids: tensor<2x3xi32>, %dy: tensor<2x3x4xf32>) -> tensor<10x4xf32> {
  %dt = attn.embedding_grad %ids, %dy : tensor<2x3xi32>, tensor<2x3x4xf32> -> tensor<10x4xf32>
  return %dt : tensor<10x4xf32>
}

// CHECK-LABEL: func @layer_norm
// CHECK: math.rsqrt
func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = attn.layer_norm %x, %g, %g : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func @reduce_mean
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.divf
func.func @reduce_mean(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %y = attn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32>
  return %y : tensor<4x1xf32>
}

// label_count: a 0/1 mask of the labels that count (in [0, classes), not ignored), summed.
// CHECK-LABEL: func @label_count
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK-DAG: arith.cmpi sge
// CHECK-DAG: arith.cmpi slt
// CHECK: arith.cmpi ne
// CHECK: arith.select
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: arith.addf
func.func @label_count(%y: tensor<2x3xi32>) -> tensor<f32> {
  %n = attn.label_count %y {classes = 5 : i64, ignore_index = 0 : i64} : tensor<2x3xi32>
  return %n : tensor<f32>
}

// -----

func.func @leftover(%x: tensor<4x1xf32>, %h: tensor<4x8xf32>, %wax: tensor<1x8xf32>,
                    %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.rnn_cell' has no lowering to linalg}}
  %y = attn.rnn_cell %x, %h, %wax, %waa, %b : tensor<4x1xf32>, tensor<4x8xf32>, tensor<1x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Without sequence inputs the loop runs `length` steps and slices nothing.
// CHECK-LABEL: func @scan_length
// CHECK: %[[N:[[:alnum:]_]+]] = arith.constant 3 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK-NOT: tensor.extract_slice
// CHECK: tensor.insert_slice
func.func @scan_length(%h0: tensor<2x4xf32>) -> tensor<2x3x4xf32> {
  %h, %ys = attn.scan inits(%h0) over() {length = 3 : i64} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3x4xf32>) {
  ^bb0(%hp: tensor<2x4xf32>):
    %hn = attn.tanh %hp : tensor<2x4xf32>
    attn.yield %hn, %hn : tensor<2x4xf32>, tensor<2x4xf32>
  }
  return %ys : tensor<2x3x4xf32>
}

// -----

// A fused attention is attn-to-onednn's (a kernel generated for it): the ops of its score
// region are the kernel's recipe and stay attn ops.
// CHECK-LABEL: func @fused_attention_region
// CHECK: attn.fused_attention
// CHECK: attn.mul
// CHECK: attn.reduce_sum
// CHECK-NOT: linalg.generic
func.func @fused_attention_region(%q: tensor<2x1x1x4xf32>, %k: tensor<2x1x5x4xf32>, %v: tensor<2x1x5x3xf32>, %m: tensor<2x5xf32>) -> tensor<2x1x1x3xf32> {
  %o, %lse = attn.fused_attention %q, %k, %v, %m : tensor<2x1x1x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x3xf32>, tensor<2x5xf32> -> tensor<2x1x1x3xf32>, tensor<2x1x1xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %e = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %e : tensor<f32>
  }
  return %o : tensor<2x1x1x3xf32>
}
