// RUN: attn-opt %s -attn-to-onednn -split-input-file | FileCheck %s

// CHECK-DAG: func.func private @attn_rt_matmul(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @attn_rt_dense(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @attn_rt_rnn_forward(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @attn_rt_rnn_backward(

// A rank-2 matmul goes through the rank-3 kernel as batch 1; transposes become flags.
// CHECK-LABEL: func @matmul
// CHECK: %[[T:.*]] = arith.constant 1 : i64
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x4x5xf32>
// CHECK: call @attn_rt_matmul({{.*}}, %[[T]])
// CHECK: bufferization.to_tensor %{{.*}} restrict writable
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x4x5xf32> into tensor<4x5xf32>
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>) -> tensor<4x5xf32> {
  %c = attn.matmul %a, %b {transpose_rhs = true} : tensor<4x8xf32>, tensor<5x8xf32>
  return %c : tensor<4x5xf32>
}

// dense over [B, T, K] runs on [B*T, K] rows.
// CHECK-LABEL: func @dense
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK: call @attn_rt_dense
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
func.func @dense(%x: tensor<2x3x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y = attn.dense %x, %w, %b : tensor<2x3x8xf32>, tensor<8x4xf32>, tensor<4xf32>
  return %y : tensor<2x3x4xf32>
}

// int8 calls the _int8 kernels; a dense without a bias too (with a zero bias: int8 has only
// the dense kernel's form for a layer).
// CHECK-LABEL: func @dense_int8
// CHECK: call @attn_rt_dense_int8
// CHECK: call @attn_rt_dense_int8
// CHECK: call @attn_rt_matmul_int8
func.func @dense_int8(%x: tensor<6x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>, %e: tensor<5x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x5xf32>) {
  %y = attn.dense %x, %w, %b {precision = #attn.precision<int8>} : tensor<6x8xf32>, tensor<8x4xf32>, tensor<4xf32>
  %z = attn.dense %x, %w {precision = #attn.precision<int8>} : tensor<6x8xf32>, tensor<8x4xf32>
  %l = attn.matmul %z, %e {precision = #attn.precision<int8>, transpose_rhs = true} : tensor<6x4xf32>, tensor<5x4xf32>
  return %y, %z, %l : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x5xf32>
}

// Without a bias, dense is a matmul.
// CHECK-LABEL: func @dense_no_bias
// CHECK: call @attn_rt_matmul
// CHECK-NOT: attn_rt_dense(
// CHECK-NOT: attn.matmul
func.func @dense_no_bias(%x: tensor<6x8xf32>, %w: tensor<8x4xf32>) -> tensor<6x4xf32> {
  %y = attn.dense %x, %w : tensor<6x8xf32>, tensor<8x4xf32>
  return %y : tensor<6x4xf32>
}

// Sequence ops: one forward kernel for the three cells (kind 0 rnn, 1 gru, 2 lstm), taking
// x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask, then outputs, h_n, c_n, then
// kind, reverse, training, peephole, projection, masked; operands an op lacks are stood in for
// by one of the same rank.
// `training` forwards keep oneDNN's workspace for the backward.
// CHECK-LABEL: func @lstm_sequence
// CHECK-DAG: %[[KIND:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[HS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x6x8xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK: call @attn_rt_rnn_forward({{.*}}, %[[KIND]], %[[ZERO]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ZERO]])
// CHECK: bufferization.to_tensor %[[HS]] restrict writable
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x6x2xf32>
// CHECK: call @attn_rt_rnn_backward({{.*}}, %[[KIND]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]])
func.func @lstm_sequence(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>, %dhs: tensor<4x6x8xf32>) -> tensor<2x32xf32> {
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b {training} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  %g:6 = attn.lstm_grad %x, %h0, %c0, %wi, %wh, %b, %hs, %h, %c, %dhs, %h0, %c0 : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %g#3 : tensor<2x32xf32>
}

// A reversed GRU: kind 1, reverse 1, inference, no peepholes.
// CHECK-LABEL: func @gru_sequence
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: call @attn_rt_rnn_forward({{.*}}, %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]])
func.func @gru_sequence(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %bi: tensor<24xf32>, %bh: tensor<24xf32>) -> tensor<4x6x8xf32> {
  %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh {reverse} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  return %hs : tensor<4x6x8xf32>
}

// A masked GRU and its backward: the mask is the tenth memref, `masked` the last flag.
// CHECK-LABEL: func @masked_gru
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[M:.*]] = bufferization.to_memref %arg6
// CHECK: %[[MV:.*]] = memref.cast %[[M]]
// CHECK: call @attn_rt_rnn_forward(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[MV]], {{.*}}, %[[ONE]], %[[ZERO]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]])
// CHECK: call @attn_rt_rnn_backward(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, {{.*}}, %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ONE]])
func.func @masked_gru(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %bi: tensor<24xf32>, %bh: tensor<24xf32>, %m: tensor<4x6x1xf32>, %dhs: tensor<4x6x8xf32>) -> tensor<2x24xf32> {
  %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh mask(%m : tensor<4x6x1xf32>) {training} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  %g:6 = attn.gru_grad %x, %h0, %wi, %wh, %bi, %bh, %hs, %h, %dhs, %h0 mask(%m : tensor<4x6x1xf32>) : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>
  return %g#2 : tensor<2x24xf32>
}

