// RUN: attn-opt %s -split-input-file -attn-precision=policy=bf16 | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-precision=policy=f32 | FileCheck %s --check-prefix=F32
// RUN: attn-opt %s -split-input-file -attn-precision="policy=bf16 remarks=true" 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not attn-opt %s -split-input-file -attn-precision=policy=int4 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: attn-opt %s -attn-precision=policy=bf16 -attn-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: attn-opt %s -split-input-file -attn-precision="policy=int8 remarks=true" 2>&1 | FileCheck %s --check-prefix=INT8
// RUN: not attn-opt %s -attn-precision=policy=int8 -attn-autodiff 2>&1 | FileCheck %s --check-prefix=INT8GRAD
// RUN: attn-opt %s -split-input-file -attn-precision="policy=int8 remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INT8REMARK
// RUN: attn-opt %s -attn-precision=policy=bf16 -attn-autodiff=func=seqloss | FileCheck %s --check-prefix=SEQGRAD

// Every product takes the policy; operands and results stay f32, so nothing else changes.
// CHECK-LABEL: func.func @loss(
// CHECK: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<bf16>} : tensor<4x8xf32>, tensor<8x8xf32>
// CHECK: attn.dense %{{.*}}, %{{.*}}, %{{.*}} {precision = #attn.precision<bf16>} : tensor<4x8xf32>, tensor<8x1xf32>, tensor<1xf32>
// CHECK: attn.mse
// The f32 policy changes nothing.
// F32-LABEL: func.func @loss(
// F32-NOT: precision
// F32: attn.mse
// BAD: error: attn-precision: unknown policy 'int4' (f32 | bf16 | int8)
// int8 takes the products with a parameter's weight: here both.
// INT8-LABEL: func.func @loss(
// INT8: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<int8>} : tensor<4x8xf32>, tensor<8x8xf32>
// INT8: attn.dense %{{.*}}, %{{.*}}, %{{.*}} {precision = #attn.precision<int8>}
// int8 is for inference: a program with an int8 product is not differentiated.
// INT8GRAD: error: 'attn.dense' op computes in int8, which is for inference: a program that is differentiated computes in f32 or bf16
// The backward of a bf16 product is bf16 products (attn-autodiff through the gradient rules).
// GRAD-LABEL: func.func @loss_grad(
// GRAD: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<bf16>, transpose_rhs = true}
// GRAD: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<bf16>, transpose_lhs = true}
func.func @loss(%x: tensor<4x8xf32>, %y: tensor<4x1xf32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<8x8xf32>
  %wo = attn.param "out" : tensor<8x1xf32>
  %bo = attn.param "out_b" : tensor<1xf32>
  %h = attn.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %t = attn.tanh %h : tensor<4x8xf32>
  %p = attn.dense %t, %wo, %bo : tensor<4x8xf32>, tensor<8x1xf32>, tensor<1xf32>
  %l = attn.mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32>
  return %l : tensor<f32>
}

// -----

