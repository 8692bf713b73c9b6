// RUN: attn-opt %s -attn-params-to-args -split-input-file -verify-diagnostics | FileCheck %s

// Parameters become leading arguments (in order of first appearance) and the module records
// the parameter table.
// CHECK: module attributes {attn.params = [{init = #attn.init<uniform>, name = "w", scale = 5.000000e-01 : f32, trainable = true, type = tensor<2x3xf32>}, {init = #attn.init<zeros>, name = "b", scale = 1.000000e-01 : f32, trainable = true, type = tensor<3xf32>}]}
// CHECK-LABEL: func @forward(
// CHECK-SAME: %[[W:.*]]: tensor<2x3xf32> {attn.param = "w"}, %[[B:.*]]: tensor<3xf32> {attn.param = "b"}, %[[X:.*]]: tensor<4x2xf32>
// CHECK-NOT: attn.param "
// CHECK: attn.dense %[[X]], %[[W]], %[[B]]
func.func @forward(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = attn.param "w" {scale = 0.5 : f32} : tensor<2x3xf32>
  %b = attn.param "b" {init = #attn.init<zeros>} : tensor<3xf32>
  %y = attn.dense %x, %w, %b : tensor<4x2xf32>, tensor<2x3xf32>, tensor<3xf32>
  return %y : tensor<4x3xf32>
}

// Every entry point gets every parameter, so the ABI is the same for all of them.
// CHECK-LABEL: func @other(
// CHECK-SAME: tensor<2x3xf32> {attn.param = "w"}, %{{.*}}: tensor<3xf32> {attn.param = "b"}
func.func @other() {
  return
}

// -----

func.func @clash() {
  %a = attn.param "w" : tensor<2x3xf32>
  // expected-error @+1 {{parameter 'w' redeclared as 'tensor<3x3xf32>' init uniform, first declared as 'tensor<2x3xf32>' init uniform}}
  %b = attn.param "w" : tensor<3x3xf32>
  return
}
