// Gradient-check cases: one function per differentiable attn op, named after the op
// (`@add` for attn.add; more cases of an op are named `@<op>_<variant>`). Float inputs are
// `attn.param`s (initialised U(-1, 1) unless the case says otherwise); token ids and labels
// are constants. gradcheck-test.cpp turns each function into loss = sum_i <result_i, W_i>
// with random W_i, differentiates it with attn-autodiff and compares every parameter's
// gradient with central finite differences. A differentiable op without a case here fails
// the suite.

func.func @add() -> tensor<3x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<4xf32>
  %y = attn.add %a, %b : tensor<3x4xf32>, tensor<4xf32>
  return %y : tensor<3x4xf32>
}

func.func @sub() -> tensor<3x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x1xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<3x4xf32>
  %y = attn.sub %a, %b : tensor<3x1xf32>, tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

func.func @mul() -> tensor<2x3x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<3x1xf32>
  %y = attn.mul %a, %b : tensor<2x3x4xf32>, tensor<3x1xf32>
  return %y : tensor<2x3x4xf32>
}

func.func @div() -> tensor<3x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<4xf32>
  %two = attn.constant dense<2.0> : tensor<f32>
  %d = attn.add %b, %two : tensor<4xf32>, tensor<f32>
  %y = attn.div %a, %d : tensor<3x4xf32>, tensor<4xf32>
  return %y : tensor<3x4xf32>
}

func.func @maximum() -> tensor<3x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<4xf32>
  %y = attn.maximum %a, %b : tensor<3x4xf32>, tensor<4xf32>
  return %y : tensor<3x4xf32>
}

// eq passes no gradient: x * (x == x) has the gradient of x alone.
func.func @eq() -> tensor<3x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x4xf32>
  %e = attn.eq %a, %a : tensor<3x4xf32>, tensor<3x4xf32>
  %y = attn.mul %a, %e : tensor<3x4xf32>, tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

func.func @neg() -> tensor<5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<5xf32>
  %y = attn.neg %a : tensor<5xf32>
  return %y : tensor<5xf32>
}

func.func @tanh() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 2.0 : f32} : tensor<2x5xf32>
  %y = attn.tanh %a : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @sigmoid() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 2.0 : f32} : tensor<2x5xf32>
  %y = attn.sigmoid %a : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @relu() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x5xf32>
  %y = attn.relu %a : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @exp() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x5xf32>
  %y = attn.exp %a : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @log() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x5xf32>
  %two = attn.constant dense<2.0> : tensor<f32>
  %p = attn.add %a, %two : tensor<2x5xf32>, tensor<f32>
  %y = attn.log %p : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @sqrt() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x5xf32>
  %two = attn.constant dense<2.0> : tensor<f32>
  %p = attn.add %a, %two : tensor<2x5xf32>, tensor<f32>
  %y = attn.sqrt %p : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @erf() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 1.5 : f32} : tensor<2x5xf32>
  %y = attn.erf %a : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @gelu() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 2.0 : f32} : tensor<2x5xf32>
  %y = attn.gelu %a : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// step passes no gradient.
func.func @step() -> tensor<2x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x5xf32>
  %s = attn.step %a : tensor<2x5xf32>
  %y = attn.mul %a, %s : tensor<2x5xf32>, tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

func.func @matmul() -> tensor<3x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<4x5xf32>
  %y = attn.matmul %a, %b : tensor<3x4xf32>, tensor<4x5xf32>
  return %y : tensor<3x5xf32>
}

func.func @matmul_transposed() -> tensor<3x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<4x3xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<5x4xf32>
  %y = attn.matmul %a, %b {transpose_lhs = true, transpose_rhs = true} : tensor<4x3xf32>, tensor<5x4xf32>
  return %y : tensor<3x5xf32>
}

// A shared right-hand side sums its gradient over the batch.
func.func @matmul_batched() -> tensor<2x3x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<5x4xf32>
  %y = attn.matmul %a, %b {transpose_rhs = true} : tensor<2x3x4xf32>, tensor<5x4xf32>
  return %y : tensor<2x3x5xf32>
}

// ... also without the transpose (its gradient is one GEMM over all rows).
func.func @matmul_shared_rhs() -> tensor<2x3x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<4x5xf32>
  %y = attn.matmul %a, %b : tensor<2x3x4xf32>, tensor<4x5xf32>
  return %y : tensor<2x3x5xf32>
}

// A contraction of size 1 (an outer product); its gradients are too.
func.func @matmul_outer() -> tensor<2x3x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x1xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<2x1x5xf32>
  %y = attn.matmul %a, %b : tensor<2x3x1xf32>, tensor<2x1x5xf32>
  return %y : tensor<2x3x5xf32>
}

func.func @dense() -> tensor<2x3x5xf32> {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %w = attn.param "w" {scale = 1.0 : f32} : tensor<4x5xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<5xf32>
  %y = attn.dense %x, %w, %b : tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>
  return %y : tensor<2x3x5xf32>
}