// In bf16 (attn-precision), a layer and its backward call the kernels' _bf16 form, same
// arguments.
// CHECK-LABEL: func @bf16_gru
// CHECK: call @attn_rt_rnn_forward_bf16(
// CHECK: call @attn_rt_rnn_backward_bf16(
func.func @bf16_gru(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %bi: tensor<24xf32>, %bh: tensor<24xf32>, %dhs: tensor<4x6x8xf32>) -> tensor<2x24xf32> {
  %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh {precision = #attn.precision<bf16>, training} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  %g:6 = attn.gru_grad %x, %h0, %wi, %wh, %bi, %bh, %hs, %h, %dhs, %h0 {precision = #attn.precision<bf16>} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>
  return %g#2 : tensor<2x24xf32>
}

// A projected LSTM (LSTMP) and its backward: w_proj is the ninth memref, `projection` the
// flag before `masked`; d_w_proj the backward's last result (after d_w_peephole's stand-in).
// CHECK-LABEL: func @lstm_projection
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[P:.*]] = bufferization.to_memref %arg6
// CHECK: %[[PV:.*]] = memref.cast %[[P]]
// CHECK: call @attn_rt_rnn_forward(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[PV]], {{.*}}, %[[ONE]], %[[ZERO]], %[[ONE]], %[[ZERO]])
// CHECK: %[[DP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x3xf32>
// CHECK: %[[DPV:.*]] = memref.cast %[[DP]]
// CHECK: call @attn_rt_rnn_backward({{.*}}, %[[DPV]], %{{[^,]*}}, %{{[^,]*}}, %[[ZERO]], %[[ONE]], %[[ZERO]])
func.func @lstm_projection(%x: tensor<4x6x2xf32>, %h0: tensor<4x3xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<3x32xf32>, %b: tensor<32xf32>, %wp: tensor<8x3xf32>, %dhs: tensor<4x6x3xf32>) -> tensor<8x3xf32> {
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b projection(%wp : tensor<8x3xf32>) {training} : tensor<4x6x2xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<3x32xf32>, tensor<32xf32>
  %g:7 = attn.lstm_grad %x, %h0, %c0, %wi, %wh, %b, %hs, %h, %c, %dhs, %h0, %c0 projection(%wp : tensor<8x3xf32>) : tensor<4x6x2xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<3x32xf32>, tensor<32xf32>, tensor<4x6x3xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<4x6x3xf32>, tensor<4x3xf32>, tensor<4x8xf32>
  return %g#6 : tensor<8x3xf32>
}

