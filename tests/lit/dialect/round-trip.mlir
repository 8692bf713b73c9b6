// Every attn op prints and parses back to itself.
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK-LABEL: func @core
func.func @core(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %ids: tensor<4x3xi32>) -> tensor<4x8xf32> {
  // CHECK: attn.param "w" {init = #attn.init<normal>, scale = 5.000000e-01 : f32} : tensor<8x8xf32>
  %w = attn.param "w" {init = #attn.init<normal>, scale = 0.5 : f32} : tensor<8x8xf32>
  // CHECK: attn.constant dense<1.000000e+00> : tensor<8xf32>
  %c = attn.constant dense<1.0> : tensor<8xf32>
  // CHECK: attn.matmul %{{.*}}, %{{.*}} {transpose_rhs = true} : tensor<4x8xf32>, tensor<8x8xf32>
  %m = attn.matmul %x, %w {transpose_rhs = true} : tensor<4x8xf32>, tensor<8x8xf32>
  // CHECK: attn.dense %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  %d = attn.dense %m, %w, %c : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  // CHECK: attn.dense %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x8xf32>
  %d2 = attn.dense %d, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // CHECK: attn.add {{.*}} : tensor<4x8xf32>, tensor<8xf32>
  %a = attn.add %d2, %y : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: attn.sub
  %s = attn.sub %a, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: attn.mul
  %mu = attn.mul %s, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: attn.div
  %dv = attn.div %mu, %y : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: attn.neg
  %n = attn.neg %dv : tensor<4x8xf32>
  // CHECK: attn.tanh
  %t = attn.tanh %n : tensor<4x8xf32>
  // CHECK: attn.sigmoid
  %sg = attn.sigmoid %t : tensor<4x8xf32>
  // CHECK: attn.relu
  %r = attn.relu %sg : tensor<4x8xf32>
  // CHECK: attn.exp
  %e = attn.exp %r : tensor<4x8xf32>
  // CHECK: attn.log
  %l = attn.log %e : tensor<4x8xf32>
  // CHECK: attn.softmax %{{.*}} {axis = 0 : i64} : tensor<4x8xf32>
  %sm = attn.softmax %l {axis = 0 : i64} : tensor<4x8xf32>
  // CHECK: attn.layer_norm {{.*}} {epsilon = 1.000000e-03 : f32}
  %ln = attn.layer_norm %sm, %y, %c {epsilon = 1.0e-3 : f32} : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: attn.reduce_sum %{{.*}} {axes = array<i64: 1>} : tensor<4x8xf32>
  %rs = attn.reduce_sum %ln {axes = array<i64: 1>} : tensor<4x8xf32>
  // CHECK: attn.reduce_mean %{{.*}} {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32>
  %rm = attn.reduce_mean %ln {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32>
  // CHECK: attn.reduce_max %{{.*}} {axes = array<i64: 0, 1>} : tensor<4x8xf32>
  %rx = attn.reduce_max %ln {axes = array<i64: 0, 1>} : tensor<4x8xf32>
  // CHECK: attn.reshape %{{.*}} : tensor<4x8xf32> -> tensor<2x16xf32>
  %rh = attn.reshape %ln : tensor<4x8xf32> -> tensor<2x16xf32>
  // CHECK: attn.transpose %{{.*}} {perm = array<i64: 1, 0>} : tensor<2x16xf32>
  %tr = attn.transpose %rh {perm = array<i64: 1, 0>} : tensor<2x16xf32>
  // CHECK: attn.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  %cc = attn.concat %ln, %x {axis = 0 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: attn.slice %{{.*}} {offsets = array<i64: 2, 0>, sizes = array<i64: 4, 8>} : tensor<8x8xf32>
  %sl = attn.slice %cc {offsets = array<i64: 2, 0>, sizes = array<i64: 4, 8>} : tensor<8x8xf32>
  // CHECK: attn.embedding %{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<4x3xi32>
  %em = attn.embedding %w, %ids : tensor<8x8xf32>, tensor<4x3xi32>
  // CHECK: attn.maximum
  %mx = attn.maximum %sl, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: attn.eq
  %eq = attn.eq %mx, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: attn.sqrt
  %sq = attn.sqrt %eq : tensor<4x8xf32>
  // CHECK: attn.step
  %st = attn.step %sq : tensor<4x8xf32>
  // CHECK: attn.broadcast %{{.*}} : tensor<8xf32> -> tensor<4x8xf32>
  %bc = attn.broadcast %y : tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: attn.pad %{{.*}} {high = array<i64: 0, 2>, low = array<i64: 1, 0>} : tensor<4x8xf32>
  %pd = attn.pad %bc {low = array<i64: 1, 0>, high = array<i64: 0, 2>} : tensor<4x8xf32>
  // CHECK: attn.embedding_grad %{{.*}}, %{{.*}} : tensor<4x3xi32>, tensor<4x3x8xf32> -> tensor<8x8xf32>
  %eg = attn.embedding_grad %ids, %em : tensor<4x3xi32>, tensor<4x3x8xf32> -> tensor<8x8xf32>
  return %sl : tensor<4x8xf32>
}

// CHECK-LABEL: func @training
func.func @training(%p: tensor<4x3xf32>, %t: tensor<4x3xf32>, %ids: tensor<4xi32>,
                    %lr: tensor<f32>, %step: tensor<f32>) -> tensor<f32> {
  // CHECK: attn.param "m" {init = #attn.init<zeros>, trainable = false} : tensor<4x3xf32>
  %m = attn.param "m" {init = #attn.init<zeros>, trainable = false} : tensor<4x3xf32>
  // CHECK: attn.mse %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>
  %l = attn.mse %p, %t : tensor<4x3xf32>, tensor<4x3xf32>
  // CHECK: attn.cross_entropy %{{.*}}, %{{.*}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : tensor<4x3xf32>, tensor<4xi32>
  %ce = attn.cross_entropy %p, %ids {ignore_index = 0 : i64, label_smoothing = 0.1 : f32} : tensor<4x3xf32>, tensor<4xi32>
  // CHECK: attn.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4xi32>, tensor<f32>
  %dce = attn.cross_entropy_grad %p, %ids, %ce : tensor<4x3xf32>, tensor<4xi32>, tensor<f32>
  // CHECK: attn.label_count %{{.*}} {classes = 3 : i64, ignore_index = 0 : i64} : tensor<4xi32>
  %count = attn.label_count %ids {classes = 3 : i64, ignore_index = 0 : i64} : tensor<4xi32>
  // CHECK: attn.sgd_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {momentum = 0.899999976 : f32} : tensor<4x3xf32>, tensor<f32>
  %p1, %v1 = attn.sgd_update %p, %dce, %m, %lr {momentum = 0.9 : f32} : tensor<4x3xf32>, tensor<f32>
  // CHECK: attn.adam_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {decoupled, weight_decay = 0.00999999977 : f32} : tensor<4x3xf32>, tensor<f32>
  %p2, %m2, %v2 = attn.adam_update %p, %dce, %m, %m, %lr, %step {decoupled, weight_decay = 0.01 : f32} : tensor<4x3xf32>, tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func @recurrent
func.func @recurrent(%x: tensor<4x16x1xf32>, %h0: tensor<4x32xf32>, %wax: tensor<1x32xf32>,
                     %waa: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<4x16x32xf32> {
  // CHECK: attn.scan reverse inits(%{{.*}}) over(%{{.*}}) {axis = 1 : i64}
  // CHECK-SAME: : (tensor<4x32xf32>, tensor<4x16x1xf32>) -> (tensor<4x32xf32>, tensor<4x16x32xf32>)
  // CHECK: attn.rnn_cell
  // CHECK: attn.yield %{{.*}}, %{{.*}} : tensor<4x32xf32>, tensor<4x32xf32>
  %h, %hs = attn.scan reverse inits(%h0) over(%x) {axis = 1 : i64}
      : (tensor<4x32xf32>, tensor<4x16x1xf32>) -> (tensor<4x32xf32>, tensor<4x16x32xf32>) {
  ^bb0(%hp: tensor<4x32xf32>, %xt: tensor<4x1xf32>):
    %hn = attn.rnn_cell %xt, %hp, %wax, %waa, %b
        : tensor<4x1xf32>, tensor<4x32xf32>, tensor<1x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    attn.yield %hn, %hn : tensor<4x32xf32>, tensor<4x32xf32>
  }
  // A scan without sequence inputs runs `length` steps.
  // CHECK: attn.scan inits(%{{.*}}) over() {axis = 1 : i64, length = 5 : i64}
  %g, %gs = attn.scan inits(%h0) over() {axis = 1 : i64, length = 5 : i64}
      : (tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x5x32xf32>) {
  ^bb0(%hp: tensor<4x32xf32>):
    %hn = attn.tanh %hp : tensor<4x32xf32>
    attn.yield %hn, %hn : tensor<4x32xf32>, tensor<4x32xf32>
  }
  // Loop invariants as consts: block arguments after the step inputs.
  // CHECK: attn.scan inits(%{{.*}}) over(%{{.*}}) consts(%{{.*}}) {axis = 1 : i64}
  %k = attn.scan inits(%h0) over(%x) consts(%waa) {axis = 1 : i64}
      : (tensor<4x32xf32>, tensor<4x16x1xf32>, tensor<32x32xf32>) -> (tensor<4x32xf32>) {
  ^bb0(%hp: tensor<4x32xf32>, %xt: tensor<4x1xf32>, %w: tensor<32x32xf32>):
    %hn = attn.matmul %hp, %w : tensor<4x32xf32>, tensor<32x32xf32>
    attn.yield %hn : tensor<4x32xf32>
  }
  return %hs : tensor<4x16x32xf32>
}

// CHECK-LABEL: func @cells
func.func @cells(%x: tensor<4x2xf32>, %h: tensor<4x8xf32>, %c: tensor<4x8xf32>, %wi: tensor<2x32xf32>,
                 %wh: tensor<8x32xf32>, %b: tensor<32xf32>, %wp: tensor<3x8xf32>,
                 %hp: tensor<4x5xf32>, %whp: tensor<5x32xf32>, %proj: tensor<8x5xf32>, %bproj: tensor<5xf32>,
                 %gi: tensor<2x24xf32>, %gh: tensor<8x24xf32>, %gb: tensor<24xf32>) -> tensor<4x8xf32> {
  // CHECK: attn.lstm_cell %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x2xf32>
  %h1, %c1 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  // CHECK: attn.lstm_cell {{.*}} peephole(%{{.*}} : tensor<3x8xf32>) projection(%{{.*}}, %{{.*}} : tensor<8x5xf32>, tensor<5xf32>)
  %h2, %c2 = attn.lstm_cell %x, %hp, %c, %wi, %whp, %b peephole(%wp : tensor<3x8xf32>) projection(%proj, %bproj : tensor<8x5xf32>, tensor<5xf32>) : tensor<4x2xf32>, tensor<4x5xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<5x32xf32>, tensor<32xf32>
  // CHECK: attn.lstm_cell {{.*}} peephole(%{{.*}} : tensor<8x32xf32>) {peephole_form = #attn.peephole_form<full>}
  %h3, %c3 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b peephole(%wh : tensor<8x32xf32>) {peephole_form = #attn.peephole_form<full>} : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  // CHECK: attn.gru_cell {{.*}} : tensor<4x2xf32>
  %g1 = attn.gru_cell %x, %h, %gi, %gh, %gb, %gb : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  // CHECK: attn.gru_cell {{.*}} {form = #attn.gru_form<seed>}
  %g2 = attn.gru_cell %x, %h, %gi, %gh, %gb, %gb {form = #attn.gru_form<seed>} : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  return %g2 : tensor<4x8xf32>
}

// CHECK-LABEL: func @sequences
func.func @sequences(%x: tensor<4x6x2xf32>, %h: tensor<4x8xf32>, %c: tensor<4x8xf32>,
                     %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b8: tensor<8xf32>,
                     %gi: tensor<2x24xf32>, %gh: tensor<8x24xf32>, %gb: tensor<24xf32>,
                     %li: tensor<2x32xf32>, %lh: tensor<8x32xf32>, %lb: tensor<32xf32>,
                     %dhs: tensor<4x6x8xf32>, %wp: tensor<3x8xf32>,
                     %m: tensor<4x6x1xf32>) -> tensor<4x8xf32> {
  // CHECK: %{{.*}}, %{{.*}} = attn.rnn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  %rs, %rh = attn.rnn %x, %h, %wax, %waa, %b8 : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  // CHECK: attn.gru {{.*}} {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  %gs, %gh1 = attn.gru %x, %h, %gi, %gh, %gb, %gb {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  // CHECK: attn.lstm {{.*}} {training} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  %ls, %lh1, %lc1 = attn.lstm %x, %h, %c, %li, %lh, %lb {training} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  // CHECK: attn.rnn_grad {{.*}} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>
  %r:5 = attn.rnn_grad %x, %h, %wax, %waa, %b8, %rs, %rh, %dhs, %h : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>
  // CHECK: attn.gru_grad {{.*}} {reverse} : tensor<4x6x2xf32>
  %g:6 = attn.gru_grad %x, %h, %gi, %gh, %gb, %gb, %gs, %gh1, %dhs, %h {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>
  // CHECK: attn.lstm_grad {{.*}} : tensor<4x6x2xf32>
  %l:6 = attn.lstm_grad %x, %h, %c, %li, %lh, %lb, %ls, %lh1, %lc1, %dhs, %h, %c : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: attn.lstm {{.*}} peephole(%{{.*}} : tensor<3x8xf32>) {reverse} : tensor<4x6x2xf32>
  %ps, %ph, %pc = attn.lstm %x, %h, %c, %li, %lh, %lb peephole(%wp : tensor<3x8xf32>) {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  // CHECK: attn.lstm_grad {{.*}} peephole(%{{.*}} : tensor<3x8xf32>) {reverse} : tensor<4x6x2xf32>
  %pg:7 = attn.lstm_grad %x, %h, %c, %li, %lh, %lb, %ps, %ph, %pc, %dhs, %h, %c peephole(%wp : tensor<3x8xf32>) {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  // A masked layer and its backward: the mask [B, T, 1] last.
  // CHECK: attn.gru {{.*}} mask(%{{.*}} : tensor<4x6x1xf32>) {reverse} : tensor<4x6x2xf32>
  %ms, %mh = attn.gru %x, %h, %gi, %gh, %gb, %gb mask(%m : tensor<4x6x1xf32>) {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  // CHECK: attn.gru_grad {{.*}} mask(%{{.*}} : tensor<4x6x1xf32>) {reverse} : tensor<4x6x2xf32>
  %mg:6 = attn.gru_grad %x, %h, %gi, %gh, %gb, %gb, %ms, %mh, %dhs, %h mask(%m : tensor<4x6x1xf32>) {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>
  // CHECK: attn.lstm {{.*}} peephole(%{{.*}} : tensor<3x8xf32>) mask(%{{.*}} : tensor<4x6x1xf32>) : tensor<4x6x2xf32>
  %ns, %nh, %nc = attn.lstm %x, %h, %c, %li, %lh, %lb peephole(%wp : tensor<3x8xf32>) mask(%m : tensor<4x6x1xf32>) : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  // CHECK: attn.lstm_grad {{.*}} peephole(%{{.*}} : tensor<3x8xf32>) mask(%{{.*}} : tensor<4x6x1xf32>) : tensor<4x6x2xf32>
  %ng:7 = attn.lstm_grad %x, %h, %c, %li, %lh, %lb, %ns, %nh, %nc, %dhs, %h, %c peephole(%wp : tensor<3x8xf32>) mask(%m : tensor<4x6x1xf32>) : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %l#1 : tensor<4x8xf32>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>,
                     %w: tensor<16x16xf32>, %m: tensor<4x10xf32>, %p: tensor<4x1xf32>)
    -> (tensor<4x16xf32>, tensor<4x10xf32>) {
  // CHECK: attn.attention_scores additive %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  %e1 = attn.attention_scores additive %q, %k, %v : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  // CHECK: attn.attention_scores dot %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x10x16xf32>
  %e2 = attn.attention_scores dot %q, %k : tensor<4x16xf32>, tensor<4x10x16xf32>
  // CHECK: attn.attention_scores general {{.*}} : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16x16xf32>
  %e3 = attn.attention_scores general %q, %k, %w : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16x16xf32>
  // CHECK: attn.attention_scores cosine %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x10x16xf32>
  %e4 = attn.attention_scores cosine %q, %k : tensor<4x16xf32>, tensor<4x10x16xf32>
  // CHECK: attn.local_window %{{.*}}, %{{.*}} {window = 3 : i64} : tensor<4x1xf32>, tensor<4x10xf32>
  %wm, %g = attn.local_window %p, %m {window = 3 : i64} : tensor<4x1xf32>, tensor<4x10xf32>
  // CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x16xf32>
  %c1, %a1 = attn.attention %e1, %m, %k : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x16xf32>
  // CHECK: attn.attention {{.*}} weighting(%{{.*}} : tensor<4x10xf32>) : tensor<4x10xf32>
  %c2, %a2 = attn.attention %e2, %wm, %k weighting(%g : tensor<4x10xf32>) : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x16xf32>
  return %c2, %a2 : tensor<4x16xf32>, tensor<4x10xf32>
}

// A score region (an ALiBi-style learned distance penalty on a dot product), causal.
// CHECK-LABEL: func @fused_attention
// CHECK: attn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} captures(%{{.*}} : tensor<f32>) {causal = true} : tensor<2x1x3x8xf32>, tensor<2x1x5x8xf32>, tensor<2x1x5x4xf32>, tensor<2x5xf32> -> tensor<2x1x3x4xf32>, tensor<2x1x3xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>):
// CHECK: attn.yield %{{.*}} : tensor<f32>
func.func @fused_attention(%q: tensor<2x1x3x8xf32>, %k: tensor<2x1x5x8xf32>, %v: tensor<2x1x5x4xf32>,
                           %m: tensor<2x5xf32>, %slope: tensor<f32>) -> (tensor<2x1x3x4xf32>, tensor<2x1x3xf32>) {
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%slope : tensor<f32>) {causal = true}
      : tensor<2x1x3x8xf32>, tensor<2x1x5x8xf32>, tensor<2x1x5x4xf32>, tensor<2x5xf32>
      -> tensor<2x1x3x4xf32>, tensor<2x1x3xf32> {
  ^bb0(%qi: tensor<8xf32>, %kj: tensor<8xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<8xf32>, tensor<8xf32>
    %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<8xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %d, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  }
  return %o, %lse : tensor<2x1x3x4xf32>, tensor<2x1x3xf32>
}

// A mask region: a sliding window of four keys up to the query's position.
// CHECK-LABEL: func @fused_attention_mask_region
// CHECK: attn.yield %{{.*}} : tensor<f32>
// CHECK-NEXT: } mask {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>):
// CHECK: attn.step
func.func @fused_attention_mask_region(%q: tensor<2x1x3x8xf32>, %k: tensor<2x1x5x8xf32>, %v: tensor<2x1x5x4xf32>,
                                       %m: tensor<2x5xf32>) -> tensor<2x1x3x4xf32> {
  %o, %lse = attn.fused_attention %q, %k, %v, %m {causal = true}
      : tensor<2x1x3x8xf32>, tensor<2x1x5x8xf32>, tensor<2x1x5x4xf32>, tensor<2x5xf32>
      -> tensor<2x1x3x4xf32>, tensor<2x1x3xf32> {
  ^bb0(%qi: tensor<8xf32>, %kj: tensor<8xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<8xf32>, tensor<8xf32>
    %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<8xf32>
    attn.yield %d : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>):
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %room = attn.constant dense<1.5> : tensor<f32>
    %left = attn.sub %room, %ij : tensor<f32>, tensor<f32>
    %in = attn.step %left : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  return %o : tensor<2x1x3x4xf32>
}

// Local attention with weights, and the backward with both regions.
// CHECK-LABEL: func @fused_attention_local
// CHECK: attn.fused_attention {{.*}} center(%{{.*}} : tensor<2x1x1xf32>) {gaussian, window = 2 : i64, with_weights}
// CHECK: attn.fused_attention_grad {{.*}} center(%{{.*}} : tensor<2x1x1xf32>) weights(%{{.*}}, %{{.*}} : tensor<2x1x1x5xf32>, tensor<2x1x1x5xf32>) {gaussian, window = 2 : i64}
func.func @fused_attention_local(%q: tensor<2x1x1x4xf32>, %k: tensor<2x1x5x4xf32>, %v: tensor<2x1x5x3xf32>,
                                 %m: tensor<2x5xf32>, %p: tensor<2x1x1xf32>, %do: tensor<2x1x1x3xf32>,
                                 %dl: tensor<2x1x1xf32>, %dw: tensor<2x1x1x5xf32>) -> tensor<2x1x1xf32> {
  %o, %lse, %w = attn.fused_attention %q, %k, %v, %m center(%p : tensor<2x1x1xf32>) {window = 2 : i64, gaussian, with_weights}
      : tensor<2x1x1x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x1x1x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1x5xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %e = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %e : tensor<f32>
  }
  %dq, %dk, %dv, %dp = attn.fused_attention_grad %q, %k, %v, %m, %o, %lse, %do, %dl center(%p : tensor<2x1x1xf32>)
      weights(%w, %dw : tensor<2x1x1x5xf32>, tensor<2x1x1x5xf32>) {window = 2 : i64, gaussian}
      : tensor<2x1x1x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x3xf32>, tensor<2x5xf32>, tensor<2x1x1x3xf32>,
        tensor<2x1x1xf32>, tensor<2x1x1x3xf32>, tensor<2x1x1xf32>
      -> tensor<2x1x1x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x3xf32>, tensor<2x1x1xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %e = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %e : tensor<f32>
  } {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %ds: tensor<f32>):
    %dq_row = attn.mul %ds, %kj : tensor<f32>, tensor<4xf32>
    %dk_row = attn.mul %ds, %qi : tensor<f32>, tensor<4xf32>
    attn.yield %dq_row, %dk_row : tensor<4xf32>, tensor<4xf32>
  }
  return %dp : tensor<2x1x1xf32>
}

// CHECK-LABEL: func @transformer_attention
func.func @transformer_attention(%x: tensor<2x10x8xf32>, %mem: tensor<2x12x6xf32>,
                                 %w: tensor<8x8xf32>, %wm: tensor<6x8xf32>, %b: tensor<8xf32>,
                                 %m: tensor<2x12xf32>, %q: tensor<2x4x10x2xf32>)
    -> (tensor<2x10x8xf32>, tensor<2x4x10x2xf32>) {
  // CHECK: attn.multi_head_attention {{.*}} {heads = 4 : i64} : tensor<2x10x8xf32>, tensor<2x12x6xf32>
  %y, %a = attn.multi_head_attention %x, %mem, %w, %b, %wm, %b, %wm, %b, %w, %b, %m {heads = 4 : i64} : tensor<2x10x8xf32>, tensor<2x12x6xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<6x8xf32>, tensor<8xf32>, tensor<6x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<2x12xf32>
  // CHECK: attn.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true} : tensor<2x4x10x2xf32>, tensor<2x4x10x2xf32>, tensor<2x4x10x2xf32>
  %o, %wt = attn.scaled_dot_product_attention %q, %q, %q {causal = true} : tensor<2x4x10x2xf32>, tensor<2x4x10x2xf32>, tensor<2x4x10x2xf32>
  // CHECK: attn.gelu %{{.*}} : tensor<2x10x8xf32>
  %g = attn.gelu %y : tensor<2x10x8xf32>
  // CHECK: attn.erf %{{.*}} : tensor<2x10x8xf32>
  %e = attn.erf %g : tensor<2x10x8xf32>
  return %e, %o : tensor<2x10x8xf32>, tensor<2x4x10x2xf32>
}

// CHECK-LABEL: func @convolution
func.func @convolution(%x: tensor<4x10x16xf32>, %w: tensor<3x16x32xf32>, %b: tensor<32xf32>) -> tensor<4x10x16xf32> {
  // CHECK: attn.conv1d %{{.*}}, %{{.*}}, %{{.*}} {pad_low = 2 : i64} : tensor<4x10x16xf32>, tensor<3x16x32xf32>, tensor<32xf32>
  %y = attn.conv1d %x, %w, %b {pad_low = 2 : i64, pad_high = 0 : i64} : tensor<4x10x16xf32>, tensor<3x16x32xf32>, tensor<32xf32>
  // CHECK: attn.glu %{{.*}} : tensor<4x10x32xf32>
  %g = attn.glu %y : tensor<4x10x32xf32>
  return %g : tensor<4x10x16xf32>
}

// CHECK-LABEL: func @stop_gradient
func.func @stop_gradient(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // CHECK: attn.stop_gradient %{{.*}} : tensor<4x3xf32>
  %y = attn.stop_gradient %x : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