func.func @softmax() -> tensor<3x6xf32> {
  %a = attn.param "a" {scale = 2.0 : f32} : tensor<3x6xf32>
  %y = attn.softmax %a : tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

func.func @softmax_axis0() -> tensor<3x6xf32> {
  %a = attn.param "a" {scale = 2.0 : f32} : tensor<3x6xf32>
  %y = attn.softmax %a {axis = 0 : i64} : tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

func.func @layer_norm() -> tensor<3x6xf32> {
  %x = attn.param "x" {scale = 2.0 : f32} : tensor<3x6xf32>
  %g = attn.param "g" {scale = 1.0 : f32} : tensor<6xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<6xf32>
  %y = attn.layer_norm %x, %g, %b : tensor<3x6xf32>, tensor<6xf32>, tensor<6xf32>
  return %y : tensor<3x6xf32>
}

func.func @reduce_sum() -> tensor<2x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %y = attn.reduce_sum %a {axes = array<i64: 1>} : tensor<2x3x4xf32>
  return %y : tensor<2x4xf32>
}

func.func @reduce_mean() -> tensor<2x1x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %y = attn.reduce_mean %a {axes = array<i64: 1>, keepdims = true} : tensor<2x3x4xf32>
  return %y : tensor<2x1x4xf32>
}

func.func @reduce_max() -> tensor<4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %y = attn.reduce_max %a {axes = array<i64: 0, 1>} : tensor<2x3x4xf32>
  return %y : tensor<4xf32>
}

func.func @reshape() -> tensor<4x3xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x6xf32>
  %y = attn.reshape %a : tensor<2x6xf32> -> tensor<4x3xf32>
  %z = attn.mul %y, %y : tensor<4x3xf32>, tensor<4x3xf32>
  return %z : tensor<4x3xf32>
}

func.func @transpose() -> tensor<4x2x3xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %y = attn.transpose %a {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32>
  return %y : tensor<4x2x3xf32>
}

func.func @concat() -> tensor<2x7xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<2x4xf32>
  %y = attn.concat %a, %b {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x4xf32>
  %z = attn.tanh %y : tensor<2x7xf32>
  return %z : tensor<2x7xf32>
}

func.func @slice() -> tensor<2x2xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x5xf32>
  %y = attn.slice %a {offsets = array<i64: 1, 2>, sizes = array<i64: 2, 2>} : tensor<3x5xf32>
  return %y : tensor<2x2xf32>
}

func.func @pad() -> tensor<4x5xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<2x3xf32>
  %y = attn.pad %a {low = array<i64: 1, 0>, high = array<i64: 1, 2>} : tensor<2x3xf32>
  return %y : tensor<4x5xf32>
}

func.func @broadcast() -> tensor<2x3x4xf32> {
  %a = attn.param "a" {scale = 1.0 : f32} : tensor<3x1xf32>
  %y = attn.broadcast %a : tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// Repeated and out-of-range ids: the table gradient accumulates, skips what was not read.
func.func @embedding() -> tensor<2x3x4xf32> {
  %t = attn.param "t" {scale = 1.0 : f32} : tensor<5x4xf32>
  %ids = attn.constant dense<[[0, 3, 3], [4, 1, 9]]> : tensor<2x3xi32>
  %y = attn.embedding %t, %ids : tensor<5x4xf32>, tensor<2x3xi32>
  return %y : tensor<2x3x4xf32>
}

func.func @rnn_cell() -> tensor<3x4xf32> {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x2xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<3x4xf32>
  %wax = attn.param "w_ax" {scale = 1.0 : f32} : tensor<2x4xf32>
  %waa = attn.param "w_aa" {scale = 1.0 : f32} : tensor<4x4xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<4xf32>
  %y = attn.rnn_cell %x, %h, %wax, %waa, %b : tensor<3x2xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>
  return %y : tensor<3x4xf32>
}

func.func @lstm_cell() -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x2xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<3x4xf32>
  %c = attn.param "c" {scale = 1.0 : f32} : tensor<3x4xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x16xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<4x16xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<16xf32>
  %h1, %c1 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b : tensor<3x2xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x16xf32>, tensor<4x16xf32>, tensor<16xf32>
  return %h1, %c1 : tensor<3x4xf32>, tensor<3x4xf32>
}

// Peepholes and a projection (hidden 4 projected to 3) together.
func.func @lstm_cell_peephole_projection() -> (tensor<3x3xf32>, tensor<3x4xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x2xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<3x3xf32>
  %c = attn.param "c" {scale = 1.0 : f32} : tensor<3x4xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x16xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x16xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<16xf32>
  %wp = attn.param "w_peephole" {scale = 1.0 : f32} : tensor<3x4xf32>
  %pw = attn.param "w_proj" {scale = 1.0 : f32} : tensor<4x3xf32>
  %pb = attn.param "b_proj" {scale = 1.0 : f32} : tensor<3xf32>
  %h1, %c1 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b peephole(%wp : tensor<3x4xf32>) projection(%pw, %pb : tensor<4x3xf32>, tensor<3xf32>) : tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<2x16xf32>, tensor<3x16xf32>, tensor<16xf32>
  return %h1, %c1 : tensor<3x3xf32>, tensor<3x4xf32>
}

