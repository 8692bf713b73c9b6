// Every verifier and shape rule of the attn dialect rejects bad IR with the op and the shapes.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @param_init() {
  // expected-error @+2 {{expected ::mlir::attn::Init to be one of: zeros, ones, uniform, normal}}
  // expected-error @+1 {{failed to parse Attn_InitAttr parameter 'value'}}
  %w = attn.param "w" {init = #attn.init<gaussian>} : tensor<2x2xf32>
  return
}

// -----

// The generic form can give an enum attribute a value of another type: the verifier names it
// (the shape rules, which run first, must not trust the attribute's type).
func.func @param_init_string() {
  // expected-error @+1 {{attribute 'init' failed to satisfy constraint: a parameter initialisation}}
  %w = "attn.param"() {name = "w", init = "normal"} : () -> tensor<2x2xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error @+1 {{'attn.matmul' contracts K=8 of tensor<4x8xf32> with K=7 of tensor<7x3xf32>}}
  %c = attn.matmul %a, %b : tensor<4x8xf32>, tensor<7x3xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{'attn.matmul' needs operands of rank >= 2, got tensor<8xf32> and tensor<8x3xf32>}}
  %c = attn.matmul %a, %b : tensor<8xf32>, tensor<8x3xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+1 {{'attn.matmul' batch dimensions differ: tensor<2x4x8xf32> vs tensor<3x8x5xf32>}}
  %c = attn.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x5xf32>
  return
}

// -----

func.func @dense_k(%x: tensor<4x8xf32>, %w: tensor<6x3xf32>) {
  // expected-error @+1 {{'attn.dense' needs input [..., K] and weight [K, N], got tensor<4x8xf32> and tensor<6x3xf32>}}
  %y = attn.dense %x, %w : tensor<4x8xf32>, tensor<6x3xf32>
  return
}

// -----

func.func @dense_bias(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'attn.dense' bias must be [3] for weight tensor<8x3xf32>, got tensor<4xf32>}}
  %y = attn.dense %x, %w, %b : tensor<4x8xf32>, tensor<8x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @broadcast(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'attn.add' cannot broadcast tensor<4x8xf32> with tensor<3xf32>}}
  %c = attn.add %a, %b : tensor<4x8xf32>, tensor<3xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for 'tensor<4x8xf32>'}}
  %c = attn.softmax %a {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'attn.layer_norm' gamma and beta must be [8] for input tensor<4x8xf32>, got tensor<4xf32>}}
  %y = attn.layer_norm %x, %g, %g : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn.reduce_sum' axes [1, 1] must be distinct and within [0, 2) for tensor<4x8xf32>}}
  %y = attn.reduce_sum %x {axes = array<i64: 1, 1>} : tensor<4x8xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{cannot reshape 'tensor<4x8xf32>' (32 elements) to 'tensor<5x6xf32>'}}
  %y = attn.reshape %x : tensor<4x8xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn.transpose' perm [0, 0] is not a permutation of the 2 dims of tensor<4x8xf32>}}
  %y = attn.transpose %x {perm = array<i64: 0, 0>} : tensor<4x8xf32>
  return
}

// -----

func.func @concat(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+1 {{'attn.concat' inputs tensor<4x8xf32> and tensor<3x8xf32> differ outside axis 1}}
  %y = attn.concat %a, %b {axis = 1 : i64} : tensor<4x8xf32>, tensor<3x8xf32>
  return
}

// -----

func.func @slice(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn.slice' box offsets [2, 0] sizes [3, 8] does not fit in tensor<4x8xf32>}}
  %y = attn.slice %a {offsets = array<i64: 2, 0>, sizes = array<i64: 3, 8>} : tensor<4x8xf32>
  return
}

// -----

func.func @embedding(%t: tensor<10xf32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{'attn.embedding' table must be [V, D], got tensor<10xf32>}}
  %y = attn.embedding %t, %ids : tensor<10xf32>, tensor<4xi32>
  return
}

// -----

