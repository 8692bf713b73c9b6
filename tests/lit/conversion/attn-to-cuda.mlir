// RUN: attn-opt %s -attn-to-cuda | FileCheck %s
// RUN: attn-opt %s -attn-to-cuda=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: attn-opt %s -attn-to-cuda | FileCheck %s --check-prefix=KERNEL
// Without the runtime's kernels (the CPU's check, --device cuda-on-cpu), only the generated
// attention kernels: the rest is left for attn-to-onednn.
// RUN: attn-opt %s -attn-to-cuda=runtime-kernels=false | FileCheck %s --check-prefix=CHECK-ON-CPU
// CHECK-ON-CPU-NOT: attn_rt_cuda
// CHECK-ON-CPU: call @attn_fused_attention_{{[0-9]+}}(

// Head dim 64, a scaled dot product: forward and backward become the CUDA kernels' calls, with
// the CPU flash kernels' operands, causality and scale.
// CHECK-DAG: func.func private @attn_rt_cuda_flash_attention(memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, f32) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func @on_the_gpu
// CHECK-DAG: %[[CAUSAL:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: call @attn_rt_cuda_flash_attention(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CAUSAL]], %[[SCALE]])
// CHECK: call @attn_rt_cuda_flash_attention_backward({{.*}}) : ({{.*}}, i64, f32) -> ()
// CHECK-NOT: attn.fused_attention
func.func @on_the_gpu(%q: tensor<2x2x3x64xf32>, %k: tensor<2x2x5x64xf32>, %v: tensor<2x2x5x64xf32>,
                      %m: tensor<2x5xf32>, %do: tensor<2x2x3x64xf32>, %dl: tensor<2x2x3xf32>)
    -> (tensor<2x2x3x64xf32>, tensor<2x2x5x64xf32>, tensor<2x2x5x64xf32>) {
  %o, %lse = attn.fused_attention %q, %k, %v, %m {causal = true}
      : tensor<2x2x3x64xf32>, tensor<2x2x5x64xf32>, tensor<2x2x5x64xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x64xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<64xf32>, %kj: tensor<64xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<64xf32>, tensor<64xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<64xf32>
    %c = attn.constant dense<0.125> : tensor<f32>
    %s = attn.mul %dot, %c : tensor<f32>, tensor<f32>
    attn.yield %s : tensor<f32>
  }
  %dq, %dk, %dv = attn.fused_attention_grad %q, %k, %v, %m, %o, %lse, %do, %dl {causal = true}
      : tensor<2x2x3x64xf32>, tensor<2x2x5x64xf32>, tensor<2x2x5x64xf32>, tensor<2x5xf32>, tensor<2x2x3x64xf32>,
        tensor<2x2x3xf32>, tensor<2x2x3x64xf32>, tensor<2x2x3xf32>
      -> tensor<2x2x3x64xf32>, tensor<2x2x5x64xf32>, tensor<2x2x5x64xf32> {
  ^bb0(%qi: tensor<64xf32>, %kj: tensor<64xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<64xf32>, tensor<64xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<64xf32>
    %c = attn.constant dense<0.125> : tensor<f32>
    %s = attn.mul %dot, %c : tensor<f32>, tensor<f32>
    attn.yield %s : tensor<f32>
  } {
  ^bb0(%qi: tensor<64xf32>, %kj: tensor<64xf32>, %i: tensor<f32>, %j: tensor<f32>, %ds: tensor<f32>):
    %c = attn.constant dense<0.125> : tensor<f32>
    %dd = attn.mul %ds, %c : tensor<f32>, tensor<f32>
    %dqi = attn.mul %dd, %kj : tensor<f32>, tensor<64xf32>
    %dkj = attn.mul %dd, %qi : tensor<f32>, tensor<64xf32>
    attn.yield %dqi, %dkj : tensor<64xf32>, tensor<64xf32>
  }
  return %dq, %dk, %dv : tensor<2x2x3x64xf32>, tensor<2x2x5x64xf32>, tensor<2x2x5x64xf32>
}

// Head dim 4: the flash kernels are not built for it, so the op calls a kernel generated for
// it, in its GPU form (checked below, KERNEL).
// CHECK-LABEL: func @head_dim_4_is_a_generated_kernel
// CHECK: call @attn_fused_attention_{{[0-9]+}}(
// CHECK-NOT: attn_rt_cuda
// REMARK: remark: a generated GPU kernel (a thread per row), not the flash kernels: its head dims are 4 (keys) and 4 (values); the GPU kernels take 64 or 128, the same for both
func.func @head_dim_4_is_a_generated_kernel(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>,
                            %m: tensor<2x5xf32>) -> tensor<2x2x3x4xf32> {
  %o, %lse = attn.fused_attention %q, %k, %v, %m
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x5xf32>
      -> tensor<2x2x3x4xf32>, tensor<2x2x3xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    attn.yield %dot : tensor<f32>
  }
  return %o : tensor<2x2x3x4xf32>
}