// The seed's full peepholes (w_peephole [H, 4H]) with a projection.
func.func @lstm_cell_full_peephole_projection() -> (tensor<3x3xf32>, tensor<3x4xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x2xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<3x3xf32>
  %c = attn.param "c" {scale = 1.0 : f32} : tensor<3x4xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x16xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x16xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<16xf32>
  %wp = attn.param "w_peephole" {scale = 1.0 : f32} : tensor<4x16xf32>
  %pw = attn.param "w_proj" {scale = 1.0 : f32} : tensor<4x3xf32>
  %pb = attn.param "b_proj" {scale = 1.0 : f32} : tensor<3xf32>
  %h1, %c1 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b peephole(%wp : tensor<4x16xf32>) projection(%pw, %pb : tensor<4x3xf32>, tensor<3xf32>) {peephole_form = #attn.peephole_form<full>} : tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<2x16xf32>, tensor<3x16xf32>, tensor<16xf32>
  return %h1, %c1 : tensor<3x3xf32>, tensor<3x4xf32>
}

func.func @gru_cell() -> tensor<3x4xf32> {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x2xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<3x4xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<4x12xf32>
  %bi = attn.param "b_ih" {scale = 1.0 : f32} : tensor<12xf32>
  %bh = attn.param "b_hh" {scale = 1.0 : f32} : tensor<12xf32>
  %y = attn.gru_cell %x, %h, %wi, %wh, %bi, %bh : tensor<3x2xf32>, tensor<3x4xf32>, tensor<2x12xf32>, tensor<4x12xf32>, tensor<12xf32>, tensor<12xf32>
  return %y : tensor<3x4xf32>
}

func.func @gru_cell_seed() -> tensor<3x4xf32> {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x2xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<3x4xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<4x12xf32>
  %bi = attn.param "b_ih" {scale = 1.0 : f32} : tensor<12xf32>
  %bh = attn.param "b_hh" {scale = 1.0 : f32} : tensor<12xf32>
  %y = attn.gru_cell %x, %h, %wi, %wh, %bi, %bh {form = #attn.gru_form<seed>} : tensor<3x2xf32>, tensor<3x4xf32>, tensor<2x12xf32>, tensor<4x12xf32>, tensor<12xf32>, tensor<12xf32>
  return %y : tensor<3x4xf32>
}

func.func @gru_cell_minimal() -> tensor<3x4xf32> {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x2xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<3x4xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x8xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<4x8xf32>
  %bi = attn.param "b_ih" {scale = 1.0 : f32} : tensor<8xf32>
  %bh = attn.param "b_hh" {scale = 1.0 : f32} : tensor<8xf32>
  %y = attn.gru_cell %x, %h, %wi, %wh, %bi, %bh {form = #attn.gru_form<minimal>} : tensor<3x2xf32>, tensor<3x4xf32>, tensor<2x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %y : tensor<3x4xf32>
}

// Back-propagation through time: gradients of the initial state, the sequence, and the
// weights the body captures, through both the final state and the per-step outputs.
func.func @scan() -> (tensor<2x3xf32>, tensor<2x4x3xf32>) {
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x4x2xf32>
  %wax = attn.param "w_ax" {scale = 1.0 : f32} : tensor<2x3xf32>
  %waa = attn.param "w_aa" {scale = 1.0 : f32} : tensor<3x3xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<3xf32>
  %h, %hs = attn.scan inits(%h0) over(%x) : (tensor<2x3xf32>, tensor<2x4x2xf32>) -> (tensor<2x3xf32>, tensor<2x4x3xf32>) {
  ^bb0(%hp: tensor<2x3xf32>, %xt: tensor<2x2xf32>):
    %hn = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<3xf32>
    %o = attn.sigmoid %hn : tensor<2x3xf32>
    attn.yield %hn, %o : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %h, %hs : tensor<2x3xf32>, tensor<2x4x3xf32>
}

// A reversed scan with two carries and no sequence input, and a nested scan inside.
func.func @scan_reverse_nested() -> tensor<2x3xf32> {
  %a0 = attn.param "a0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %c0 = attn.param "c0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %w = attn.param "w" {scale = 1.0 : f32} : tensor<3x3xf32>
  %xs = attn.param "xs" {scale = 1.0 : f32} : tensor<2x2x3xf32>
  %a, %c = attn.scan reverse inits(%a0, %c0) over() {length = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  ^bb0(%ap: tensor<2x3xf32>, %cp: tensor<2x3xf32>):
    %m = attn.matmul %ap, %w : tensor<2x3xf32>, tensor<3x3xf32>
    %inner = attn.scan inits(%m) over(%xs) : (tensor<2x3xf32>, tensor<2x2x3xf32>) -> (tensor<2x3xf32>) {
    ^bb0(%s: tensor<2x3xf32>, %x: tensor<2x3xf32>):
      %sx = attn.mul %s, %x : tensor<2x3xf32>, tensor<2x3xf32>
      %t = attn.tanh %sx : tensor<2x3xf32>
      attn.yield %t : tensor<2x3xf32>
    }
    %an = attn.add %inner, %cp : tensor<2x3xf32>, tensor<2x3xf32>
    %cn = attn.tanh %ap : tensor<2x3xf32>
    attn.yield %an, %cn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %a : tensor<2x3xf32>
}

func.func @mse() -> tensor<f32> {
  %p = attn.param "p" {scale = 1.0 : f32} : tensor<4x2xf32>
  %t = attn.param "t" {scale = 1.0 : f32} : tensor<4x2xf32>
  %l = attn.mse %p, %t : tensor<4x2xf32>, tensor<4x2xf32>
  return %l : tensor<f32>
}

// Label 3 is ignored, -1 and 7 are out of range: three of six positions count.
func.func @cross_entropy() -> tensor<f32> {
  %x = attn.param "x" {scale = 2.0 : f32} : tensor<2x3x5xf32>
  %labels = attn.constant dense<[[0, 3, 4], [-1, 2, 7]]> : tensor<2x3xi32>
  %l = attn.cross_entropy %x, %labels {ignore_index = 3 : i64, label_smoothing = 0.1 : f32} : tensor<2x3x5xf32>, tensor<2x3xi32>
  return %l : tensor<f32>
}

// Sequence ops (oneDNN's RNN primitives forward and backward): gradients of the sequence, the
// initial states and the weights, through every step's output and the final states.
func.func @rnn() -> (tensor<2x4x3xf32>, tensor<2x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %wax = attn.param "w_ax" {scale = 1.0 : f32} : tensor<2x3xf32>
  %waa = attn.param "w_aa" {scale = 1.0 : f32} : tensor<3x3xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<3xf32>
  %hs, %h = attn.rnn %x, %h0, %wax, %waa, %b : tensor<2x4x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<3xf32>
  return %hs, %h : tensor<2x4x3xf32>, tensor<2x3xf32>
}

// Reversed, and PyTorch's gate order (r, z, n) mapped onto oneDNN's linear-before-reset GRU.
func.func @gru() -> (tensor<2x4x3xf32>, tensor<2x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x9xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x9xf32>
  %bi = attn.param "b_ih" {scale = 1.0 : f32} : tensor<9xf32>
  %bh = attn.param "b_hh" {scale = 1.0 : f32} : tensor<9xf32>
  %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh {reverse} : tensor<2x4x2xf32>, tensor<2x3xf32>, tensor<2x9xf32>, tensor<3x9xf32>, tensor<9xf32>, tensor<9xf32>
  return %hs, %h : tensor<2x4x3xf32>, tensor<2x3xf32>
}

func.func @lstm() -> (tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %c0 = attn.param "c0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x12xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<12xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b : tensor<2x4x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x12xf32>, tensor<3x12xf32>, tensor<12xf32>
  return %hs, %h, %c : tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// With peepholes (oneDNN's peephole LSTM), reversed.
func.func @lstm_peephole() -> (tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %c0 = attn.param "c0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x12xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<12xf32>
  %wp = attn.param "w_peephole" {scale = 1.0 : f32} : tensor<3x3xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b peephole(%wp : tensor<3x3xf32>) {reverse} : tensor<2x4x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x12xf32>, tensor<3x12xf32>, tensor<12xf32>
  return %hs, %h, %c : tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// Masked layers (padded batches): rows of 2 steps then padding, a row with a gap, a row with
// no step at all (its outputs and final state are h0, c0). Reversed, the padding comes first,
// so its outputs' gradients reach h0.
func.func @gru_masked() -> (tensor<3x4x3xf32>, tensor<3x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x9xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x9xf32>
  %bi = attn.param "b_ih" {scale = 1.0 : f32} : tensor<9xf32>
  %bh = attn.param "b_hh" {scale = 1.0 : f32} : tensor<9xf32>
  %m = attn.constant dense<[[[1.0], [1.0], [0.0], [0.0]], [[1.0], [0.0], [1.0], [1.0]], [[0.0], [0.0], [0.0], [0.0]]]> : tensor<3x4x1xf32>
  %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh mask(%m : tensor<3x4x1xf32>) {reverse} : tensor<3x4x2xf32>, tensor<3x3xf32>, tensor<2x9xf32>, tensor<3x9xf32>, tensor<9xf32>, tensor<9xf32>
  return %hs, %h : tensor<3x4x3xf32>, tensor<3x3xf32>
}

func.func @lstm_masked() -> (tensor<3x4x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %c0 = attn.param "c0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x12xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<12xf32>
  %wp = attn.param "w_peephole" {scale = 1.0 : f32} : tensor<3x3xf32>
  %m = attn.constant dense<[[[1.0], [1.0], [0.0], [0.0]], [[1.0], [0.0], [1.0], [1.0]], [[0.0], [0.0], [0.0], [0.0]]]> : tensor<3x4x1xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b peephole(%wp : tensor<3x3xf32>) mask(%m : tensor<3x4x1xf32>) : tensor<3x4x2xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<2x12xf32>, tensor<3x12xf32>, tensor<12xf32>
  return %hs, %h, %c : tensor<3x4x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}

func.func @rnn_masked() -> (tensor<3x4x3xf32>, tensor<3x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wax = attn.param "w_ax" {scale = 1.0 : f32} : tensor<2x3xf32>
  %waa = attn.param "w_aa" {scale = 1.0 : f32} : tensor<3x3xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<3xf32>
  %m = attn.constant dense<[[[1.0], [1.0], [0.0], [0.0]], [[1.0], [0.0], [1.0], [1.0]], [[0.0], [0.0], [0.0], [0.0]]]> : tensor<3x4x1xf32>
  %hs, %h = attn.rnn %x, %h0, %wax, %waa, %b mask(%m : tensor<3x4x1xf32>) {reverse} : tensor<3x4x2xf32>, tensor<3x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<3xf32>
  return %hs, %h : tensor<3x4x3xf32>, tensor<3x3xf32>
}

// oneDNN's LSTMP: the hidden state is P = 2 wide, the cell H = 3 (w_hh [P, 4H], w_proj
// [H, P]); reversed, with peepholes; and masked over packed rows.
func.func @lstm_projection() -> (tensor<3x4x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<3x2xf32>
  %c0 = attn.param "c0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<2x12xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<12xf32>
  %wp = attn.param "w_peephole" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wr = attn.param "w_proj" {scale = 1.0 : f32} : tensor<3x2xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b peephole(%wp : tensor<3x3xf32>) projection(%wr : tensor<3x2xf32>) {reverse} : tensor<3x4x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>, tensor<2x12xf32>, tensor<2x12xf32>, tensor<12xf32>
  return %hs, %h, %c : tensor<3x4x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>
}

func.func @lstm_projection_masked() -> (tensor<3x4x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<3x2xf32>
  %c0 = attn.param "c0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<2x12xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<12xf32>
  %wr = attn.param "w_proj" {scale = 1.0 : f32} : tensor<3x2xf32>
  %m = attn.constant dense<[[[1.0], [1.0], [0.0], [0.0]], [[1.0], [0.0], [1.0], [1.0]], [[0.0], [0.0], [0.0], [0.0]]]> : tensor<3x4x1xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b projection(%wr : tensor<3x2xf32>) mask(%m : tensor<3x4x1xf32>) : tensor<3x4x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>, tensor<2x12xf32>, tensor<2x12xf32>, tensor<12xf32>
  return %hs, %h, %c : tensor<3x4x2xf32>, tensor<3x2xf32>, tensor<3x3xf32>
}

// A mask with other values than 0 and 1 (no packed form): the state is blended step by step,
// s + m (cell - s), like the scan.
func.func @gru_masked_fractional() -> (tensor<3x4x3xf32>, tensor<3x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x9xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x9xf32>
  %bi = attn.param "b_ih" {scale = 1.0 : f32} : tensor<9xf32>
  %bh = attn.param "b_hh" {scale = 1.0 : f32} : tensor<9xf32>
  %m = attn.constant dense<[[[1.0], [0.5], [0.0], [0.25]], [[0.75], [1.0], [1.0], [0.0]], [[0.0], [0.5], [0.5], [1.0]]]> : tensor<3x4x1xf32>
  %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh mask(%m : tensor<3x4x1xf32>) {reverse} : tensor<3x4x2xf32>, tensor<3x3xf32>, tensor<2x9xf32>, tensor<3x9xf32>, tensor<9xf32>, tensor<9xf32>
  return %hs, %h : tensor<3x4x3xf32>, tensor<3x3xf32>
}

func.func @lstm_masked_fractional() -> (tensor<3x4x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<3x4x2xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %c0 = attn.param "c0" {scale = 1.0 : f32} : tensor<3x3xf32>
  %wi = attn.param "w_ih" {scale = 1.0 : f32} : tensor<2x12xf32>
  %wh = attn.param "w_hh" {scale = 1.0 : f32} : tensor<3x12xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<12xf32>
  %m = attn.constant dense<[[[1.0], [0.5], [0.0], [0.25]], [[0.75], [1.0], [1.0], [0.0]], [[0.0], [0.5], [0.5], [1.0]]]> : tensor<3x4x1xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b mask(%m : tensor<3x4x1xf32>) : tensor<3x4x2xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<2x12xf32>, tensor<3x12xf32>, tensor<12xf32>
  return %hs, %h, %c : tensor<3x4x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}

// Scheduled sampling's decoder step: a carried row of logits picks (through eq with its max)
// a one-hot row that reads the embedding table `e`; where the coin is 0 that prediction, not
// the given input, feeds the cell. The table is also used outside the scan.
func.func @scan_sampled() -> (tensor<2x4x5xf32>, tensor<2x3xf32>) {
  %e = attn.param "e" {scale = 1.0 : f32} : tensor<5x3xf32>
  %h0 = attn.param "h0" {scale = 1.0 : f32} : tensor<2x3xf32>
  %w = attn.param "w" {scale = 1.0 : f32} : tensor<3x5xf32>
  %u = attn.param "u" {scale = 1.0 : f32} : tensor<3x3xf32>
  %ids = attn.constant dense<[[1, 4, 2, 0], [3, 3, 1, 2]]> : tensor<2x4xi32>
  %gold = attn.embedding %e, %ids : tensor<5x3xf32>, tensor<2x4xi32>
  %coin = attn.constant dense<[[[1.0], [0.0], [0.0], [1.0]], [[1.0], [1.0], [0.0], [0.0]]]> : tensor<2x4x1xf32>
  %p0 = attn.constant dense<[[0.1, 0.5, 0.2, 0.3, 0.4], [0.9, 0.1, 0.2, 0.3, 0.4]]> : tensor<2x5xf32>
  %h, %p, %ls = attn.scan inits(%h0, %p0) over(%gold, %coin) : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x4x3xf32>, tensor<2x4x1xf32>) -> (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x4x5xf32>) {
  ^bb0(%hp: tensor<2x3xf32>, %prev: tensor<2x5xf32>, %g: tensor<2x3xf32>, %c: tensor<2x1xf32>):
    %best = attn.reduce_max %prev {axes = array<i64: 1>, keepdims = true} : tensor<2x5xf32>
    %onehot = attn.eq %prev, %best : tensor<2x5xf32>, tensor<2x1xf32>
    %pred = attn.matmul %onehot, %e : tensor<2x5xf32>, tensor<5x3xf32>
    %d = attn.sub %g, %pred : tensor<2x3xf32>, tensor<2x3xf32>
    %cd = attn.mul %c, %d : tensor<2x1xf32>, tensor<2x3xf32>
    %x = attn.add %pred, %cd : tensor<2x3xf32>, tensor<2x3xf32>
    %xu = attn.matmul %x, %u : tensor<2x3xf32>, tensor<3x3xf32>
    %s = attn.add %xu, %hp : tensor<2x3xf32>, tensor<2x3xf32>
    %hn = attn.tanh %s : tensor<2x3xf32>
    %l = attn.matmul %hn, %w : tensor<2x3xf32>, tensor<3x5xf32>
    attn.yield %hn, %l, %l : tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x5xf32>
  }
  return %ls, %h : tensor<2x4x5xf32>, tensor<2x3xf32>
}

//===- attention (ops/Attention.td) ------------------------------------------------------===//

func.func @attention_scores() -> tensor<2x5xf32> {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x3xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x5x3xf32>
  %e = attn.attention_scores dot %q, %k : tensor<2x3xf32>, tensor<2x5x3xf32>
  return %e : tensor<2x5xf32>
}

func.func @attention_scores_scaled_dot() -> tensor<2x5xf32> {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x5x4xf32>
  %e = attn.attention_scores scaled_dot %q, %k : tensor<2x4xf32>, tensor<2x5x4xf32>
  return %e : tensor<2x5xf32>
}

func.func @attention_scores_general() -> tensor<2x5xf32> {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x3xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x5x4xf32>
  %w = attn.param "w" {scale = 1.0 : f32} : tensor<3x4xf32>
  %e = attn.attention_scores general %q, %k, %w
      : tensor<2x3xf32>, tensor<2x5x4xf32>, tensor<3x4xf32>
  return %e : tensor<2x5xf32>
}

func.func @attention_scores_additive() -> tensor<2x5xf32> {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x5x4xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<4xf32>
  %e = attn.attention_scores additive %q, %k, %v
      : tensor<2x4xf32>, tensor<2x5x4xf32>, tensor<4xf32>
  return %e : tensor<2x5xf32>
}

// The cosine score with a learned temperature: gradients reach q, k and tau.
func.func @attention_scores_cosine() -> tensor<2x5xf32> {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x5x4xf32>
  %tau = attn.param "tau" {scale = 1.0 : f32} : tensor<1xf32>
  %e = attn.attention_scores cosine %q, %k, %tau
      : tensor<2x4xf32>, tensor<2x5x4xf32>, tensor<1xf32>
  return %e : tensor<2x5xf32>
}

func.func @attention_scores_cosine_fixed() -> tensor<2x5xf32> {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x3xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x5x3xf32>
  %e = attn.attention_scores cosine %q, %k : tensor<2x3xf32>, tensor<2x5x3xf32>
  return %e : tensor<2x5xf32>
}

// The second row has padding in its last two positions; its weights there must be 0 and
// pass no gradient.
func.func @attention() -> (tensor<2x3xf32>, tensor<2x5xf32>) {
  %e = attn.param "e" {scale = 1.0 : f32} : tensor<2x5xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<2x5x3xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0]]> : tensor<2x5xf32>
  %c, %a = attn.attention %e, %m, %h : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5x3xf32>
  return %c, %a : tensor<2x3xf32>, tensor<2x5xf32>
}

func.func @attention_weighting() -> (tensor<2x3xf32>, tensor<2x5xf32>) {
  %e = attn.param "e" {scale = 1.0 : f32} : tensor<2x5xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<2x5x3xf32>
  %g = attn.param "g" {scale = 1.0 : f32} : tensor<2x5xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0, 0.0]]> : tensor<2x5xf32>
  %c, %a = attn.attention %e, %m, %h weighting(%g : tensor<2x5xf32>)
      : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5x3xf32>
  return %c, %a : tensor<2x3xf32>, tensor<2x5xf32>
}

// Centres between positions (the window's edges are steps: finite differences must not
// cross one), so the gradient of p flows through the Gaussian alone.
func.func @local_window() -> (tensor<2x6xf32>, tensor<2x6xf32>) {
  %d = attn.param "d" {scale = 0.2 : f32} : tensor<2x1xf32>
  %base = attn.constant dense<[[1.5], [3.5]]> : tensor<2x1xf32>
  %p = attn.add %base, %d : tensor<2x1xf32>, tensor<2x1xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]]> : tensor<2x6xf32>
  %w, %g = attn.local_window %p, %m {window = 2 : i64} : tensor<2x1xf32>, tensor<2x6xf32>
  return %w, %g : tensor<2x6xf32>, tensor<2x6xf32>
}