func.func @rnn_cell(%x: tensor<4x1xf32>, %h: tensor<4x32xf32>, %wax: tensor<2x32xf32>,
                    %waa: tensor<32x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'attn.rnn_cell' needs input [B, I], hidden [B, H], w_ax [I, H], w_aa [H, H], bias [H]; got tensor<4x1xf32>, tensor<4x32xf32>, tensor<2x32xf32>}}
  %y = attn.rnn_cell %x, %h, %wax, %waa, %b : tensor<4x1xf32>, tensor<4x32xf32>, tensor<2x32xf32>, tensor<32x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @scan_no_length(%h0: tensor<4x8xf32>) {
  // expected-error @+1 {{without sequence inputs needs a 'length'}}
  %h = attn.scan inits(%h0) over() : (tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%h: tensor<4x8xf32>):
    attn.yield %h : tensor<4x8xf32>
  }
  return
}

// -----

func.func @scan_steps(%h0: tensor<4x8xf32>, %x: tensor<4x5x2xf32>, %y: tensor<4x6x2xf32>) {
  // expected-error @+1 {{sequence inputs disagree on the number of steps: 'tensor<4x5x2xf32>' vs 'tensor<4x6x2xf32>' along axis 1}}
  %h = attn.scan inits(%h0) over(%x, %y) : (tensor<4x8xf32>, tensor<4x5x2xf32>, tensor<4x6x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%h: tensor<4x8xf32>, %a: tensor<4x2xf32>, %b: tensor<4x2xf32>):
    attn.yield %h : tensor<4x8xf32>
  }
  return
}

// -----

func.func @scan_args(%h0: tensor<4x8xf32>, %x: tensor<4x5x2xf32>) {
  // expected-error @+1 {{body takes 1 arguments, expected 1 carried + 1 step inputs}}
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x5x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%h: tensor<4x8xf32>):
    attn.yield %h : tensor<4x8xf32>
  }
  return
}

// -----

func.func @scan_step_type(%h0: tensor<4x8xf32>, %x: tensor<4x5x2xf32>) {
  // expected-error @+1 {{step input #0 of 'tensor<4x5x2xf32>' along axis 1 is 'tensor<4x2xf32>' but the body argument is 'tensor<4x5xf32>'}}
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x5x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%h: tensor<4x8xf32>, %a: tensor<4x5xf32>):
    attn.yield %h : tensor<4x8xf32>
  }
  return
}

// -----

func.func @scan_carry(%h0: tensor<4x8xf32>, %x: tensor<4x5x2xf32>) {
  // expected-error @+1 {{carried value #0 changes type: init 'tensor<4x8xf32>', yielded 'tensor<4x2xf32>', result 'tensor<4x8xf32>'}}
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x5x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%h: tensor<4x8xf32>, %a: tensor<4x2xf32>):
    attn.yield %a : tensor<4x2xf32>
  }
  return
}

// -----

func.func @scan_yield_count(%h0: tensor<4x8xf32>, %x: tensor<4x5x2xf32>) {
  // expected-error @+1 {{body yields 2 values but the op has 1 results}}
  %h = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x5x2xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%h: tensor<4x8xf32>, %a: tensor<4x2xf32>):
    attn.yield %h, %a : tensor<4x8xf32>, tensor<4x2xf32>
  }
  return
}

// -----

func.func @scan_stacked(%h0: tensor<4x8xf32>, %x: tensor<4x5x2xf32>) {
  // expected-error @+1 {{stacked output #0 should be 'tensor<4x5x2xf32>' (step output 'tensor<4x2xf32>', 5 steps on axis 1), got 'tensor<4x2xf32>'}}
  %h, %ys = attn.scan inits(%h0) over(%x) : (tensor<4x8xf32>, tensor<4x5x2xf32>) -> (tensor<4x8xf32>, tensor<4x2xf32>) {
  ^bb0(%h: tensor<4x8xf32>, %a: tensor<4x2xf32>):
    attn.yield %h, %a : tensor<4x8xf32>, tensor<4x2xf32>
  }
  return
}

