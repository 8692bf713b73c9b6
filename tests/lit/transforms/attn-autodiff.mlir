// RUN: attn-opt %s -attn-autodiff -split-input-file -verify-diagnostics | FileCheck %s

// @loss_grad returns the loss and one gradient per trainable parameter, named after it;
// the forward scan saves its carries and a reversed scan runs back-propagation through time.
// CHECK-LABEL: func.func @loss_grad(%{{.*}}: tensor<2x3x1xf32>, %{{.*}}: tensor<2x1xf32>)
// CHECK-SAME: -> (tensor<f32> {attn.name = "loss"}, tensor<1x4xf32> {attn.name = "grad:w_ax"}, tensor<4x4xf32> {attn.name = "grad:w_aa"}, tensor<4xf32> {attn.name = "grad:b"}, tensor<4x1xf32> {attn.name = "grad:out"})
// CHECK: attn.scan inits(%{{.*}}) over(%{{.*}}) consts(%{{.*}}, %{{.*}}, %{{.*}}) {attn.saved_carries, axis = 1 : i64}
// CHECK: attn.yield %{{.*}}, %{{.*}} :
// CHECK: %[[LOSS:.*]] = attn.mse
// CHECK: attn.scan reverse inits(
// CHECK: attn.rnn_cell
// CHECK: attn.matmul {{.*}} {transpose_rhs = true}
// CHECK: return %[[LOSS]],
func.func @loss(%x: tensor<2x3x1xf32>, %y: tensor<2x1xf32>) -> tensor<f32> {
  %h0 = attn.constant dense<0.0> : tensor<2x4xf32>
  %wax = attn.param "w_ax" : tensor<1x4xf32>
  %waa = attn.param "w_aa" : tensor<4x4xf32>
  %b = attn.param "b" : tensor<4xf32>
  %wo = attn.param "out" : tensor<4x1xf32>
  // Not trainable: no gradient is returned for it.
  %s = attn.param "frozen" {trainable = false} : tensor<4x1xf32>
  %w = attn.add %wo, %s : tensor<4x1xf32>, tensor<4x1xf32>
  %h = attn.scan inits(%h0) over(%x) : (tensor<2x4xf32>, tensor<2x3x1xf32>) -> (tensor<2x4xf32>) {
  ^bb0(%hp: tensor<2x4xf32>, %xt: tensor<2x1xf32>):
    %hn = attn.rnn_cell %xt, %hp, %wax, %waa, %b : tensor<2x1xf32>, tensor<2x4xf32>, tensor<1x4xf32>, tensor<4x4xf32>, tensor<4xf32>
    attn.yield %hn : tensor<2x4xf32>
  }
  %p = attn.dense %h, %w : tensor<2x4xf32>, tensor<4x1xf32>
  %l = attn.mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{@loss must return the loss, a rank-0 f32 tensor, first; got 'tensor<2xf32>'}}