// The fused op with Bahdanau's additive score region (v_a captured), as attn-fuse-attention
// makes it of a decoder step: one query per row, the second row with two padded keys. Both
// results are differentiated (the log-sum-exp's gradient enters the backward kernel too); the
// backward's score_grad region is derived from the score region by attn-autodiff.
func.func @fused_attention() -> (tensor<2x1x1x3xf32>, tensor<2x1x1xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x1x1x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x1x5x4xf32>
  %va = attn.param "va" {scale = 1.0 : f32} : tensor<4xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<2x1x5x3xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0]]> : tensor<2x5xf32>
  %o, %lse = attn.fused_attention %q, %k, %h, %m captures(%va : tensor<4xf32>)
      : tensor<2x1x1x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x1x1x3xf32>, tensor<2x1x1xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %v: tensor<4xf32>):
    %sum = attn.add %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %t = attn.tanh %sum : tensor<4xf32>
    %tv = attn.mul %t, %v : tensor<4xf32>, tensor<4xf32>
    %e = attn.reduce_sum %tv {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %e : tensor<f32>
  }
  return %o, %lse : tensor<2x1x1x3xf32>, tensor<2x1x1xf32>
}

// Luong's local-p attention fused: a dot score, a window of 2 around a learned centre with
// the Gaussian weighting (the centre's gradient comes through it), weights as a result (their
// gradient enters the backward too). Centres 1.6 and 2.3 (+-0.05): no key within 0.25 of a
// window edge, where the finite difference would jump.
func.func @fused_attention_local() -> (tensor<2x1x1x3xf32>, tensor<2x1x1x5xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x1x1x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x1x5x4xf32>
  %h = attn.param "h" {scale = 1.0 : f32} : tensor<2x1x5x3xf32>
  %dp = attn.param "dp" {scale = 0.05 : f32} : tensor<2x1x1xf32>
  %p0 = attn.constant dense<[[[1.6]], [[2.3]]]> : tensor<2x1x1xf32>
  %p = attn.add %p0, %dp : tensor<2x1x1xf32>, tensor<2x1x1xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 0.0]]> : tensor<2x5xf32>
  %o, %lse, %w = attn.fused_attention %q, %k, %h, %m center(%p : tensor<2x1x1xf32>)
      {window = 2 : i64, gaussian, with_weights}
      : tensor<2x1x1x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x1x1x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1x5xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %e = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %e : tensor<f32>
  }
  return %o, %w : tensor<2x1x1x3xf32>, tensor<2x1x1x5xf32>
}

