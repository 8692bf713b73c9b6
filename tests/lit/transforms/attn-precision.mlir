// RUN: attn-opt %s -split-input-file -attn-precision=policy=bf16 | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-precision=policy=f32 | FileCheck %s --check-prefix=F32
// RUN: attn-opt %s -split-input-file -attn-precision="policy=bf16 remarks=true" 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not attn-opt %s -split-input-file -attn-precision=policy=int4 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: attn-opt %s -attn-precision=policy=bf16 -attn-autodiff | FileCheck %s --check-prefix=GRAD

// Every product takes the policy; operands and results stay f32, so nothing else changes.
// CHECK-LABEL: func.func @loss(
// CHECK: attn.matmul %{{.*}}, %{{.*}} {precision = #attn.precision<bf16>} : tensor<4x8xf32>, tensor<8x8xf32>
// CHECK: attn.dense %{{.*}}, %{{.*}}, %{{.*}} {precision = #attn.precision<bf16>} : tensor<4x8xf32>, tensor<8x1xf32>, tensor<1xf32>
// CHECK: attn.mse
// The f32 policy changes nothing.
// F32-LABEL: func.func @loss(
// F32-NOT: precision
// F32: attn.mse
// BAD: error: attn-precision: unknown policy 'int4' (f32 | bf16)
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

// Products without a bf16 kernel yet stay f32, and --remarks says so.
// REMARK: remark: 'attn.lstm' stays f32: it has no bf16 kernel yet
// CHECK-LABEL: func.func @sequence(
// CHECK: attn.lstm
// CHECK-NOT: precision
func.func @sequence(%x: tensor<2x3x1xf32>, %h0: tensor<2x4xf32>, %wi: tensor<1x16xf32>,
                    %wh: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<2x3x4xf32> {
  %hs, %h, %c = attn.lstm %x, %h0, %h0, %wi, %wh, %b : tensor<2x3x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x16xf32>, tensor<4x16xf32>, tensor<16xf32>
  return %hs : tensor<2x3x4xf32>
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