// A precision written by hand wins over the policy: a product pinned to f32 stays f32.
// CHECK-LABEL: func.func @pinned(
// CHECK: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<f32>}
// CHECK: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<bf16>}
func.func @pinned(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %c = attn.matmul %a, %b {precision = #attn.precision<f32>} : tensor<4x8xf32>, tensor<8x8xf32>
  %d = attn.matmul %c, %b : tensor<4x8xf32>, tensor<8x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// The recurrent sequence ops take bf16 (oneDNN's bf16 RNN), and their backward op the
// forward's precision. An LSTM with a projection has no bf16 kernel (oneDNN 2.6's bf16 LSTMP
// computes another layer), nor a sequence op an int8 one: they stay f32, and --remarks says so.
// CHECK-LABEL: func.func @seqloss(
// CHECK: attn.lstm {{.*}} {precision = #attn.precision<bf16>}
// CHECK: attn.lstm {{.*}} projection(
// CHECK-NOT: precision
// CHECK: attn.reduce_mean
// REMARK: remark: 'attn.lstm' stays f32: it has no bf16 kernel
// INT8REMARK: remark: 'attn.lstm' stays f32: it has no int8 kernel
// SEQGRAD-LABEL: func.func @seqloss_grad(
// SEQGRAD: attn.lstm {{.*}} {precision = #attn.precision<bf16>, training}
// SEQGRAD: attn.lstm_grad {{.*}} {precision = #attn.precision<bf16>}
func.func @seqloss(%x: tensor<2x3x1xf32>, %h0: tensor<2x4xf32>, %p0: tensor<2x2xf32>) -> tensor<f32> {
  %wi = attn.param "wi" : tensor<1x16xf32>
  %wh = attn.param "wh" : tensor<4x16xf32>
  %b = attn.param "b" : tensor<16xf32>
  %wh2 = attn.param "wh2" : tensor<2x16xf32>
  %wp = attn.param "wp" : tensor<4x2xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %h0, %wi, %wh, %b : tensor<2x3x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x16xf32>, tensor<4x16xf32>, tensor<16xf32>
  %ps, %p, %pc = attn.lstm %x, %p0, %h0, %wi, %wh2, %b projection(%wp : tensor<4x2xf32>) : tensor<2x3x1xf32>, tensor<2x2xf32>, tensor<2x4xf32>, tensor<1x16xf32>, tensor<2x16xf32>, tensor<16xf32>
  %l1 = attn.reduce_mean %hs {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32>
  return %l1 : tensor<f32>
}

// -----

// The flash attention takes bf16 where queries and keys fill its 128 x 128 tiles; a shorter one
// (and so every decoding step) stays f32, and --remarks says why; a score the flash kernels do
// not compute (Bahdanau's, additive) has no bf16 kernel.
// CHECK-LABEL: func.func @attention(
// CHECK: attn.fused_attention {{.*}} {causal = true, precision = #attn.precision<bf16>} : tensor<1x2x128x16xf32>
// CHECK: attn.fused_attention {{.*}} {causal = true} : tensor<1x2x64x16xf32>
// CHECK: attn.fused_attention {{.*}} captures
// CHECK-NOT: precision
// CHECK: return
// REMARK: remark: 'attn.fused_attention' stays f32: bf16 is slower at its sizes
// REMARK: remark: 'attn.fused_attention' stays f32: it has no bf16 kernel
func.func @attention(%q: tensor<1x2x128x16xf32>, %m: tensor<1x128xf32>,
                     %q2: tensor<1x2x64x16xf32>, %m2: tensor<1x64xf32>,
                     %q3: tensor<4x1x1x16xf32>, %k3: tensor<4x1x10x16xf32>, %m3: tensor<4x10xf32>,
                     %v3: tensor<16xf32>)
    -> (tensor<1x2x128x16xf32>, tensor<1x2x64x16xf32>, tensor<4x1x1x16xf32>) {
  %o, %lse = attn.fused_attention %q, %q, %q, %m {causal = true}
      : tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x128xf32>
      -> tensor<1x2x128x16xf32>, tensor<1x2x128xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    %c = attn.constant dense<0.25> : tensor<f32>
    %s = attn.mul %d, %c : tensor<f32>, tensor<f32>
    attn.yield %s : tensor<f32>
  }
  %o2, %lse2 = attn.fused_attention %q2, %q2, %q2, %m2 {causal = true}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x64xf32>
      -> tensor<1x2x64x16xf32>, tensor<1x2x64xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %d : tensor<f32>
  }
  %o3, %lse3 = attn.fused_attention %q3, %k3, %k3, %m3 captures(%v3 : tensor<16xf32>)
      : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x16xf32>, tensor<4x10xf32>
      -> tensor<4x1x1x16xf32>, tensor<4x1x1xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>,
       %va: tensor<16xf32>):
    %sum = attn.add %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %t = attn.tanh %sum : tensor<16xf32>
    %tv = attn.mul %t, %va : tensor<16xf32>, tensor<16xf32>
    %e = attn.reduce_sum %tv {axes = array<i64: 0>} : tensor<16xf32>
    attn.yield %e : tensor<f32>
  }
  return %o, %o2, %o3 : tensor<1x2x128x16xf32>, tensor<1x2x64x16xf32>, tensor<4x1x1x16xf32>
}

// -----