// A researcher's score with no kernel code: causal scaled dot-product attention with an
// ALiBi-style distance penalty whose slope is learned (a captured scalar), two heads, fewer
// queries than keys (query i sees keys j <= i + 2), a padded key in the second row.
func.func @fused_attention_alibi() -> (tensor<2x2x3x3xf32>, tensor<2x2x3xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x2x3x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x2x5x4xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<2x2x5x3xf32>
  %slope = attn.param "slope" {scale = 1.0 : f32} : tensor<f32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 0.0]]> : tensor<2x5xf32>
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%slope : tensor<f32>) {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %scale = attn.constant dense<0.5> : tensor<f32>
    %scaled = attn.mul %dot, %scale : tensor<f32>, tensor<f32>
    %two = attn.constant dense<2.0> : tensor<f32>
    %shift = attn.add %i, %two : tensor<f32>, tensor<f32>
    %dist = attn.sub %shift, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %scaled, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  }
  return %o, %lse : tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
}

// ALiBi as published: a slope per head (a capture tensor<2xf32> that each head reads as its
// own tensor<f32>), learned, with a mask region that hides key 0; the _regions kernels run it
// with one row of captures per head.
func.func @fused_attention_alibi_per_head() -> (tensor<2x2x3x3xf32>, tensor<2x2x3xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x2x3x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x2x5x4xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<2x2x5x3xf32>
  %slope = attn.param "slope" {scale = 1.0 : f32} : tensor<2xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 0.0]]> : tensor<2x5xf32>
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%slope : tensor<2xf32>) {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %scale = attn.constant dense<0.5> : tensor<f32>
    %scaled = attn.mul %dot, %scale : tensor<f32>, tensor<f32>
    %two = attn.constant dense<2.0> : tensor<f32>
    %shift = attn.add %i, %two : tensor<f32>, tensor<f32>
    %dist = attn.sub %shift, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %scaled, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %half = attn.constant dense<0.5> : tensor<f32>
    %past = attn.sub %j, %half : tensor<f32>, tensor<f32>
    %ok = attn.step %past : tensor<f32>
    attn.yield %ok : tensor<f32>
  }
  return %o, %lse : tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
}