// A plain dot-product score (scaled, the factors either way round) runs the FlashAttention-2
// kernels, the scale an f32 argument; its backward too.
// CHECK-LABEL: func @fused_attention_dot
// CHECK-DAG: %[[CAUSAL:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: call @attn_rt_flash_attention(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CAUSAL]], %[[SCALE]])
// CHECK: call @attn_rt_flash_attention_backward({{.*}}) : ({{.*}}, i64, f32) -> ()
// CHECK-NOT: attn.fused_attention
func.func @fused_attention_dot(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>,
                               %m: tensor<2x5xf32>, %do: tensor<2x2x3x3xf32>, %dl: tensor<2x2x3xf32>)
    -> (tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>) {
  %o, %lse = attn.fused_attention %q, %k, %v, %m {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %kj, %qi : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %c = attn.constant dense<0.5> : tensor<f32>
    %s = attn.mul %c, %dot : tensor<f32>, tensor<f32>
    attn.yield %s : tensor<f32>
  }
  %dq, %dk, %dv = attn.fused_attention_grad %q, %k, %v, %m, %o, %lse, %do, %dl {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>, tensor<2x2x3x3xf32>,
        tensor<2x2x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
      -> tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %kj, %qi : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %c = attn.constant dense<0.5> : tensor<f32>
    %s = attn.mul %c, %dot : tensor<f32>, tensor<f32>
    attn.yield %s : tensor<f32>
  } {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %ds: tensor<f32>):
    %c = attn.constant dense<0.5> : tensor<f32>
    %g = attn.mul %ds, %c : tensor<f32>, tensor<f32>
    %dq_row = attn.mul %g, %kj : tensor<f32>, tensor<4xf32>
    %dk_row = attn.mul %g, %qi : tensor<f32>, tensor<4xf32>
    attn.yield %dq_row, %dk_row : tensor<4xf32>, tensor<4xf32>
  }
  return %dq, %dk, %dv : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>
}

// The same score with a mask region: the flash kernels' _regions form, the mask a tile function
// (has_mask 1), no captures (one 0 in their place); the score is the product itself (has_score
// 0, scale 1), so the kernels call no score function.
// CHECK-LABEL: func @fused_attention_dot_mask_region
// CHECK-DAG: %[[MASK:.*]] = constant @attn_mask_tile_{{[0-9]+}}
// CHECK-DAG: %[[SCORE:.*]] = constant @attn_score_tile_{{[0-9]+}}
// CHECK-DAG: %[[NOT_CAUSAL:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[HAS_MASK:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[NO_WINDOW:.*]] = arith.constant -1 : i64
// CHECK-DAG: %[[UNSCALED:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: tensor.from_elements %{{.*}} : tensor<1x1xf32>
// CHECK: call @attn_rt_flash_attention_regions({{.*}}, %[[NOT_CAUSAL]], %[[HAS_MASK]], %[[NO_WINDOW]], %[[NO_WINDOW]], %[[NOT_CAUSAL]], %[[UNSCALED]], %[[SCORE]], %[[MASK]])
// CHECK-NOT: attn_fused_attention_
func.func @fused_attention_dot_mask_region(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>,
                                           %m: tensor<2x5xf32>) -> tensor<2x2x3x3xf32> {
  %o, %lse = attn.fused_attention %q, %k, %v, %m
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %dot : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>):
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %in = attn.step %ij : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  return %o : tensor<2x2x3x3xf32>
}

// The same score with its weights read: the generated kernel (the flash kernels never form them).
// CHECK-LABEL: func @fused_attention_dot_weights
// CHECK: call @attn_fused_attention_{{[0-9]+}}(
// CHECK-NOT: attn_rt_flash_attention(
func.func @fused_attention_dot_weights(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>,
                                       %m: tensor<2x5xf32>) -> tensor<2x2x3x5xf32> {
  %o, %lse, %w = attn.fused_attention %q, %k, %v, %m {with_weights}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3x5xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %dot : tensor<f32>
  }
  return %w : tensor<2x2x3x5xf32>
}