// A dot product then scalar code (ALiBi with a slope per head, a mask region) runs on the flash
// kernels' _regions form, which has bf16 tiles too.
// CHECK-LABEL: func.func @alibi(
// CHECK: attn.fused_attention {{.*}} captures(%{{.*}} : tensor<2xf32>) {causal = true, precision = #attn.precision<bf16>}
func.func @alibi(%q: tensor<1x2x128x16xf32>, %m: tensor<1x128xf32>, %slope: tensor<2xf32>)
    -> tensor<1x2x128x16xf32> {
  %o, %lse = attn.fused_attention %q, %q, %q, %m captures(%slope : tensor<2xf32>) {causal = true}
      : tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x128xf32>
      -> tensor<1x2x128x16xf32>, tensor<1x2x128xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %b = attn.mul %ij, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %d, %b : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  } mask {
  ^bb0(%i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %w = attn.constant dense<63.5> : tensor<f32>
    %room = attn.sub %w, %ij : tensor<f32>, tensor<f32>
    %in = attn.step %room : tensor<f32>
    attn.yield %in : tensor<f32>
  }
  return %o : tensor<1x2x128x16xf32>
}

// -----

// int8 goes to the products whose weight is a parameter, which the kernels quantise once: an
// attn.param, an entry's parameter argument (attn-params-to-args), one used inside a scan,
// and the tied output layer's table (a matmul with one [N, K] weight, transposed). A weight
// that is computed, and products of two activations, stay f32.
// INT8: remark: 'attn.matmul' stays f32: its weight is computed, not a parameter (int8 quantises a parameter once)
// INT8: remark: 'attn.matmul' stays f32: it has no int8 kernel
// INT8-LABEL: func.func @int8(
// INT8: attn.dense %{{.*}}, %{{.*}}, %{{.*}} {precision = #attn.precision<int8>}
// INT8: attn.dense %{{.*}}, %{{.*}} {precision = #attn.precision<int8>}
// INT8: attn.matmul %{{.*}}, %{{.*}} : tensor<2x3x8xf32>, tensor<8x8xf32>
// INT8: attn.matmul %{{.*}}, %{{.*}} {transpose_rhs = true} : tensor<2x3x8xf32>, tensor<2x3x8xf32>
// INT8: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<int8>, transpose_rhs = true} : tensor<2x3x8xf32>, tensor<5x8xf32>
// INT8: attn.scan
// INT8: attn.dense %{{.*}}, %{{.*}} {precision = #attn.precision<int8>}
func.func @int8(%w: tensor<8x8xf32> {attn.param = "w"}, %b: tensor<8xf32> {attn.param = "b"},
                %x: tensor<2x3x8xf32>, %k: tensor<8x8xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x5xf32>, tensor<2x8xf32>) {
  %emb = attn.param "emb" : tensor<5x8xf32>
  %h = attn.dense %x, %w, %b : tensor<2x3x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  %g = attn.dense %h, %w : tensor<2x3x8xf32>, tensor<8x8xf32>
  %a = attn.matmul %g, %k : tensor<2x3x8xf32>, tensor<8x8xf32>
  %s = attn.matmul %a, %a {transpose_rhs = true} : tensor<2x3x8xf32>, tensor<2x3x8xf32>
  %l = attn.matmul %g, %emb {transpose_rhs = true} : tensor<2x3x8xf32>, tensor<5x8xf32>
  %h0 = attn.constant dense<0.0> : tensor<2x8xf32>
  %last, %all = attn.scan inits(%h0) over(%x) {axis = 1 : i64}
      : (tensor<2x8xf32>, tensor<2x3x8xf32>) -> (tensor<2x8xf32>, tensor<2x3x8xf32>) {
  ^bb0(%prev: tensor<2x8xf32>, %x_t: tensor<2x8xf32>):
    %p = attn.dense %prev, %w : tensor<2x8xf32>, tensor<8x8xf32>
    %n = attn.add %p, %x_t : tensor<2x8xf32>, tensor<2x8xf32>
    attn.yield %n, %n : tensor<2x8xf32>, tensor<2x8xf32>
  }
  return %s, %l, %last : tensor<2x3x3xf32>, tensor<2x3x5xf32>, tensor<2x8xf32>
}