func.func @loss(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// A parameter the loss does not depend on gets a zero gradient.
// CHECK-LABEL: func.func @loss_grad()
// CHECK: %[[Z:.*]] = attn.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.*}}, %[[Z]]
func.func @loss() -> tensor<f32> {
  %unused = attn.param "unused" : tensor<3xf32>
  %c = attn.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// A fused layer differentiates as one op: the forward runs in training mode and its backward
// op (oneDNN's) takes the forward's operands, results and result gradients.
// CHECK-LABEL: func.func @loss_grad(%{{.*}}: tensor<2x3x1xf32>, %{{.*}}: tensor<2x1xf32>)
// CHECK: %[[HS:.*]], %[[H:.*]], %[[C:.*]] = attn.lstm %{{.*}} {training}
// CHECK-NOT: attn.scan
// CHECK: attn.lstm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HS]], %[[H]], %[[C]], %{{.*}}, %{{.*}}, %{{.*}} :
func.func @loss(%x: tensor<2x3x1xf32>, %y: tensor<2x1xf32>) -> tensor<f32> {
  %h0 = attn.constant dense<0.0> : tensor<2x4xf32>
  %wi = attn.param "w_ih" : tensor<1x16xf32>
  %wh = attn.param "w_hh" : tensor<4x16xf32>
  %b = attn.param "b" : tensor<16xf32>
  %wo = attn.param "out" : tensor<4x1xf32>
  %hs, %h, %c = attn.lstm %x, %h0, %h0, %wi, %wh, %b : tensor<2x3x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x16xf32>, tensor<4x16xf32>, tensor<16xf32>
  %p = attn.matmul %h, %wo : tensor<2x4xf32>, tensor<4x1xf32>
  %l = attn.mse %p, %y : tensor<2x1xf32>, tensor<2x1xf32>
  return %l : tensor<f32>
}

// -----

// A parameter read twice, with another one read in between (an embedding table shared by an
// encoder and a decoder): its gradient is the sum of both reads' gradients, and the other
// parameter gets its own.
// CHECK-LABEL: func.func @loss_grad(%{{.*}}: tensor<3xf32>)
// CHECK-SAME: -> (tensor<f32> {attn.name = "loss"}, tensor<3xf32> {attn.name = "grad:shared"}, tensor<3xf32> {attn.name = "grad:between"})
// CHECK: attn.reduce_sum
// CHECK: %[[SUM:.*]] = attn.add %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: return %{{.*}}, %[[SUM]], %{{.*}} : tensor<f32>, tensor<3xf32>, tensor<3xf32>
func.func @loss(%x: tensor<3xf32>) -> tensor<f32> {
  %a = attn.param "shared" : tensor<3xf32>
  %m = attn.param "between" : tensor<3xf32>
  %b = attn.param "shared" : tensor<3xf32>
  %p = attn.mul %a, %m : tensor<3xf32>, tensor<3xf32>
  %q = attn.mul %p, %x : tensor<3xf32>, tensor<3xf32>
  %r = attn.add %q, %b : tensor<3xf32>, tensor<3xf32>
  %l = attn.reduce_sum %r {axes = array<i64: 0>} : tensor<3xf32>
  return %l : tensor<f32>
}

// -----

// No gradient passes attn.stop_gradient: the parameter behind it gets zeros, as one the loss
// does not read at all.
// CHECK-LABEL: func.func @loss_grad()
// CHECK: %[[Z:.*]] = attn.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.*}}, %[[Z]]
func.func @loss() -> tensor<f32> {
  %w = attn.param "held" : tensor<3xf32>
  %s = attn.stop_gradient %w : tensor<3xf32>
  %l = attn.reduce_sum %s {axes = array<i64: 0>} : tensor<3xf32>
  return %l : tensor<f32>
}

// -----

// A fused attention's gradient: attn.fused_attention_grad carries the score region and a
// score_grad region that autodiff derives from it (the score's gradient with respect to the
// query row, the key row and the captured slope, seeded with ds); what no gradient reads of
// the recomputed score is dropped.
// CHECK-LABEL: func.func @loss_grad
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[DSLOPE:.*]] = attn.fused_attention_grad {{.*}} captures(%{{.*}} : tensor<f32>)
// CHECK: attn.yield %{{.*}} : tensor<f32>
// CHECK-NEXT: } {
// CHECK-NEXT: ^bb0(%[[QI:.*]]: tensor<4xf32>, %[[KJ:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<f32>, %[[J:.*]]: tensor<f32>, %[[S:.*]]: tensor<f32>, %[[DS:.*]]: tensor<f32>):
// CHECK-NOT: attn.reduce_sum
// CHECK: %[[DIST:.*]] = attn.sub %[[I]], %[[J]]
// CHECK: %[[NEG:.*]] = attn.neg %[[DS]]
// CHECK: %[[DS2:.*]] = attn.mul %[[NEG]], %[[DIST]]
// CHECK: %[[ROW:.*]] = attn.broadcast
// CHECK: %[[DQ:.*]] = attn.mul %[[ROW]], %[[KJ]]
// CHECK: %[[DK:.*]] = attn.mul %[[ROW]], %[[QI]]
// CHECK: attn.yield %[[DQ]], %[[DK]], %[[DS2]] : tensor<4xf32>, tensor<4xf32>, tensor<f32>
// CHECK: return {{.*}}, %[[DSLOPE]]
func.func @loss() -> tensor<f32> {
  %q = attn.param "q" : tensor<1x1x2x4xf32>
  %k = attn.param "k" : tensor<1x1x3x4xf32>
  %v = attn.param "v" : tensor<1x1x3x2xf32>
  %slope = attn.param "slope" : tensor<f32>
  %m = attn.constant dense<1.0> : tensor<1x3xf32>
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%slope : tensor<f32>)
      : tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x2xf32>, tensor<1x3xf32>
      -> tensor<1x1x2x2xf32>, tensor<1x1x2xf32> {
  ^bb0(%qi: tensor<4xf32>, %kj: tensor<4xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %prod = attn.mul %qi, %kj : tensor<4xf32>, tensor<4xf32>
    %dot = attn.reduce_sum %prod {axes = array<i64: 0>} : tensor<4xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %dot, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  }
  %l = attn.reduce_sum %o {axes = array<i64: 0, 1, 2, 3>} : tensor<1x1x2x2xf32>
  return %l : tensor<f32>
}