// A score that is not a dot product then scalar code (a weighted product: a row capture)
// calls a kernel generated for it: one query row at a time, causal masking as the end of the
// key loop (j < i + S - T + 1), the key mask as a predicate, the score region inlined (its row
// product one loop over d, its scalar ops after it), a row of S scores, then the weighted sum
// into the output row.
// CHECK-LABEL: func @fused_attention_weighted
// CHECK: call @attn_fused_attention_0(%{{.*}}) : (memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, {{.*}}, memref<f32, strided<[], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) -> ()
// CHECK-NOT: attn.fused_attention
// CHECK: func.func private @attn_fused_attention_0(%[[Q:.*]]: memref<?x?x?x?xf32, {{.*}}>, %[[K:.*]]: memref<?x?x?x?xf32, {{.*}}>, %[[V:.*]]: memref<?x?x?x?xf32, {{.*}}>, %[[M:.*]]: memref<?x?xf32, {{.*}}>, %[[W:.*]]: memref<?xf32, {{.*}}>, %[[SLOPE:.*]]: memref<f32, {{.*}}>, %[[OUT:.*]]: memref<?x?x?x?xf32, {{.*}}>, %[[LSE:.*]]: memref<?x?x?xf32, {{.*}}>)
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[S:.*]] = memref.load %[[SLOPE]][]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]]
// CHECK: %[[ROW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5xf32>
// CHECK: scf.for %[[B:.*]] = %c0 to %c2
// CHECK: scf.for %[[H:.*]] = %c0 to %c2
// CHECK: scf.for %[[I:.*]] = %c0 to %[[C3]]
// CHECK: %[[END:.*]] = arith.addi %[[I]], %[[C3]] : index
// CHECK: scf.for %[[J:.*]] = %c0 to %[[END]] step %c1 {
// CHECK: memref.load %[[M]][%[[B]], %[[J]]]
// CHECK: scf.if
// CHECK: scf.for %[[D:.*]] = %c0 to %c4 step %c1 iter_args
// CHECK: memref.load %[[Q]][%[[B]], %[[H]], %[[I]], %[[D]]]
// CHECK: memref.load %[[K]][%[[B]], %[[H]], %[[J]], %[[D]]]
// CHECK: arith.mulf
// CHECK: memref.load %[[W]][%[[D]]]
// CHECK: arith.mulf
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: arith.subf
// CHECK: arith.mulf %{{.*}}, %[[S]]
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK: math.exp
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %[[LSE]][%[[B]], %[[H]], %[[I]]]
// CHECK: memref.load %[[V]]
// CHECK: memref.store %{{.*}}, %[[OUT]]
func.func @fused_attention_weighted(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>,
                                    %m: tensor<2x5xf32>, %w: tensor<4xf32>, %slope: tensor<f32>)
    -> (tensor<2x2x3x3xf32>, tensor<2x2x3xf32>) {
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%w, %slope : tensor<4xf32>, tensor<f32>) {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %wr: tensor<4xf32>, %s: tensor<f32>):
    %qk = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %prod = attn.mul %qk, %wr : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %dot, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  }
  return %o, %lse : tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
}


// -----