// A per-head slope beside a row capture (a weighted product, which the generated kernels run,
// not the _regions ones): both captures' gradients, the slope's per head.
func.func @fused_attention_weighted_per_head() -> (tensor<2x2x3x3xf32>, tensor<2x2x3xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x2x3x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x2x5x4xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<2x2x5x3xf32>
  %w = attn.param "w" {scale = 1.0 : f32} : tensor<4xf32>
  %slope = attn.param "slope" {scale = 1.0 : f32} : tensor<2xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0]]> : tensor<2x5xf32>
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%w, %slope : tensor<4xf32>, tensor<2xf32>)
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %wd: tensor<4xf32>,
       %s: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %weighted = attn.mul %prod, %wd : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %weighted {axes = array<i64: 0>} : tensor<4xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.add %dot, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  }
  return %o, %lse : tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
}

// Two heads, the second batch row with two padded keys (their weights must be 0 and pass no
// gradient).
func.func @scaled_dot_product_attention() -> (tensor<2x2x3x4xf32>, tensor<2x2x3x5xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x2x3x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x2x5x4xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<2x2x5x4xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0]]> : tensor<2x5xf32>
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v, %m
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x5xf32>
  return %o, %w : tensor<2x2x3x4xf32>, tensor<2x2x3x5xf32>
}