// -----

func.func @broadcast(%x: tensor<3xf32>) {
  // expected-error @+1 {{cannot broadcast 'tensor<3xf32>' to 'tensor<4x5xf32>'}}
  %y = attn.broadcast %x : tensor<3xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @pad(%x: tensor<3xf32>) {
  // expected-error @+1 {{'attn.pad' low [-1] and high [0] must be 0 to 2^31, one per dim of tensor<3xf32>}}
  %y = attn.pad %x {low = array<i64: -1>, high = array<i64: 0>} : tensor<3xf32>
  return
}

// -----

// Pads and offsets near 2^63: refused, not summed into an overflow.
func.func @pad_huge(%x: tensor<3xf32>) {
  // expected-error @+1 {{'attn.pad' low [0] and high [9223372036854775807] must be 0 to 2^31, one per dim of tensor<3xf32>}}
  %y = attn.pad %x {low = array<i64: 0>, high = array<i64: 9223372036854775807>} : tensor<3xf32>
  return
}

// -----

func.func @slice_huge(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn.slice' box offsets [9223372036854775807, 0] sizes [1, 8] does not fit in tensor<4x8xf32>}}
  %y = attn.slice %a {offsets = array<i64: 9223372036854775807, 0>, sizes = array<i64: 1, 8>} : tensor<4x8xf32>
  return
}

// -----

func.func @embedding_grad(%ids: tensor<4xi32>, %g: tensor<4x3xf32>) {
  // expected-error @+1 {{needs grad of shape ids.shape + [D] and a [V, D] result, got ids 'tensor<4xi32>', grad 'tensor<4x3xf32>', result 'tensor<9x2xf32>'}}
  %t = attn.embedding_grad %ids, %g : tensor<4xi32>, tensor<4x3xf32> -> tensor<9x2xf32>
  return
}

// -----

func.func @mse(%p: tensor<4x3xf32>, %t: tensor<4x1xf32>) {
  // expected-error @+1 {{'attn.mse' prediction tensor<4x3xf32> and target tensor<4x1xf32> must have the same shape}}
  %l = attn.mse %p, %t : tensor<4x3xf32>, tensor<4x1xf32>
  return
}

// -----

func.func @cross_entropy(%x: tensor<4x3xf32>, %y: tensor<5xi32>) {
  // expected-error @+1 {{'attn.cross_entropy' needs logits [..., C] and labels [...], got tensor<4x3xf32> and tensor<5xi32>}}
  %l = attn.cross_entropy %x, %y : tensor<4x3xf32>, tensor<5xi32>
  return
}

// -----

func.func @label_count(%y: tensor<5xi32>) {
  // expected-error @+1 {{'attn.label_count' op needs classes >= 1, got 0}}
  %n = attn.label_count %y {classes = 0 : i64} : tensor<5xi32>
  return
}

// -----

func.func @sgd(%p: tensor<4xf32>, %lr: tensor<1xf32>) {
  // expected-error @+1 {{'lr' must be a rank-0 tensor, got 'tensor<1xf32>'}}
  %a, %b = attn.sgd_update %p, %p, %p, %lr : tensor<4xf32>, tensor<1xf32>
  return
}

// -----

func.func @adam(%p: tensor<4xf32>, %lr: tensor<2xf32>) {
  // expected-error @+1 {{'lr' must be a rank-0 tensor, got 'tensor<2xf32>'}}
  %a, %b, %c = attn.adam_update %p, %p, %p, %p, %lr, %lr : tensor<4xf32>, tensor<2xf32>
  return
}

// -----

func.func @scan_const(%h0: tensor<4x8xf32>, %k: tensor<3xf32>) {
  // expected-error @+1 {{const #0 is 'tensor<3xf32>' but the body argument is 'tensor<4xf32>'}}
  %h = attn.scan inits(%h0) over() consts(%k) {length = 2 : i64} : (tensor<4x8xf32>, tensor<3xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%h: tensor<4x8xf32>, %c: tensor<4xf32>):
    attn.yield %h : tensor<4x8xf32>
  }
  return
}

