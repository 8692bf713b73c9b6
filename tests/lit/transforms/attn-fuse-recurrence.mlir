// RUN: attn-opt %s -attn-fuse-recurrence | FileCheck %s
// RUN: attn-opt %s -attn-fuse-recurrence="remarks=1" -verify-diagnostics -o /dev/null

// What the importer makes of a vanilla RNN layer: final state and every step's output.
// CHECK-LABEL: func @rnn(
// CHECK-SAME: %[[X:.*]]: tensor<4x6x2xf32>, %[[H0:.*]]: tensor<4x8xf32>, %[[WAX:.*]]: tensor<2x8xf32>, %[[WAA:.*]]: tensor<8x8xf32>, %[[B:.*]]: tensor<8xf32>
// CHECK: %[[HS:.*]], %[[H:.*]] = attn.rnn %[[X]], %[[H0]], %[[WAX]], %[[WAA]], %[[B]] :
// CHECK-NOT: attn.scan
// CHECK: return %[[H]], %[[HS]]
func.func @rnn(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x6x8xf32>) {
  %h, %hs = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    attn.yield %ht, %ht : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %h, %hs : tensor<4x8xf32>, tensor<4x6x8xf32>
}

// PyTorch's GRU, reversed, final state only; weights passed as consts.
// CHECK-LABEL: func @gru_reverse(
// CHECK-SAME: %[[X:.*]]: tensor<4x6x2xf32>, %[[H0:.*]]: tensor<4x8xf32>, %[[WI:.*]]: tensor<2x24xf32>, %[[WH:.*]]: tensor<8x24xf32>, %[[BI:.*]]: tensor<24xf32>, %[[BH:.*]]: tensor<24xf32>
// CHECK: %{{.*}}, %[[H:.*]] = attn.gru %[[X]], %[[H0]], %[[WI]], %[[WH]], %[[BI]], %[[BH]] {reverse} :
// CHECK: return %[[H]]
func.func @gru_reverse(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %bi: tensor<24xf32>, %bh: tensor<24xf32>) -> tensor<4x8xf32> {
  %h = attn.scan reverse inits(%h0) over(%x) consts(%wi, %wh) : (tensor<4x8xf32>, tensor<4x6x2xf32>, tensor<2x24xf32>, tensor<8x24xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>, %kwi: tensor<2x24xf32>, %kwh: tensor<8x24xf32>):
    %ht = attn.gru_cell %xt, %hp, %kwi, %kwh, %bi, %bh : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
    attn.yield %ht : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// An LSTM: both states carried, the hidden state stacked.
// CHECK-LABEL: func @lstm(
// CHECK: %[[HS:.*]], %[[H:.*]], %[[C:.*]] = attn.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK: return %[[H]], %[[C]], %[[HS]]
func.func @lstm(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>) {
  %h, %c, %hs = attn.scan inits(%h0, %c0) over(%x) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %cp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    attn.yield %ht, %ct, %ht : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %h, %c, %hs : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>
}

// An LSTM whose carries are in the other order (c, h): mapped by position.
// CHECK-LABEL: func @lstm_swapped(
// CHECK-SAME: %{{.*}}: tensor<4x6x2xf32>, %[[C0:.*]]: tensor<4x8xf32>, %[[H0:.*]]: tensor<4x8xf32>
// CHECK: %{{.*}}, %[[H:.*]], %[[C:.*]] = attn.lstm %{{.*}}, %[[H0]], %[[C0]],
// CHECK: return %[[C]], %[[H]]
func.func @lstm_swapped(%x: tensor<4x6x2xf32>, %c0: tensor<4x8xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c, %h = attn.scan inits(%c0, %h0) over(%x) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%cp: tensor<4x8xf32>, %hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    attn.yield %ct, %ht : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %c, %h : tensor<4x8xf32>, tensor<4x8xf32>
}

// The frontends' masked layer (padded batches): the state is blended, s + m (cell - s), under
// a [B, 1] step of the mask [B, T, 1], which becomes the sequence op's mask.
// CHECK-LABEL: func @gru_masked(
// CHECK-SAME: %[[X:.*]]: tensor<4x6x2xf32>, %[[M:.*]]: tensor<4x6x1xf32>
// CHECK: %[[HS:.*]], %[[H:.*]] = attn.gru %[[X]], {{.*}} mask(%[[M]] : tensor<4x6x1xf32>) :
// CHECK-NOT: attn.scan
// CHECK: return %[[H]], %[[HS]]
func.func @gru_masked(%x: tensor<4x6x2xf32>, %m: tensor<4x6x1xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %bi: tensor<24xf32>, %bh: tensor<24xf32>) -> (tensor<4x8xf32>, tensor<4x6x8xf32>) {
  %h, %hs = attn.scan inits(%h0) over(%x, %m) : (tensor<4x8xf32>, tensor<4x6x2xf32>, tensor<4x6x1xf32>) -> (tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>, %mt: tensor<4x1xf32>):
    %n = attn.gru_cell %xt, %hp, %wi, %wh, %bi, %bh : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
    %d = attn.sub %n, %hp : tensor<4x8xf32>, tensor<4x8xf32>
    %md = attn.mul %mt, %d : tensor<4x1xf32>, tensor<4x8xf32>
    %ht = attn.add %hp, %md : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %ht, %ht : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %h, %hs : tensor<4x8xf32>, tensor<4x6x8xf32>
}

// Masked LSTM, reversed, the mask scanned first and the blends written the other way round:
// both states are held.
// CHECK-LABEL: func @lstm_masked_reverse(
// CHECK: attn.lstm {{.*}} mask(%{{.*}} : tensor<4x6x1xf32>) {reverse} :
// CHECK-NOT: attn.scan
func.func @lstm_masked_reverse(%x: tensor<4x6x2xf32>, %m: tensor<4x6x1xf32>, %h0: tensor<4x8xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<4x6x8xf32> {
  %h, %c, %hs = attn.scan reverse inits(%h0, %c0) over(%m, %x) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x1xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %cp: tensor<4x8xf32>, %mt: tensor<4x1xf32>, %xt: tensor<4x2xf32>):
    %hn, %cn = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    %dh = attn.sub %hn, %hp : tensor<4x8xf32>, tensor<4x8xf32>
    %mh = attn.mul %dh, %mt : tensor<4x8xf32>, tensor<4x1xf32>
    %ht = attn.add %mh, %hp : tensor<4x8xf32>, tensor<4x8xf32>
    %dc = attn.sub %cn, %cp : tensor<4x8xf32>, tensor<4x8xf32>
    %mc = attn.mul %mt, %dc : tensor<4x1xf32>, tensor<4x8xf32>
    %ct = attn.add %cp, %mc : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %ht, %ct, %ht : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %hs : tensor<4x6x8xf32>
}

//===- what stays a scan ----------------------------------------------------------------===//

// The seed's GRU form has no oneDNN primitive.
// CHECK-LABEL: func @gru_seed(
// CHECK: attn.scan
// CHECK-NOT: attn.gru {{.*}}:
func.func @gru_seed(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %b: tensor<24xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused: oneDNN has no GRU of form 'seed'}}
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht = attn.gru_cell %xt, %hp, %wi, %wh, %b, %b {form = #attn.gru_form<seed>} : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
    attn.yield %ht : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// A decoder-like step: attention over a memory inside the body.
// CHECK-LABEL: func @attention_inside(
// CHECK: attn.scan
// CHECK: attn.softmax
// CHECK-NOT: attn.rnn {{.*}}:
func.func @attention_inside(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %mem: tensor<4x5x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused: its body is not a single cell}}
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %q = attn.reshape %hp : tensor<4x8xf32> -> tensor<4x1x8xf32>
    %s = attn.matmul %q, %mem {transpose_rhs = true} : tensor<4x1x8xf32>, tensor<4x5x8xf32>
    %p = attn.softmax %s {axis = 2 : i64} : tensor<4x1x5xf32>
    %ctx = attn.matmul %p, %mem : tensor<4x1x5xf32>, tensor<4x5x8xf32>
    %c2 = attn.reshape %ctx : tensor<4x1x8xf32> -> tensor<4x8xf32>
    %ht = attn.rnn_cell %xt, %c2, %wax, %waa, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    attn.yield %ht : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// One extra op (a mask) after the cell.