// Causal with fewer queries than keys: query i sees keys j <= i + 2.
func.func @scaled_dot_product_attention_causal() -> (tensor<1x2x3x3xf32>, tensor<1x2x3x5xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<1x2x3x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<1x2x5x4xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<1x2x5x3xf32>
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v {causal = true}
      : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x3xf32>
  return %o, %w : tensor<1x2x3x3xf32>, tensor<1x2x3x5xf32>
}

// A scaled-dot score, which attn-to-onednn runs as the FlashAttention-2 kernels
// (attn-fuse-attention's result for the two above), against finite differences: causal with
// fewer queries than keys and a padded second batch row; both results are differentiated (the
// log-sum-exp's gradient enters the backward kernel too).
func.func @fused_attention_dot() -> (tensor<2x2x3x3xf32>, tensor<2x2x3xf32>) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<2x2x3x4xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<2x2x5x4xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<2x2x5x3xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0]]> : tensor<2x5xf32>
  %o, %lse = attn.fused_attention %q, %k, %v, %m {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %scale = attn.constant dense<0.5> : tensor<f32>
    %s = attn.mul %dot, %scale : tensor<f32>, tensor<f32>
    attn.yield %s : tensor<f32>
  }
  return %o, %lse : tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
}

// Cross attention (memory of another width) with a key mask.
func.func @multi_head_attention() -> (tensor<2x3x4xf32>, tensor<2x2x3x5xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x3x4xf32>
  %mem = attn.param "mem" {scale = 1.0 : f32} : tensor<2x5x6xf32>
  %wq = attn.param "wq" {scale = 0.5 : f32} : tensor<4x4xf32>
  %bq = attn.param "bq" {scale = 0.5 : f32} : tensor<4xf32>
  %wk = attn.param "wk" {scale = 0.5 : f32} : tensor<6x4xf32>
  %bk = attn.param "bk" {scale = 0.5 : f32} : tensor<4xf32>
  %wv = attn.param "wv" {scale = 0.5 : f32} : tensor<6x4xf32>
  %bv = attn.param "bv" {scale = 0.5 : f32} : tensor<4xf32>
  %wo = attn.param "wo" {scale = 0.5 : f32} : tensor<4x4xf32>
  %bo = attn.param "bo" {scale = 0.5 : f32} : tensor<4xf32>
  %m = attn.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0, 0.0]]> : tensor<2x5xf32>
  %y, %w = attn.multi_head_attention %x, %mem, %wq, %bq, %wk, %bk, %wv, %bv, %wo, %bo, %m {heads = 2 : i64}
      : tensor<2x3x4xf32>, tensor<2x5x6xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<6x4xf32>,
        tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2x5xf32>
  return %y, %w : tensor<2x3x4xf32>, tensor<2x2x3x5xf32>
}