// -----

func.func @lstm(%x: tensor<4x2xf32>, %h: tensor<4x8xf32>, %c: tensor<4x8xf32>, %wi: tensor<2x30xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'attn.lstm_cell' needs input [B, I], hidden [B, P], cell [B, H], w_ih [I, 4H], w_hh [P, 4H], bias [4H], peephole [3, H], projection [H, P] and [P] (P = H without one); got tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x30xf32>}}
  %h1, %c1 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x30xf32>, tensor<8x32xf32>, tensor<32xf32>
  return
}

// -----

// Full peepholes are [H, 4H]; the diagonal form's [3, H] does not fit.
func.func @lstm_full_peephole(%x: tensor<4x2xf32>, %h: tensor<4x8xf32>, %c: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>, %wp: tensor<3x8xf32>) {
  // expected-error @+1 {{'attn.lstm_cell' needs input [B, I], hidden [B, P], cell [B, H], w_ih [I, 4H], w_hh [P, 4H], bias [4H], peephole [H, 4H] (full), projection [H, P] and [P] (P = H without one); got tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<3x8xf32>}}
  %h1, %c1 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b peephole(%wp : tensor<3x8xf32>) {peephole_form = #attn.peephole_form<full>} : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @gru(%x: tensor<4x2xf32>, %h: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %b: tensor<24xf32>) {
  // expected-error @+1 {{'attn.gru_cell' (minimal) needs input [B, I], hidden [B, H], w_ih [I, 2H], w_hh [H, 2H], b_ih and b_hh [2H]; got}}
  %g = attn.gru_cell %x, %h, %wi, %wh, %b, %b {form = #attn.gru_form<minimal>} : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  return
}

// -----

func.func @gru_form(%x: tensor<4x2xf32>, %h: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %b: tensor<24xf32>) {
  // expected-error @+2 {{expected ::mlir::attn::GruForm to be one of: pytorch, seed, minimal}}
  // expected-error @+1 {{failed to parse Attn_GruFormAttr parameter 'value'}}
  %g = attn.gru_cell %x, %h, %wi, %wh, %b, %b {form = #attn.gru_form<cho>} : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  return
}

// -----

func.func @lstm_sequence(%x: tensor<4x6x2xf32>, %h: tensor<4x8xf32>, %c: tensor<4x7xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'attn.lstm' needs input [B, T, I], h0 [B, P], c0 [B, H], w_ih [I, 4H], w_hh [P, 4H] and 1 bias(es) [4H] (and peepholes [3, H], a projection [H, P]; P = H without one) (and a mask [B, T, 1]); got input tensor<4x6x2xf32>, h0 tensor<4x8xf32>, c0 tensor<4x7xf32>, w_ih tensor<2x32xf32>, w_hh tensor<8x32xf32>, bias tensor<32xf32>}}
  %hs, %h1, %c1 = attn.lstm %x, %h, %c, %wi, %wh, %b : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x7xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @lstm_projection_sequence(%x: tensor<4x6x2xf32>, %h: tensor<4x3xf32>, %c: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<3x32xf32>, %b: tensor<32xf32>, %wp: tensor<8x4xf32>) {
  // expected-error @+1 {{'attn.lstm' needs input [B, T, I], h0 [B, P], c0 [B, H], w_ih [I, 4H], w_hh [P, 4H] and 1 bias(es) [4H] (and peepholes [3, H], a projection [H, P]; P = H without one) (and a mask [B, T, 1]); got input tensor<4x6x2xf32>, h0 tensor<4x3xf32>, c0 tensor<4x8xf32>, w_ih tensor<2x32xf32>, w_hh tensor<3x32xf32>, bias tensor<32xf32>, projection tensor<8x4xf32>}}
  %hs, %h1, %c1 = attn.lstm %x, %h, %c, %wi, %wh, %b projection(%wp : tensor<8x4xf32>) : tensor<4x6x2xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<3x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @gru_sequence(%x: tensor<4x2xf32>, %h: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %b: tensor<24xf32>) {
  // expected-error @+1 {{'attn.gru' needs input [B, T, I], h0 [B, H], w_ih [I, 3H], w_hh [H, 3H] and 2 bias(es) [3H] (and a mask [B, T, 1]); got input tensor<4x2xf32>, h0 tensor<4x8xf32>, w_ih tensor<2x24xf32>, w_hh tensor<8x24xf32>, bias tensor<24xf32>, bias tensor<24xf32>}}
  %hs, %h1 = attn.gru %x, %h, %wi, %wh, %b, %b : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  return
}

// -----

func.func @rnn_sequence(%x: tensor<4x6x2xf32>, %h: tensor<4x8xf32>, %wax: tensor<3x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'attn.rnn' needs input [B, T, I], h0 [B, H], w_ih [I, H], w_hh [H, H] and 1 bias(es) [H] (and a mask [B, T, 1]); got input tensor<4x6x2xf32>, h0 tensor<4x8xf32>, w_ih tensor<3x8xf32>, w_hh tensor<8x8xf32>, bias tensor<8xf32>}}
  %hs, %h1 = attn.rnn %x, %h, %wax, %waa, %b : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @rnn_grad(%x: tensor<4x6x2xf32>, %h: tensor<4x8xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %b: tensor<8xf32>, %hs: tensor<4x5x8xf32>) {
  // expected-error @+1 {{'attn.rnn_grad' needs the forward's operands, then its results and their gradients, each of types (tensor<4x6x8xf32>, tensor<4x8xf32>)}}
  %r:5 = attn.rnn_grad %x, %h, %wax, %waa, %b, %hs, %h, %hs, %h : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x5x8xf32>, tensor<4x8xf32>, tensor<4x5x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @attention_scores_kind(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>) {
  // expected-error @+2 {{expected ::mlir::attn::ScoreKind to be one of: dot, scaled_dot, general, additive, cosine}}
  // expected-error @+1 {{failed to parse Attn_ScoreKindAttr parameter 'value'}}
  %e = attn.attention_scores sine %q, %k : tensor<4x16xf32>, tensor<4x10x16xf32>
  return
}

// -----

func.func @attention_scores_kind_string(%q: tensor<4x16xf32>, %k: tensor<4x10x16xf32>) {
  // expected-error @+1 {{attribute 'kind' failed to satisfy constraint: an attention score function}}
  %e = "attn.attention_scores"(%q, %k) {kind = "dot"} : (tensor<4x16xf32>, tensor<4x10x16xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @gru_form_string(%x: tensor<4x2xf32>, %h: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %b: tensor<24xf32>) {
  // expected-error @+1 {{failed to satisfy constraint: a GRU cell's equations}}
  %g = "attn.gru_cell"(%x, %h, %wi, %wh, %b, %b) {form = "seed"} : (tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @attention_scores_shapes(%q: tensor<4x8xf32>, %k: tensor<4x10x16xf32>, %v: tensor<16xf32>) {
  // expected-error @+1 {{'attn.attention_scores' kind 'additive' needs query [B, A], keys [B, S, A], weight v [A]; got tensor<4x8xf32>, tensor<4x10x16xf32>, tensor<16xf32>}}
  %e = attn.attention_scores additive %q, %k, %v : tensor<4x8xf32>, tensor<4x10x16xf32>, tensor<16xf32>
  return
}

// -----

func.func @local_window(%p: tensor<4x2xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.local_window' needs center [B, 1] and mask [B, S]; got tensor<4x2xf32>, tensor<4x10xf32>}}
  %w, %g = attn.local_window %p, %m {window = 3 : i64} : tensor<4x2xf32>, tensor<4x10xf32>
  return
}

// -----

func.func @attention(%e: tensor<4x10xf32>, %m: tensor<4x9xf32>, %h: tensor<4x10x16xf32>) {
  // expected-error @+1 {{'attn.attention' needs scores [B, S], mask [B, S], values [B, S, D] and optionally weighting [B, S]; got tensor<4x10xf32>, tensor<4x9xf32>, tensor<4x10x16xf32>}}
  %c, %a = attn.attention %e, %m, %h : tensor<4x10xf32>, tensor<4x9xf32>, tensor<4x10x16xf32>
  return
}

// -----

func.func @fused_attention_shapes(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x8xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op needs query [B, H, T, D], keys [B, H, S, D], values [B, H, S, Dv], key_mask [B, S] and optionally center [B, H, T]; got tensor<4x1x1x16xf32>, tensor<4x1x10x8xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32>}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m : tensor<4x1x1x16xf32>, tensor<4x1x10x8xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %e = attn.reduce_sum %qi {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  }
  return
}

// -----

func.func @fused_attention_region_op(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x16xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op region 'score' holds 'attn.softmax', which a score region cannot: it takes attn's elementwise ops, reductions of a row, broadcasts, reshapes and scalar or splat constants}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.softmax %qi : tensor<16xf32>
    %e = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  }
  return
}

// -----

func.func @fused_attention_capture(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x16xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>, %w: tensor<16x16xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op captures must be scalars (tensor<f32>, tensor<1xf32>), rows tensor<16xf32> or per-head scalars tensor<1xf32>; got tensor<16x16xf32>}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m captures(%w : tensor<16x16xf32>) : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>, %wc: tensor<16x16xf32>):
    %e = attn.reduce_sum %qi {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  }
  return
}

// -----

func.func @fused_attention_region_result(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x16xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op region 'score' must yield (tensor<f32>), got (tensor<16xf32>)}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %e = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    attn.yield %e : tensor<16xf32>
  }
  return
}

// -----

func.func @fused_attention_region_arity(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x16xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op region 'score' needs block arguments (tensor<16xf32>, tensor<16xf32>, tensor<f32>, tensor<f32>), got (tensor<16xf32>, tensor<16xf32>)}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %e = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  }
  return
}