// A score of scalar code around the dot product (ALiBi with a learned slope) under a mask region
// of scalar code (every key but the first), forward and backward: the flash kernels' _regions form
// with the regions as tile functions. A score tile reads the product from the tile and writes
// the score back, the positions i0 + r and j0 + c (the bias s (i - j), the same along each
// diagonal of the tile, from a table made per diagonal before the loops, index r - c + cols - 1);
// the mask tile writes 1 or 0; the backward's writes the product's gradient (ds itself here)
// where ds is nonzero and sums the slope's over the tile (it is ds p, p = -(i - j) the gradient
// at ds = 1: ds is summed per diagonal in the loops and weighed by p, tabulated per diagonal,
// after them), added into d_captures, which becomes the slope's gradient.
// CHECK-LABEL: func @fused_attention_regions
// CHECK-DAG: %[[MASK_B:.*]] = constant @attn_mask_tile_0
// CHECK-DAG: %[[GRAD:.*]] = constant @attn_score_grad_tile_0
// CHECK-DAG: %[[SCORE_B:.*]] = constant @attn_score_tile_0
// CHECK-DAG: %[[MASK:.*]] = constant @attn_mask_tile_1
// CHECK-DAG: %[[SCORE:.*]] = constant @attn_score_tile_1
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[NO_WINDOW:.*]] = arith.constant -1 : i64
// CHECK-DAG: %[[UNSCALED:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[SLOPE:.*]] = tensor.extract %arg4[] : tensor<f32>
// CHECK: tensor.from_elements %[[SLOPE]] : tensor<1x1xf32>
// CHECK: call @attn_rt_flash_attention_regions({{.*}}, %[[ONE]], %[[ONE]], %[[NO_WINDOW]], %[[NO_WINDOW]], %[[ONE]], %[[UNSCALED]], %[[SCORE]], %[[MASK]])
// CHECK: %[[DCAPS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x1xf32>
// CHECK: call @attn_rt_flash_attention_regions_backward({{.*}}, %[[ONE]], %[[ONE]], %[[NO_WINDOW]], %[[NO_WINDOW]], %[[ONE]], %[[UNSCALED]], %[[SCORE_B]], %[[GRAD]], %[[MASK_B]])
// CHECK: %[[DC:.*]] = bufferization.to_tensor %[[DCAPS]]
// CHECK: %[[DSLOPE:.*]] = tensor.extract %[[DC]][%{{.*}}, %{{.*}}] : tensor<1x1xf32>
// CHECK: tensor.from_elements %[[DSLOPE]] : tensor<f32>
// CHECK: func.func private @attn_score_tile_0(%[[T:.*]]: memref<?xf32>, %[[CAPS:.*]]: memref<?xf32>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: %[[S:.*]] = memref.load %[[CAPS]][%c0]
// CHECK: %[[TABLE:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to
// CHECK: %[[D:.*]] = arith.sitofp
// CHECK: %[[BIAS_D:.*]] = arith.mulf %[[D]], %[[S]]
// CHECK: memref.store %[[BIAS_D]], %[[TABLE]][%[[K]]]
// CHECK: scf.for %[[R:.*]] = %c0 to
// CHECK: scf.for %[[C:.*]] = %c0 to
// CHECK: %[[DOT:.*]] = memref.load %[[T]][%[[AT:.*]]]
// CHECK: %[[R_C:.*]] = arith.subi %[[R]], %[[C]]
// CHECK: %[[DIAGONAL:.*]] = arith.addi %[[R_C]]
// CHECK: %[[BIAS:.*]] = memref.load %[[TABLE]][%[[DIAGONAL]]]
// CHECK: %[[E:.*]] = arith.subf %[[DOT]], %[[BIAS]]
// CHECK: memref.store %[[E]], %[[T]][%[[AT]]]
// CHECK: func.func private @attn_mask_tile_0(
// CHECK: arith.cmpf one
// CHECK: %[[OPEN:.*]] = arith.select
// CHECK: memref.store %[[OPEN]]
// CHECK: func.func private @attn_score_grad_tile_0(%{{.*}}: memref<?xf32>, %[[DS:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[DC_ARG:.*]]: memref<?xf32>,
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P_T:.*]] = memref.alloca
// CHECK: %[[DS_SUMS:.*]] = memref.alloca
// CHECK: scf.for %[[K:.*]] = %c0 to
// CHECK: memref.store %[[ZERO]], %[[DS_SUMS]][%[[K]]]
// CHECK: %[[D:.*]] = arith.sitofp
// CHECK: %[[NEG_ONE:.*]] = arith.negf %[[ONE]]
// CHECK: %[[P_K:.*]] = arith.mulf %[[NEG_ONE]], %[[D]]
// CHECK: memref.store %[[P_K]], %[[P_T]][%[[K]]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[G:.*]] = memref.load %[[DS]][%[[GAT:.*]]]
// CHECK: %[[LIVE:.*]] = arith.cmpf one, %[[G]], %[[ZERO]]
// CHECK: %[[X:.*]] = arith.select %[[LIVE]], %[[G]], %[[ZERO]]
// CHECK: memref.store %[[X]], %[[DS]][%[[GAT]]]
// CHECK: %[[AT_K:.*]] = arith.addi
// CHECK: %[[SUM:.*]] = memref.load %[[DS_SUMS]][%[[AT_K]]]
// CHECK: %[[G_LIVE:.*]] = arith.select %[[LIVE]], %[[G]], %[[ZERO]]
// CHECK: %[[NEXT:.*]] = arith.addf %[[SUM]], %[[G_LIVE]]
// CHECK: memref.store %[[NEXT]], %[[DS_SUMS]][%[[AT_K]]]
// CHECK: %[[DSLOPE:.*]] = scf.for %[[K2:.*]] = %c0 to {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32)
// CHECK: %[[S:.*]] = memref.load %[[DS_SUMS]][%[[K2]]]
// CHECK: %[[P:.*]] = memref.load %[[P_T]][%[[K2]]]
// CHECK: %[[SP:.*]] = arith.mulf %[[S]], %[[P]]
// CHECK: arith.addf %[[ACC]], %{{.*}} fastmath<reassoc>
// CHECK: %[[OLD:.*]] = memref.load %[[DC_ARG]][%c0]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[DSLOPE]]
// CHECK: memref.store %[[NEW]], %[[DC_ARG]][%c0]
func.func @fused_attention_regions(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>,
                                   %m: tensor<2x5xf32>, %slope: tensor<f32>, %do: tensor<2x2x3x3xf32>,
                                   %dl: tensor<2x2x3xf32>)
    -> (tensor<2x2x3x4xf32>, tensor<f32>) {
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%slope : tensor<f32>) {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %dot, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %half = attn.constant dense<0.5> : tensor<f32>
    %after = attn.sub %j, %half : tensor<f32>, tensor<f32>
    %in = attn.step %after : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  %dq, %dk, %dv, %ds = attn.fused_attention_grad %q, %k, %v, %m, %o, %lse, %do, %dl captures(%slope : tensor<f32>) {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>, tensor<2x2x3x3xf32>,
        tensor<2x2x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
      -> tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<f32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %dot, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>, %g: tensor<f32>):
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %ng = attn.neg %g : tensor<f32>
    %dslope = attn.mul %ng, %dist : tensor<f32>, tensor<f32>
    %g1 = attn.reshape %g : tensor<f32> -> tensor<1xf32>
    %gr = attn.broadcast %g1 : tensor<1xf32> -> tensor<4xf32>
    %dq_row = attn.mul %gr, %kj : tensor<4xf32>, tensor<4xf32>
    %dk_row = attn.mul %gr, %qi : tensor<4xf32>, tensor<4xf32>
    attn.yield %dq_row, %dk_row, %dslope : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %half = attn.constant dense<0.5> : tensor<f32>
    %after = attn.sub %j, %half : tensor<f32>, tensor<f32>
    %in = attn.step %after : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  return %dq, %ds : tensor<2x2x3x4xf32>, tensor<f32>
}

