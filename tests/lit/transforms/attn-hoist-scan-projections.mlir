// RUN: attn-opt %s -attn-hoist-scan-projections | FileCheck %s

// A masked encoder layer (what the importer makes of a padded batch): the cell is decomposed,
// its input projection x_t W_ih + b becomes one dense over [B, T, I] before the scan, and the
// body reads its slices instead of the input's; the mask stays a sequence.
// CHECK-LABEL: func @lstm_masked(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x6x2xf32>, %[[M:[^:]*]]: tensor<4x6x1xf32>, %{{[^:]*}}: tensor<4x8xf32>, %{{[^:]*}}: tensor<4x8xf32>, %[[WI:[^:]*]]: tensor<2x32xf32>, %[[WH:[^:]*]]: tensor<8x32xf32>, %[[B:[^:]*]]: tensor<32xf32>
// CHECK: %[[P:.*]] = attn.dense %[[X]], %[[WI]], %[[B]] : tensor<4x6x2xf32>, tensor<2x32xf32>, tensor<32xf32>
// CHECK: attn.scan inits(%{{.*}}, %{{.*}}) over(%[[M]], %[[P]])
// CHECK: ^bb0(%[[H:[^:]*]]: tensor<4x8xf32>, %{{[^:]*}}: tensor<4x8xf32>, %{{[^:]*}}: tensor<4x1xf32>, %[[PT:[^:]*]]: tensor<4x32xf32>):
// CHECK-NEXT: %[[R:.*]] = attn.matmul %[[H]], %[[WH]]
// CHECK-NEXT: attn.add %[[PT]], %[[R]]
// CHECK-NOT: attn.lstm_cell
// CHECK-NOT: attn.dense
// CHECK: attn.yield
func.func @lstm_masked(%x: tensor<4x6x2xf32>, %m: tensor<4x6x1xf32>, %h0: tensor<4x8xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) -> (tensor<4x8xf32>, tensor<4x6x8xf32>) {
  %h, %c, %hs = attn.scan inits(%h0, %c0) over(%x, %m) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x2xf32>, tensor<4x6x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %cp: tensor<4x8xf32>, %xt: tensor<4x2xf32>, %mt: tensor<4x1xf32>):
    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    %d = attn.sub %ht, %hp : tensor<4x8xf32>, tensor<4x8xf32>
    %e = attn.mul %mt, %d : tensor<4x1xf32>, tensor<4x8xf32>
    %hn = attn.add %hp, %e : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %hn, %ct, %hn : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %h, %hs : tensor<4x8xf32>, tensor<4x6x8xf32>
}