// -----

// The mask region sees positions and captures, not rows.
func.func @fused_attention_mask_arity(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x16xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op region 'mask' needs block arguments (tensor<f32>, tensor<f32>), got (tensor<16xf32>, tensor<16xf32>, tensor<f32>, tensor<f32>)}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %e = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %d = attn.sub %i, %j : tensor<f32>, tensor<f32>
    attn.yield %d : tensor<f32>
  }
  return
}

// -----

func.func @fused_attention_window(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x16xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op needs a center exactly when it has a window}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m {window = 2 : i64} : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %e = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  }
  return
}

// -----

func.func @fused_attention_results(%q: tensor<4x1x1x16xf32>, %k: tensor<4x1x10x16xf32>, %h: tensor<4x1x10x32xf32>, %m: tensor<4x10xf32>) {
  // expected-error @+1 {{'attn.fused_attention' op results must be (tensor<4x1x1x32xf32>, tensor<4x1x1xf32>, tensor<4x1x1x10xf32>), got (tensor<4x1x1x32xf32>, tensor<4x1x1xf32>)}}
  %o, %lse = attn.fused_attention %q, %k, %h, %m {with_weights} : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32> -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %e = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  }
  return
}

// -----

func.func @scaled_dot_product_attention_shapes(%q: tensor<2x4x10x8xf32>, %k: tensor<2x4x12x6xf32>) {
  // expected-error @+1 {{'attn.scaled_dot_product_attention' needs query [B, H, T, D], keys [B, H, S, D], values [B, H, S, Dv] and optionally key_mask [B, S]; got tensor<2x4x10x8xf32>, tensor<2x4x12x6xf32>, tensor<2x4x12x6xf32>}}
  %o, %w = attn.scaled_dot_product_attention %q, %k, %k : tensor<2x4x10x8xf32>, tensor<2x4x12x6xf32>, tensor<2x4x12x6xf32>
  return
}

