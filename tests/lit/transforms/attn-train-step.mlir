// RUN: attn-opt %s -attn-autodiff -attn-train-step="optimizer=adamw weight-decay=0.01 clip-norm=1.0" | FileCheck %s
// RUN: attn-opt %s -attn-autodiff -attn-train-step="optimizer=sgd momentum=0.9" | FileCheck %s --check-prefix=SGD
// RUN: attn-opt %s -attn-autodiff -attn-train-step="clip-norm=1.0 split-update=true" | FileCheck %s --check-prefix=SPLIT

// CHECK: func.func @train_step(%{{.*}}: tensor<4x2xf32>, %{{.*}}: tensor<4x1xf32>, %[[LR:.*]]: tensor<f32> {attn.name = "lr"}, %[[STEP:.*]]: tensor<f32> {attn.name = "step"})
// CHECK-SAME: -> (tensor<f32> {attn.name = "loss"}, tensor<f32> {attn.name = "grad_norm"}, tensor<2x1xf32> {attn.name = "update:w"}, tensor<2x1xf32> {attn.name = "update:w/adam_m"}, tensor<2x1xf32> {attn.name = "update:w/adam_v"})
// CHECK-DAG: attn.param "w/adam_m" {init = #attn.init<zeros>, scale = 0.000000e+00 : f32, trainable = false} : tensor<2x1xf32>
// CHECK-DAG: attn.param "w/adam_v" {init = #attn.init<zeros>, scale = 0.000000e+00 : f32, trainable = false} : tensor<2x1xf32>
// CHECK: %[[NORM:.*]] = attn.sqrt
// CHECK: attn.maximum %[[NORM]]
// CHECK: attn.adam_update {{.*}}, %[[LR]], %[[STEP]] {decoupled, weight_decay = 0.00999999977 : f32}
// CHECK: return %{{.*}}, %[[NORM]],

// SGD-LABEL: func.func @train_step
// SGD: attn.param "w/momentum" {init = #attn.init<zeros>
// SGD: attn.sgd_update {{.*}} {momentum = 0.899999976 : f32}
// SGD: return %{{.*}}, %{{.*}}, %new_param, %new_velocity
// split-update: @apply_update takes the gradients @loss_grad returns, clips them by their
// global norm and updates as @train_step does; its state params are @train_step's.
// SPLIT-LABEL: func.func @train_step
// SPLIT: func.func @apply_update(%[[G:.*]]: tensor<2x1xf32> {attn.name = "grad:w"}, %[[LR:.*]]: tensor<f32> {attn.name = "lr"}, %[[STEP:.*]]: tensor<f32> {attn.name = "step"})
// SPLIT-SAME: -> (tensor<f32> {attn.name = "grad_norm"}, tensor<2x1xf32> {attn.name = "update:w"}, tensor<2x1xf32> {attn.name = "update:w/adam_m"}, tensor<2x1xf32> {attn.name = "update:w/adam_v"})
// SPLIT-DAG: %[[W:.*]] = attn.param "w" : tensor<2x1xf32>
// SPLIT-DAG: attn.param "w/adam_m" {init = #attn.init<zeros>
// SPLIT: attn.mul %[[G]], %[[G]]
// SPLIT: %[[NORM:.*]] = attn.sqrt
// SPLIT: attn.maximum %[[NORM]]
// SPLIT: attn.adam_update %[[W]], {{.*}}, %[[LR]], %[[STEP]]
// SPLIT: return %[[NORM]],
func.func @loss(%x: tensor<4x2xf32>, %y: tensor<4x1xf32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<2x1xf32>
  %p = attn.dense %x, %w : tensor<4x2xf32>, tensor<2x1xf32>
  %l = attn.mse %p, %y : tensor<4x1xf32>, tensor<4x1xf32>
  return %l : tensor<f32>
}