// A decoder step reading [y_{t-1}; feed]: the weight's rows split, the y part hoisted (with
// the bias), the feed part stays a product in the body. The seed GRU's slices of w_hh and
// b_hh (u and r together, then the candidate's) are loop-invariant and leave the loop; so does
// nothing that reads the state.
// A weight passed as a const is found outside; the const and the embedded targets, no longer
// read in the body, are dropped.
// CHECK-LABEL: func @decoder(
// CHECK-SAME: %[[Y:[^:]*]]: tensor<4x6x3xf32>, %{{[^:]*}}: tensor<4x8xf32>, %{{[^:]*}}: tensor<4x5xf32>, %[[WI:[^:]*]]: tensor<8x24xf32>, %[[WH:[^:]*]]: tensor<8x24xf32>, %[[BI:[^:]*]]: tensor<24xf32>
// CHECK-COUNT-4: attn.slice
// CHECK: %[[WY:.*]] = attn.slice %[[WI]] {offsets = array<i64: 0, 0>, sizes = array<i64: 3, 24>}
// CHECK: %[[P:.*]] = attn.dense %[[Y]], %[[WY]], %[[BI]] : tensor<4x6x3xf32>, tensor<3x24xf32>, tensor<24xf32>
// CHECK: %[[WF:.*]] = attn.slice %[[WI]] {offsets = array<i64: 3, 0>, sizes = array<i64: 5, 24>}
// CHECK: attn.scan inits(%{{.*}}, %{{.*}}) over(%[[P]]) {
// CHECK: ^bb0(%{{[^:]*}}: tensor<4x8xf32>, %[[F:[^:]*]]: tensor<4x5xf32>, %[[PT:[^:]*]]: tensor<4x24xf32>):
// CHECK-NEXT: %[[FW:.*]] = attn.matmul %[[F]], %[[WF]]
// CHECK-NEXT: attn.add %[[PT]], %[[FW]]
// CHECK-NOT: attn.gru_cell
// CHECK-NOT: attn.concat
// CHECK: attn.yield
func.func @decoder(%y: tensor<4x6x3xf32>, %s0: tensor<4x8xf32>, %f0: tensor<4x5xf32>, %wi: tensor<8x24xf32>, %wh: tensor<8x24xf32>, %bi: tensor<24xf32>, %bh: tensor<24xf32>, %wf: tensor<8x5xf32>) -> tensor<4x6x8xf32> {
  %s, %f, %ss = attn.scan inits(%s0, %f0) over(%y) consts(%wi) : (tensor<4x8xf32>, tensor<4x5xf32>, tensor<4x6x3xf32>, tensor<8x24xf32>) -> (tensor<4x8xf32>, tensor<4x5xf32>, tensor<4x6x8xf32>) {
  ^bb0(%sp: tensor<4x8xf32>, %fp: tensor<4x5xf32>, %yt: tensor<4x3xf32>, %kwi: tensor<8x24xf32>):
    %in = attn.concat %yt, %fp {axis = 1 : i64} : tensor<4x3xf32>, tensor<4x5xf32>
    %st = attn.gru_cell %in, %sp, %kwi, %wh, %bi, %bh {form = #attn.gru_form<seed>} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
    %ft = attn.matmul %st, %wf : tensor<4x8xf32>, tensor<8x5xf32>
    attn.yield %st, %ft, %st : tensor<4x8xf32>, tensor<4x5xf32>, tensor<4x8xf32>
  }
  return %ss : tensor<4x6x8xf32>
}

// A backward scan: the saved states are a sequence, so recomputing h_t W_hh is one product
// over every step; the transposed weight is read as it is.
// CHECK-LABEL: func @recompute(
// CHECK-SAME: %[[HS:[^:]*]]: tensor<4x6x8xf32>, %{{[^:]*}}: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[P:.*]] = attn.matmul %[[HS]], %[[W]] {transpose_rhs = true} : tensor<4x6x8xf32>, tensor<8x8xf32>
// CHECK: attn.scan reverse inits(%{{.*}}) over(%[[P]])
// CHECK-NOT: attn.matmul
// CHECK: attn.yield
func.func @recompute(%hs: tensor<4x6x8xf32>, %g0: tensor<4x8xf32>, %wh: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %g = attn.scan reverse inits(%g0) over(%hs) consts(%wh) : (tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<8x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%gp: tensor<4x8xf32>, %ht: tensor<4x8xf32>, %w: tensor<8x8xf32>):
    %z = attn.matmul %ht, %w {transpose_rhs = true} : tensor<4x8xf32>, tensor<8x8xf32>
    %t = attn.tanh %z : tensor<4x8xf32>
    %n = attn.mul %gp, %t : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %n : tensor<4x8xf32>
  }
  return %g : tensor<4x8xf32>
}

// Left alone: a product of the carried state, a step slice times a weight that changes from
// step to step, one contracting the batch (a transposed step slice), and a constant.
// CHECK-LABEL: func @kept(
// CHECK: attn.scan
// CHECK: attn.constant
// CHECK: attn.matmul
// CHECK: attn.matmul
// CHECK: attn.matmul
// CHECK: attn.yield
func.func @kept(%x: tensor<4x6x8xf32>, %h0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x6x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x8xf32>):
    %one = attn.constant dense<1.0> : tensor<f32>
    %a = attn.matmul %hp, %hp {transpose_lhs = true} : tensor<4x8xf32>, tensor<4x8xf32>
    %b = attn.matmul %xt, %a : tensor<4x8xf32>, tensor<8x8xf32>
    %c = attn.matmul %xt, %b {transpose_lhs = true} : tensor<4x8xf32>, tensor<4x8xf32>
    %d = attn.add %c, %one : tensor<8x8xf32>, tensor<f32>
    %e = attn.slice %d {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 8>} : tensor<8x8xf32>
    attn.yield %e : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}