// -----

func.func @scaled_dot_product_attention_causal(%q: tensor<2x4x10x8xf32>, %k: tensor<2x4x6x8xf32>) {
  // expected-error @+1 {{'attn.scaled_dot_product_attention' with causal needs at most as many queries as keys; got tensor<2x4x10x8xf32> and tensor<2x4x6x8xf32>}}
  %o, %w = attn.scaled_dot_product_attention %q, %k, %k {causal = true} : tensor<2x4x10x8xf32>, tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>
  return
}

// -----

func.func @multi_head_attention_heads(%x: tensor<2x10x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'attn.multi_head_attention' heads must divide the width 8, got 3}}
  %y, %a = attn.multi_head_attention %x, %x, %w, %b, %w, %b, %w, %b, %w, %b {heads = 3 : i64} : tensor<2x10x8xf32>, tensor<2x10x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @multi_head_attention_shapes(%x: tensor<2x10x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %b4: tensor<4xf32>) {
  // expected-error @+1 {{'attn.multi_head_attention' needs query [B, T, E], memory [B, S, M], w_q [E, E], b_q [E], w_k [M, E], b_k [E], w_v [M, E], b_v [E], w_o [E, E], b_o [E] and optionally key_mask [B, S]; got tensor<2x10x8xf32>, tensor<2x10x8xf32>, tensor<8x8xf32>, tensor<4xf32>}}
  %y, %a = attn.multi_head_attention %x, %x, %w, %b4, %w, %b, %w, %b, %w, %b {heads = 2 : i64} : tensor<2x10x8xf32>, tensor<2x10x8xf32>, tensor<8x8xf32>, tensor<4xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>
  return
}