// -----

// ALiBi with a slope per head (tensor<2xf32> read by each head as its tensor<f32>): the
// captures go to the _regions kernels as one row per head, and the backward's rows become the
// slope's two elements; the mask region reads the slope too, so has_mask is 2 (the kernel
// takes each head's tile verdicts).
// CHECK-LABEL: func @fused_attention_regions_per_head
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[S0:.*]] = tensor.extract %arg4[%[[C0]]] : tensor<2xf32>
// CHECK-DAG: %[[S1:.*]] = tensor.extract %arg4[%[[C1]]] : tensor<2xf32>
// CHECK-DAG: %[[PER_HEAD:.*]] = arith.constant 2 : i64
// CHECK: tensor.from_elements %[[S0]], %[[S1]] : tensor<2x1xf32>
// CHECK: call @attn_rt_flash_attention_regions_backward({{.*}}, %[[PER_HEAD]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) :
// CHECK: %[[DC:.*]] = bufferization.to_tensor %{{.*}} : memref<2x1xf32>
// CHECK-DAG: %[[D0:.*]] = tensor.extract %[[DC]][%[[C0]], %[[C0]]] : tensor<2x1xf32>
// CHECK-DAG: %[[D1:.*]] = tensor.extract %[[DC]][%[[C1]], %[[C0]]] : tensor<2x1xf32>
// CHECK: tensor.from_elements %[[D0]], %[[D1]] : tensor<2xf32>
// CHECK-NOT: attn_fused_attention_grad_
func.func @fused_attention_regions_per_head(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>,
                                            %v: tensor<2x2x5x3xf32>, %m: tensor<2x5xf32>,
                                            %slope: tensor<2xf32>, %o: tensor<2x2x3x3xf32>,
                                            %lse: tensor<2x2x3xf32>, %do: tensor<2x2x3x3xf32>,
                                            %dl: tensor<2x2x3xf32>) -> tensor<2xf32> {
  %dq, %dk, %dv, %ds = attn.fused_attention_grad %q, %k, %v, %m, %o, %lse, %do, %dl captures(%slope : tensor<2xf32>) {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>, tensor<2x2x3x3xf32>,
        tensor<2x2x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3xf32>
      -> tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %dot, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>, %g: tensor<f32>):
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %ng = attn.neg %g : tensor<f32>
    %dslope = attn.mul %ng, %dist : tensor<f32>, tensor<f32>
    %g1 = attn.reshape %g : tensor<f32> -> tensor<1xf32>
    %gr = attn.broadcast %g1 : tensor<1xf32> -> tensor<4xf32>
    %dq_row = attn.mul %gr, %kj : tensor<4xf32>, tensor<4xf32>
    %dk_row = attn.mul %gr, %qi : tensor<4xf32>, tensor<4xf32>
    attn.yield %dq_row, %dk_row, %dslope : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %far = attn.mul %ij, %s : tensor<f32>, tensor<f32>
    %room = attn.constant dense<1.5> : tensor<f32>
    %left = attn.sub %room, %far : tensor<f32>, tensor<f32>
    %in = attn.step %left : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  return %ds : tensor<2xf32>
}

// -----