// A score with a capture (Bahdanau's v_a): a generated kernel too.
// CHECK-LABEL: func @additive_is_a_generated_kernel
// CHECK: call @attn_fused_attention_{{[0-9]+}}(
// REMARK: remark: a generated GPU kernel (a thread per row), not the flash kernels: its score is not c * sum(q * k) alone
func.func @additive_is_a_generated_kernel(%q: tensor<2x1x1x64xf32>, %k: tensor<2x1x5x64xf32>, %v: tensor<2x1x5x64xf32>,
                          %m: tensor<2x5xf32>, %va: tensor<64xf32>) -> tensor<2x1x1x64xf32> {
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%va : tensor<64xf32>)
      : tensor<2x1x1x64xf32>, tensor<2x1x5x64xf32>, tensor<2x1x5x64xf32>, tensor<2x5xf32>
      -> tensor<2x1x1x64xf32>, tensor<2x1x1xf32> {
  ^bb0(%qi: tensor<64xf32>, %kj: tensor<64xf32>, %i: tensor<f32>, %j: tensor<f32>, %a: tensor<64xf32>):
    %sum = attn.add %qi, %kj : tensor<64xf32>, tensor<64xf32>
    %t = attn.tanh %sum : tensor<64xf32>
    %p = attn.mul %t, %a : tensor<64xf32>, tensor<64xf32>
    %s = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<64xf32>
    attn.yield %s : tensor<f32>
  }
  return %o : tensor<2x1x1x64xf32>
}

// The backward of ALiBi with a slope per head (tensor<2xf32>, head h reading element h).
// CHECK-LABEL: func @per_head_grad
// CHECK: call @attn_fused_attention_grad_0(
func.func @per_head_grad(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>,
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
  }
  return %ds : tensor<2xf32>
}