// -----

// The weight's input channels (8) are not the input's (16).
func.func @conv1d_channels(%x: tensor<4x10x16xf32>, %w: tensor<3x8x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'attn.conv1d' needs input [B, T, C], weight [K, C, N], bias [N] and pads of 0 to 2^31 with T + pad_low + pad_high >= K; got tensor<4x10x16xf32>, tensor<3x8x32xf32>, tensor<32xf32>, pad_low 2, pad_high 0}}
  %y = attn.conv1d %x, %w, %b {pad_low = 2 : i64} : tensor<4x10x16xf32>, tensor<3x8x32xf32>, tensor<32xf32>
  return
}

// -----

// Two steps without padding are too few for three taps.
func.func @conv1d_short(%x: tensor<4x2x16xf32>, %w: tensor<3x16x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'attn.conv1d' needs input [B, T, C], weight [K, C, N], bias [N] and pads of 0 to 2^31 with T + pad_low + pad_high >= K; got tensor<4x2x16xf32>, tensor<3x16x32xf32>, tensor<32xf32>, pad_low 0, pad_high 0}}
  %y = attn.conv1d %x, %w, %b : tensor<4x2x16xf32>, tensor<3x16x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @glu_odd(%x: tensor<4x7xf32>) {
  // expected-error @+1 {{'attn.glu' halves the last dimension, which must be even; got tensor<4x7xf32>}}
  %y = attn.glu %x : tensor<4x7xf32>
  return
}

// -----

// int8 is for a product with one weight: a batched right-hand side has no int8 kernel.
func.func @matmul_int8_batched(%a: tensor<2x3x8xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'attn.matmul' op has no kernel computing in int8}}
  %c = attn.matmul %a, %b {precision = #attn.precision<int8>} : tensor<2x3x8xf32>, tensor<2x8x4xf32>
  return
}

// -----

// bf16 factors are for a bf16 product (attn-round-bf16-factors makes them); an f32 product
// of them would sum rounded values while claiming f32.
func.func @dense_bf16_factors_in_f32(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>) {
  // expected-error @+1 {{'attn.dense' op takes the bf16 operand 'tensor<4x8xbf16>' but computes in f32 (bf16 factors need precision = bf16)}}
  %y = attn.dense %x, %w : tensor<4x8xbf16>, tensor<8x16xbf16>
  return
}