// Mask regions that are sliding windows, as attn's expressions build them: `i - j < 255.5`
// (keys at most 255 back, step(c - e)), the spec's `sliding_window: 8` (`abs(i - j) < 8`: 7
// each way) and `j - i <= 2` (two ahead, 1 - step(e - c)). The kernels get the window's sides,
// has_mask 0 and no mask tile function; a mask that hides every key (`i - j < 0`) keeps its
// tile function. Each score is 0.5 * sum(q * k): has_score 0 and scale 0.5, the score tile
// function passed but never called.
// CHECK-LABEL: func @fused_attention_sliding_windows
// CHECK-DAG: %[[NONE:.*]] = arith.constant -1 : i64
// CHECK-DAG: %[[NO_MASK:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[BACK:.*]] = arith.constant 255 : i64
// CHECK-DAG: %[[SEVEN:.*]] = arith.constant 7 : i64
// CHECK-DAG: %[[AHEAD:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[HAS_MASK:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: call @attn_rt_flash_attention_regions({{.*}}, %[[NO_MASK]], %[[BACK]], %[[NONE]], %[[NO_MASK]], %[[HALF]], %[[SCORE0:[^,]*]], %[[SCORE0]])
// CHECK: call @attn_rt_flash_attention_regions({{.*}}, %[[NO_MASK]], %[[SEVEN]], %[[SEVEN]], %[[NO_MASK]], %[[HALF]], %[[SCORE1:[^,]*]], %[[SCORE1]])
// CHECK: call @attn_rt_flash_attention_regions({{.*}}, %[[NO_MASK]], %[[NONE]], %[[AHEAD]], %[[NO_MASK]], %[[HALF]], %[[SCORE2:[^,]*]], %[[SCORE2]])
// CHECK: call @attn_rt_flash_attention_regions({{.*}}, %[[HAS_MASK]], %[[NONE]], %[[NONE]], %[[NO_MASK]], %[[HALF]], %{{[^,]*}}, %[[EMPTY:[^)]*]])
// CHECK-NOT: func.func private @attn_mask_tile_{{[0-9]+}}(
// CHECK: func.func private @attn_mask_tile_0(
// CHECK-NOT: func.func private @attn_mask_tile_{{[0-9]+}}(
func.func @fused_attention_sliding_windows(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>,
                                           %v: tensor<2x2x5x3xf32>, %m: tensor<2x5xf32>)
    -> (tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>) {
  %o0, %l0 = attn.fused_attention %q, %k, %v, %m {causal = true}
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %c = attn.constant dense<0.5> : tensor<f32>
    %e = attn.mul %dot, %c : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>):
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %room = attn.constant dense<255.5> : tensor<f32>
    %left = attn.sub %room, %ij : tensor<f32>, tensor<f32>
    %in = attn.step %left : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  %o1, %l1 = attn.fused_attention %q, %k, %v, %m
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %c = attn.constant dense<0.5> : tensor<f32>
    %e = attn.mul %dot, %c : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>):
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %nij = attn.neg %ij : tensor<f32>
    %abs = attn.maximum %ij, %nij : tensor<f32>, tensor<f32>
    %w = attn.constant dense<8.0> : tensor<f32>
    %room = attn.sub %w, %abs : tensor<f32>, tensor<f32>
    %in = attn.step %room : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  %o2, %l2 = attn.fused_attention %q, %k, %v, %m
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %c = attn.constant dense<0.5> : tensor<f32>
    %e = attn.mul %dot, %c : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>):
    %ji = attn.sub %j, %i : tensor<f32>, tensor<f32>
    %two = attn.constant dense<2.0> : tensor<f32>
    %past = attn.sub %ji, %two : tensor<f32>, tensor<f32>
    %out = attn.step %past : tensor<f32>
    %one = attn.constant dense<1.0> : tensor<f32>
    %in = attn.sub %one, %out : tensor<f32>, tensor<f32>
    attn.yield %in : tensor<f32>
  }
  %o3, %l3 = attn.fused_attention %q, %k, %v, %m
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x3xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %c = attn.constant dense<0.5> : tensor<f32>
    %e = attn.mul %dot, %c : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>):
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %zero = attn.constant dense<0.0> : tensor<f32>
    %left = attn.sub %zero, %ij : tensor<f32>, tensor<f32>
    %in = attn.step %left : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  return %o0, %o1, %o2, %o3 : tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>
}