// CHECK-LABEL: func @masked(
// CHECK: attn.scan
func.func @masked(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %m: tensor<4x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused: its body is not a single cell}}
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    %mt = attn.mul %ht, %m : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %mt : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// Peepholes are oneDNN's peephole LSTM (same gates i, f, o and formula).
// CHECK-LABEL: func @lstm_peephole(
// CHECK-SAME: %[[WP:[^:]*]]: tensor<3x8xf32>
// CHECK: attn.lstm {{.*}} peephole(%[[WP]] : tensor<3x8xf32>) :
// CHECK-NOT: attn.scan
func.func @lstm_peephole(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>, %wp: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %h, %c = attn.scan inits(%h0, %h0) over(%x) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %cp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b peephole(%wp : tensor<3x8xf32>) : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    attn.yield %ht, %ct : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// A projection with a bias: oneDNN's LSTMP (no bias) on h' = h - b_proj. The gate bias
// gains b_proj w_hh, h0 loses b_proj, and the outputs and final h get it back.
// CHECK-LABEL: func @lstm_projection(
// CHECK-SAME: %[[H0:[^:]*]]: tensor<4x5xf32>, %[[C0:[^:]*]]: tensor<4x8xf32>, %{{[^:]*}}: tensor<2x32xf32>, %[[WH:[^:]*]]: tensor<5x32xf32>, %[[B:[^:]*]]: tensor<32xf32>, %[[PW:[^:]*]]: tensor<8x5xf32>, %[[PB:[^:]*]]: tensor<5xf32>
// CHECK-NOT: attn.scan
// CHECK: %[[ROW:.*]] = attn.reshape %[[PB]] : tensor<5xf32> -> tensor<1x5xf32>
// CHECK: %[[SHIFT:.*]] = attn.matmul %[[ROW]], %[[WH]]
// CHECK: %[[FLAT:.*]] = attn.reshape %[[SHIFT]] : tensor<1x32xf32> -> tensor<32xf32>
// CHECK: %[[BIAS:.*]] = attn.add %[[B]], %[[FLAT]]
// CHECK: %[[START:.*]] = attn.sub %[[H0]], %[[PB]]
// CHECK: %{{.*}}, %[[HN:.*]], %{{.*}} = attn.lstm %{{.*}}, %[[START]], %[[C0]], %{{.*}}, %[[WH]], %[[BIAS]] projection(%[[PW]] : tensor<8x5xf32>)
// CHECK: %[[H:.*]] = attn.add %[[HN]], %[[PB]]
// CHECK: return %[[H]]
func.func @lstm_projection(%x: tensor<4x6x2xf32>, %h0: tensor<4x5xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<5x32xf32>, %b: tensor<32xf32>, %pw: tensor<8x5xf32>, %pb: tensor<5xf32>) -> tensor<4x5xf32> {
  %h, %c = attn.scan inits(%h0, %c0) over(%x) : (tensor<4x5xf32>, tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x5xf32>, tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x5xf32>, %cp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b projection(%pw, %pb : tensor<8x5xf32>, tensor<5xf32>) : tensor<4x2xf32>, tensor<4x5xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<5x32xf32>, tensor<32xf32>
    attn.yield %ht, %ct : tensor<4x5xf32>, tensor<4x8xf32>
  }
  return %h : tensor<4x5xf32>
}

// The seed's full peepholes (matrices, not oneDNN's per-unit weights) have no oneDNN form.
// CHECK-LABEL: func @lstm_full_peephole(
// CHECK: attn.scan
// CHECK: attn.lstm_cell
func.func @lstm_full_peephole(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>, %wp: tensor<8x32xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused: oneDNN's LSTM has diagonal peepholes, not full matrices}}
  %h, %c = attn.scan inits(%h0, %h0) over(%x) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %cp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b peephole(%wp : tensor<8x32xf32>) {peephole_form = #attn.peephole_form<full>} : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    attn.yield %ht, %ct : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// A per-step output that is not the hidden state (oneDNN outputs only h per step).
// CHECK-LABEL: func @cell_per_step(
// CHECK: attn.scan
func.func @cell_per_step(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<4x6x8xf32> {
  // expected-remark @+1 {{not fused: a per-step output is not the cell's new hidden state}}
  %h, %c, %cs = attn.scan inits(%h0, %h0) over(%x) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %cp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %wi, %wh, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    attn.yield %ht, %ct, %ct : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %cs : tensor<4x6x8xf32>
}

// The state fed back is not the cell's new state.
// CHECK-LABEL: func @not_fed_back(
// CHECK: attn.scan
func.func @not_fed_back(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x6x8xf32> {
  // expected-remark @+1 {{not fused: the cell's new state is not what it carries to the next step}}
  %h, %hs = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    attn.yield %hp, %ht : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %hs : tensor<4x6x8xf32>
}

// A second sequence besides the input that is not a mask blending the state.
// CHECK-LABEL: func @two_sequences(
// CHECK: attn.scan
func.func @two_sequences(%x: tensor<4x6x2xf32>, %bs: tensor<4x6x8xf32>, %h0: tensor<4x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused: its body is not a single cell and the mask's blend of its state}}
  %h = attn.scan inits(%h0) over(%x, %bs) : (tensor<4x8xf32>, tensor<4x6x2xf32>, tensor<4x6x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>, %bt: tensor<4x8xf32>):
    %ht = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    attn.yield %ht : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// No sequence at all: a loop of `length` steps.
// CHECK-LABEL: func @length_only(
// CHECK: attn.scan
func.func @length_only(%h0: tensor<4x8xf32>, %wax: tensor<8x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused: it does not read one sequence (and a mask)}}
  %h = attn.scan inits(%h0) over() {length = 3 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>):
    %ht = attn.rnn_cell %hp, %hp, %wax, %waa, %b : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    attn.yield %ht : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// A scan attn-autodiff has prepared (it saves the carried values per step) is left alone.
// CHECK-LABEL: func @saved_carries(
// CHECK: attn.scan
func.func @saved_carries(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x6x8xf32> {
  // expected-remark @+1 {{not fused: it saves its carried values for a gradient}}
  %h, %saved = attn.scan inits(%h0) over(%x) {attn.saved_carries} : (tensor<4x8xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>, tensor<4x6x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>):
    %ht = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    attn.yield %ht, %hp : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %saved : tensor<4x6x8xf32>
}

// A blend that is not the mask's hold: s + m (s - cell) is not a masked layer.
// CHECK-LABEL: func @masked_wrong_blend(
// CHECK: attn.scan
func.func @masked_wrong_blend(%x: tensor<4x6x2xf32>, %m: tensor<4x6x1xf32>, %h0: tensor<4x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not fused: its state is not s + m (cell - s) under the mask it scans}}
  %h = attn.scan inits(%h0) over(%x, %m) : (tensor<4x8xf32>, tensor<4x6x2xf32>, tensor<4x6x1xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>, %mt: tensor<4x1xf32>):
    %n = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    %d = attn.sub %hp, %n : tensor<4x8xf32>, tensor<4x8xf32>
    %md = attn.mul %mt, %d : tensor<4x1xf32>, tensor<4x8xf32>
    %ht = attn.add %hp, %md : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %ht : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}