// Causal self-attention.
func.func @multi_head_attention_causal() -> (tensor<2x4x4xf32>, tensor<2x2x4x4xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x4x4xf32>
  %wq = attn.param "wq" {scale = 0.5 : f32} : tensor<4x4xf32>
  %bq = attn.param "bq" {scale = 0.5 : f32} : tensor<4xf32>
  %wk = attn.param "wk" {scale = 0.5 : f32} : tensor<4x4xf32>
  %bk = attn.param "bk" {scale = 0.5 : f32} : tensor<4xf32>
  %wv = attn.param "wv" {scale = 0.5 : f32} : tensor<4x4xf32>
  %bv = attn.param "bv" {scale = 0.5 : f32} : tensor<4xf32>
  %wo = attn.param "wo" {scale = 0.5 : f32} : tensor<4x4xf32>
  %bo = attn.param "bo" {scale = 0.5 : f32} : tensor<4xf32>
  %y, %w = attn.multi_head_attention %x, %x, %wq, %bq, %wk, %bk, %wv, %bv, %wo, %bo {heads = 2 : i64, causal = true}
      : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>,
        tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>
  return %y, %w : tensor<2x4x4xf32>, tensor<2x2x4x4xf32>
}

// A causal convolution (two zeros before the first step): input, weight and bias.
func.func @conv1d() -> tensor<2x4x3xf32> {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x4x2xf32>
  %w = attn.param "w" {scale = 1.0 : f32} : tensor<3x2x3xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<3xf32>
  %y = attn.conv1d %x, %w, %b {pad_low = 2 : i64} : tensor<2x4x2xf32>, tensor<3x2x3xf32>, tensor<3xf32>
  return %y : tensor<2x4x3xf32>
}

// Uneven padding around an even kernel, and no padding (a shorter result).
func.func @conv1d_padded() -> (tensor<2x5x2xf32>, tensor<2x2x2xf32>) {
  %x = attn.param "x" {scale = 1.0 : f32} : tensor<2x5x3xf32>
  %w = attn.param "w" {scale = 1.0 : f32} : tensor<4x3x2xf32>
  %b = attn.param "b" {scale = 1.0 : f32} : tensor<2xf32>
  %y = attn.conv1d %x, %w, %b {pad_low = 1 : i64, pad_high = 2 : i64} : tensor<2x5x3xf32>, tensor<4x3x2xf32>, tensor<2xf32>
  %z = attn.conv1d %x, %w, %b : tensor<2x5x3xf32>, tensor<4x3x2xf32>, tensor<2xf32>
  return %y, %z : tensor<2x5x2xf32>, tensor<2x2x2xf32>
}

func.func @glu() -> tensor<2x3x2xf32> {
  %x = attn.param "x" {scale = 2.0 : f32} : tensor<2x3x4xf32>
  %y = attn.glu %x : tensor<2x3x4xf32>
  return %y : tensor<2x3x2xf32>
}

// stop_gradient passes no gradient, by design: gradcheck-test.cpp checks that "blocked"
// gets none (finite differences would see the identity) and that "y" gets x's value.
func.func @stop_gradient() -> tensor<2x3xf32> {
  %x = attn.param "blocked" {scale = 1.0 : f32} : tensor<2x3xf32>
  %y = attn.param "y" {scale = 1.0 : f32} : tensor<2x3xf32>
  %s = attn.stop_gradient %x : tensor<2x3xf32>
  %z = attn.mul %s, %y : tensor<2x3xf32>, tensor<2x3xf32>
  return %z : tensor<2x3xf32>
}
