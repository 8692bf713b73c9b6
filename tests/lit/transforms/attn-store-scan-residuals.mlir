// RUN: attn-opt %s -attn-autodiff -attn-store-scan-residuals -split-input-file | FileCheck %s
// RUN: attn-opt %s -attn-autodiff -attn-store-scan-residuals=budget-mb=0 -split-input-file \
// RUN:   | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s -attn-autodiff -attn-store-scan-residuals=budget-mb=1 -split-input-file \
// RUN:   | FileCheck %s --check-prefix=ONE

// The forward scan (attn-autodiff's, with saved carries) also yields, per step and before the
// saved carries, what the gradient reads of the cell: 1 - h^2 (computed from h alone, so in
// the forward now); the backward reads it as a sequence and no longer recomputes the cell.
// CHECK-LABEL: func.func @loss_grad(%{{.*}}: tensor<2x3x1xf32>
// CHECK: %[[F:.*]]:3 = attn.scan inits(%{{.*}}) over(%{{.*}}) consts({{.*}}) {attn.saved_carries, axis = 1 : i64}
// CHECK-SAME: -> (tensor<2x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
// CHECK: %[[H:.*]] = attn.rnn_cell
// CHECK: %[[HH:.*]] = attn.mul %[[H]], %[[H]]
// CHECK: %[[D:.*]] = attn.sub %{{.*}}, %[[HH]]
// CHECK: attn.yield %[[H]], %[[D]], %{{.*}} :
// CHECK: attn.scan reverse inits({{.*}}) over(%[[F]]#2, %{{.*}}, %[[F]]#1)
// CHECK-NOT: attn.rnn_cell
// CHECK: attn.yield
// NONE-LABEL: func.func @loss_grad(%{{.*}}: tensor<2x3x1xf32>
// NONE: attn.scan inits({{.*}}) {attn.saved_carries, axis = 1 : i64}
// NONE-SAME: -> (tensor<2x4xf32>, tensor<2x3x4xf32>)
// NONE: attn.scan reverse
// NONE: attn.rnn_cell
func.func @loss(%x: tensor<2x3x1xf32>, %y: tensor<2x1xf32>) -> tensor<f32> {
  %h0 = attn.constant dense<0.0> : tensor<2x4xf32>
  %wax = attn.param "w_ax" : tensor<1x4xf32>
  %waa = attn.param "w_aa" : tensor<4x4xf32>
  %b = attn.param "b" : tensor<4xf32>
  %wo = attn.param "out" : tensor<4x1xf32>
  %h = attn.scan inits(%h0) over(%x) : (tensor<2x4xf32>, tensor<2x3x1xf32>) -> (tensor<2x4xf32>) {
  ^bb0(%hp: tensor<2x4xf32>, %xt: tensor<2x1xf32>):
    %hn = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<2x1xf32>, tensor<2x4xf32>, tensor<1x4xf32>, tensor<4x4xf32>, tensor<4xf32>
    attn.yield %hn : tensor<2x4xf32>
  }
  %p = attn.dense %h, %wo : tensor<2x4xf32>, tensor<4x1xf32>
  %l = attn.mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32>
  return %l : tensor<f32>
}

// -----

// Two residuals of 1 MiB each (2 steps of [256, 512] f32): a budget of 1 MiB stores one,
// the one that saves the most recomputation per byte (the sigmoid's derivative s (1 - s),
// whose recomputation includes the matmul and the tanh); the backward still recomputes the
// tanh (and its matmul) from the saved carry for 1 - tanh^2.
// ONE-LABEL: func.func @loss_grad(%{{.*}}: tensor<2x256x512xf32>
// ONE: %[[F:.*]]:3 = attn.scan inits(%{{.*}}) over(%{{.*}}) consts({{.*}}) {attn.saved_carries, axis = 0 : i64}
// ONE-SAME: -> (tensor<256x512xf32>, tensor<2x256x512xf32>, tensor<2x256x512xf32>)
// ONE: %[[S:.*]] = attn.sigmoid
// ONE: %[[D:.*]] = attn.mul %[[S]],
// ONE: attn.yield %{{.*}}, %[[D]], %{{.*}} :
// ONE: attn.scan reverse
// ONE: attn.matmul
// ONE: attn.tanh
// ONE-NOT: attn.sigmoid
// ONE: attn.yield
func.func @loss(%x: tensor<2x256x512xf32>) -> tensor<f32> {
  %h0 = attn.constant dense<0.0> : tensor<256x512xf32>
  %w = attn.param "w" : tensor<512x512xf32>
  %h = attn.scan inits(%h0) over(%x) {axis = 0 : i64} : (tensor<256x512xf32>, tensor<2x256x512xf32>) -> (tensor<256x512xf32>) {
  ^bb0(%hp: tensor<256x512xf32>, %xt: tensor<256x512xf32>):
    %m = attn.matmul %hp, %w : tensor<256x512xf32>, tensor<512x512xf32>
    %a = attn.tanh %m : tensor<256x512xf32>
    %s = attn.sigmoid %a : tensor<256x512xf32>
    %n = attn.add %s, %xt : tensor<256x512xf32>, tensor<256x512xf32>
    attn.yield %n : tensor<256x512xf32>
  }
  %l = attn.reduce_sum %h {axes = array<i64: 0, 1>, keepdims = false} : tensor<256x512xf32>
  return %l : tensor<f32>
}
