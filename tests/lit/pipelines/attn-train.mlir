// The training pipeline as attnc builds it (pipelines::buildTraining): structural fusion
// first, so the scan over an RNN cell differentiates as one attn.rnn (its backward one
// attn.rnn_grad), then attn-autodiff (@loss_grad) and attn-train-step with the optimizer.
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-train{optimizer=sgd momentum=0.9})' | FileCheck %s
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-train{fuse=false})' | FileCheck %s --check-prefix=UNFUSED

// CHECK-LABEL: func.func @loss(
// CHECK: attn.rnn
// CHECK-NOT: attn.scan
// CHECK-LABEL: func.func @loss_grad(
// CHECK: attn.rnn_grad
// CHECK-LABEL: func.func @train_step(
// CHECK: attn.param "wax/momentum" {init = #attn.init<zeros>
// CHECK: attn.sgd_update {{.*}} {momentum = 0.899999976 : f32}

// UNFUSED-LABEL: func.func @loss(
// UNFUSED: attn.scan
// UNFUSED-NOT: attn.rnn_grad
// UNFUSED-LABEL: func.func @train_step(
// UNFUSED: attn.adam_update
func.func @loss(%x: tensor<4x6x2xf32>, %y: tensor<4x1xf32>) -> tensor<f32> {
  %h0 = attn.constant dense<0.0> : tensor<4x8xf32>
  %wax = attn.param "wax" : tensor<2x8xf32>
  %waa = attn.param "waa" : tensor<8x8xf32>
  %b = attn.param "b" : tensor<8xf32>
  %wo = attn.param "wo" : tensor<8x1xf32>
  %h = attn.scan inits(%h0) over(%x) consts(%wax, %waa, %b) : (tensor<4x8xf32>, tensor<4x6x2xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x2xf32>, %kwax: tensor<2x8xf32>, %kwaa: tensor<8x8xf32>, %kb: tensor<8xf32>):
    %ht = attn.rnn_cell %xt, %hp, %kwax, %kwaa, %kb : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    attn.yield %ht : tensor<4x8xf32>
  }
  %p = attn.matmul %h, %wo : tensor<4x8xf32>, tensor<8x1xf32>
  %l = attn.mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32>
  return %l : tensor<f32>
}