// The embedding's gradient: ids and dy flattened to positions ([6], [6, 4]), then a call of
// a kernel generated for it (checked below, KERNEL).
// CHECK-LABEL: func @embedding_grad
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: call @attn_embedding_grad_1(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<?xi32, strided<[?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
// CHECK-NOT: attn.embedding_grad
// CHECK-ON-CPU-LABEL: func @embedding_grad
// CHECK-ON-CPU: call @attn_embedding_grad_1(
func.func @embedding_grad(%ids: tensor<2x3xi32>, %dy: tensor<2x3x4xf32>) -> tensor<10x4xf32> {
  %dt = attn.embedding_grad %ids, %dy : tensor<2x3xi32>, tensor<2x3x4xf32> -> tensor<10x4xf32>
  return %dt : tensor<10x4xf32>
}

// A single id (rank 0): one position, [1] and [1, 4].
// CHECK-LABEL: func @embedding_grad_of_one_id
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<i32> into tensor<1xi32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK: call @attn_embedding_grad_0(
func.func @embedding_grad_of_one_id(%id: tensor<i32>, %dy: tensor<4xf32>) -> tensor<10x4xf32> {
  %dt = attn.embedding_grad %id, %dy : tensor<i32>, tensor<4xf32> -> tensor<10x4xf32>
  return %dt : tensor<10x4xf32>
}

// The generated kernels, in their GPU form, in the order they were made.
// The embedding's gradient: a thread per column (D = 4: one block of 64), which zeroes its
// column of the table's gradient (V = 10 rows) and adds the positions' rows in order (6),
// those whose id is in [0, 10).
// KERNEL-LABEL: func.func private @attn_embedding_grad_1(
// KERNEL-SAME: %[[IDS:.*]]: memref<?xi32, {{.*}}>, %[[DY:.*]]: memref<?x?xf32, {{.*}}>, %[[OUT:.*]]: memref<?x?xf32, {{.*}}>)
// KERNEL: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// KERNEL: %[[D:.*]] = arith.addi
// KERNEL: arith.cmpi ult, %[[D]], %c4
// KERNEL: scf.for %[[V:.*]] = %c0 to %c10
// KERNEL: memref.store %{{.*}}, %[[OUT]][%[[V]], %[[D]]]
// KERNEL: scf.for %[[N:.*]] = %c0 to %c6
// KERNEL: %[[ID:.*]] = memref.load %[[IDS]][%[[N]]]
// KERNEL: scf.if
// KERNEL: %[[OLD:.*]] = memref.load %[[OUT]][%[[ROW:.*]], %[[D]]]
// KERNEL: %[[ADD:.*]] = memref.load %[[DY]][%[[N]], %[[D]]]
// KERNEL: %[[SUM:.*]] = arith.addf %[[OLD]], %[[ADD]]
// KERNEL: memref.store %[[SUM]], %[[OUT]][%[[ROW]], %[[D]]]
// KERNEL: gpu.terminator
// KERNEL-NOT: gpu.launch
// KERNEL: return
// Backward: deltas and the slope's partials, a row each of the 12 query rows; a launch over
// the query rows (d_q, each row's slope share; each thread loads its head's slope), one
// over the 20 key rows (d_k, d_v, over the 3 queries, reading the deltas), one over the
// slope's 2 elements, each summing the 12 rows' shares of its head.
// KERNEL-LABEL: func.func private @attn_fused_attention_grad_0(
// KERNEL-DAG: %[[DELTAS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12x1xf32>
// KERNEL-DAG: %[[PARTS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12x1xf32>
// KERNEL: gpu.launch
// KERNEL: arith.cmpi ult, %{{.*}}, %c12
// KERNEL: memref.store %{{.*}}, %[[DELTAS]]
// KERNEL: memref.store %{{.*}}, %[[PARTS]]
// KERNEL: gpu.terminator
// KERNEL: gpu.launch
// KERNEL: arith.cmpi ult, %{{.*}}, %c20
// KERNEL: memref.load %[[DELTAS]]
// KERNEL: gpu.terminator
// KERNEL: gpu.launch
// KERNEL: arith.cmpi ult, %{{.*}}, %c2
// KERNEL: scf.for %{{.*}} = %c0 to %c12
// KERNEL: memref.load %[[PARTS]]
// KERNEL: gpu.terminator
// KERNEL-NOT: gpu.launch
// KERNEL: return
// The additive score, its capture v_a a row ([64]) read inside the thread: the scores'
// launch (B T S = 10 pairs) computes tanh(q + k) . v_a; then the softmax (2 rows) and the
// output (B T Dv = 128 elements, two blocks).
// KERNEL-LABEL: func.func private @attn_fused_attention_0(
// KERNEL: gpu.launch
// KERNEL: arith.cmpi ult, %{{.*}}, %c10
// KERNEL: math.tanh
// KERNEL: gpu.terminator
// KERNEL: gpu.launch
// KERNEL-NOT: math.tanh
// KERNEL: gpu.terminator
// KERNEL: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1)
// KERNEL: arith.cmpi ult, %{{.*}}, %c128
// KERNEL: gpu.terminator
// KERNEL-NOT: gpu.launch
// KERNEL: return
// Head dim 4, forward: three launches, a thread per (query row, key) for the scores (B H T S
// = 60), in scratch [B H T = 12, S = 5]; a thread per query row (12) for the softmax over its
// row of scratch and the log-sum-exp; a thread per output element (B H T Dv = 48). One block
// of 64 each. The output is written whole (no fill); the host reads nothing.
// KERNEL-LABEL: func.func private @attn_fused_attention_1(
// KERNEL-NOT: linalg.fill
// KERNEL: %[[SCORES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12x5xf32>
// KERNEL-NOT: memref.load
// KERNEL: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// KERNEL: arith.cmpi ult, %{{.*}}, %c60
// KERNEL: memref.store %{{.*}}, %[[SCORES]]
// KERNEL: gpu.terminator
// KERNEL: gpu.launch
// KERNEL: %[[ROW:.*]] = arith.addi
// KERNEL: arith.cmpi ult, %[[ROW]], %c12
// KERNEL: memref.load %[[SCORES]][%[[ROW]], %{{.*}}]
// KERNEL: math.log
// KERNEL: memref.store %{{.*}}, %[[SCORES]][%[[ROW]], %{{.*}}]
// KERNEL: gpu.terminator
// KERNEL: gpu.launch
// KERNEL: arith.cmpi ult, %{{.*}}, %c48
// KERNEL: memref.load %[[SCORES]]
// KERNEL: gpu.terminator
// KERNEL-NOT: gpu.launch
// KERNEL: return

// An unmasked LSTM and its backward: the GPU's sequence loop, through the CPU RNN kernels'
// signature and kind (2: LSTM).
// CHECK-LABEL: func @lstm_on_the_gpu
// CHECK-DAG: %[[LSTM:.*]] = arith.constant 2 : i64
// CHECK: call @attn_rt_cuda_rnn_forward({{.*}}, %[[LSTM]], {{.*}})
// CHECK: call @attn_rt_cuda_rnn_backward({{.*}}, %[[LSTM]], {{.*}})
// CHECK-NOT: attn.lstm
func.func @lstm_on_the_gpu(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>, %dhs: tensor<4x6x8xf32>) -> tensor<2x32xf32> {
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b {training} : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  %g:6 = attn.lstm_grad %x, %h0, %c0, %wi, %wh, %b, %hs, %h, %c, %dhs, %h0, %c0 : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %g#3 : tensor<2x32xf32>
}

// A masked GRU goes too, with its mask and the masked flag (the last operand), and so does a
// vanilla RNN (kind 0, not masked).
// CHECK-LABEL: func @masked_gru_and_vanilla_rnn_go
// CHECK-DAG: %[[GRU:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[VANILLA:.*]] = arith.constant 0 : i64
// CHECK: call @attn_rt_cuda_rnn_forward({{.*}}, %[[GRU]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[GRU]])
// CHECK: call @attn_rt_cuda_rnn_forward({{.*}}, %[[VANILLA]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[VANILLA]])
// CHECK-NOT: attn.rnn
func.func @masked_gru_and_vanilla_rnn_go(%x: tensor<4x6x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x24xf32>, %wh: tensor<8x24xf32>, %bi: tensor<24xf32>, %bh: tensor<24xf32>, %m: tensor<4x6x1xf32>, %wax: tensor<2x8xf32>, %waa: tensor<8x8xf32>, %ba: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh mask(%m : tensor<4x6x1xf32>) : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
  %rs, %r = attn.rnn %x, %h0, %wax, %waa, %ba : tensor<4x6x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  return %h, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// A projected LSTM (oneDNN's LSTMP on the CPU) goes too: its projection weight is an operand
// and the projection flag (last but one) is set.
// CHECK-LABEL: func @projected_lstm_goes
// CHECK-DAG: %[[LSTM:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[ON:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[OFF:.*]] = arith.constant 0 : i64
// CHECK: call @attn_rt_cuda_rnn_forward({{.*}}, %[[LSTM]], %[[OFF]], %[[OFF]], %[[OFF]], %[[ON]], %[[OFF]])
// CHECK-NOT: attn.lstm
func.func @projected_lstm_goes(%x: tensor<4x6x2xf32>, %h0: tensor<4x3xf32>, %c0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<3x32xf32>, %b: tensor<32xf32>, %wp: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b projection(%wp : tensor<8x3xf32>) : tensor<4x6x2xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<3x32xf32>, tensor<32xf32>
  return %h : tensor<4x3xf32>
}

// The f32 and bf16 products: cuBLASLt through the CPU kernels' signatures, transposes kept. A
// dense without a bias is a product. int8 products stay for attn-to-onednn.
// CHECK-LABEL: func @f32_products_go
// CHECK: %[[T:.*]] = arith.constant 1 : i64
// CHECK: call @attn_rt_cuda_matmul({{.*}}, %[[T]]) : (memref<?x?x?xf32, {{.*}}>, memref<?x?x?xf32, {{.*}}>, memref<?x?x?xf32, {{.*}}>, i64, i64) -> ()
// CHECK: call @attn_rt_cuda_dense({{.*}}) : (memref<?x?xf32, {{.*}}>, memref<?x?xf32, {{.*}}>, memref<?xf32, {{.*}}>, memref<?x?xf32, {{.*}}>) -> ()
// CHECK: call @attn_rt_cuda_matmul(
// CHECK: call @attn_rt_cuda_dense_bf16({{.*}}) : (memref<?x?xbf16, {{.*}}>, memref<?x?xbf16, {{.*}}>, memref<?xf32, {{.*}}>, memref<?x?xf32, {{.*}}>) -> ()
// CHECK: attn.dense {{.*}}#attn.precision<int8>
// CHECK-NOT: call @attn_rt_cuda
// CHECK: return
func.func @f32_products_go(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>, %x: tensor<6x4xf32>,
                           %w: tensor<4x5xf32>, %bias: tensor<5xf32>, %xb: tensor<6x4xbf16>,
                           %wb: tensor<4x5xbf16>)
    -> (tensor<2x3x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>) {
  %c = attn.matmul %a, %b {transpose_rhs = true} : tensor<2x3x4xf32>, tensor<2x5x4xf32>
  %y = attn.dense %x, %w, %bias : tensor<6x4xf32>, tensor<4x5xf32>, tensor<5xf32>
  %z = attn.dense %x, %w : tensor<6x4xf32>, tensor<4x5xf32>
  %yb = attn.dense %xb, %wb, %bias {precision = #attn.precision<bf16>} : tensor<6x4xbf16>, tensor<4x5xbf16>, tensor<5xf32>
  %yi = attn.dense %x, %w, %bias {precision = #attn.precision<int8>} : tensor<6x4xf32>, tensor<4x5xf32>, tensor<5xf32>
  return %c, %y, %z, %yb, %yi : tensor<2x3x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>
}
