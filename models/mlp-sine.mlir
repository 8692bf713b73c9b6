// models/mlp-sine.yaml's network in attn IR, written by hand (docs/graph.md): task regress
// calls @forward(x [batch, window]) -> prediction and @loss(x, target) -> mean squared error
// (batch 32, window 16 in models/mlp-sine-mlir.yaml). Parameters are attn.param ops, by name:
// the same names and initialisers as the mlp family's, so it trains like models/mlp-sine.yaml.
// Each entry point holds the whole network: a parameter read in both is one parameter.
func.func @forward(%x: tensor<32x16xf32>) -> tensor<32x1xf32> {
  %w0 = attn.param "mlp.layer0.weight" {init = #attn.init<uniform>, scale = 0.25 : f32} : tensor<16x64xf32>
  %b0 = attn.param "mlp.layer0.bias" {init = #attn.init<uniform>, scale = 0.25 : f32} : tensor<64xf32>
  %w1 = attn.param "mlp.layer1.weight" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<64x64xf32>
  %b1 = attn.param "mlp.layer1.bias" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<64xf32>
  %wo = attn.param "output.weight" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<64x1xf32>
  %bo = attn.param "output.bias" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<1xf32>
  %h0 = attn.dense %x, %w0, %b0 : tensor<32x16xf32>, tensor<16x64xf32>, tensor<64xf32>
  %a0 = attn.tanh %h0 : tensor<32x64xf32>
  %h1 = attn.dense %a0, %w1, %b1 : tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>
  %a1 = attn.tanh %h1 : tensor<32x64xf32>
  %y = attn.dense %a1, %wo, %bo : tensor<32x64xf32>, tensor<64x1xf32>, tensor<1xf32>
  return %y : tensor<32x1xf32>
}

func.func @loss(%x: tensor<32x16xf32>, %target: tensor<32x1xf32>) -> tensor<f32> {
  %w0 = attn.param "mlp.layer0.weight" {init = #attn.init<uniform>, scale = 0.25 : f32} : tensor<16x64xf32>
  %b0 = attn.param "mlp.layer0.bias" {init = #attn.init<uniform>, scale = 0.25 : f32} : tensor<64xf32>
  %w1 = attn.param "mlp.layer1.weight" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<64x64xf32>
  %b1 = attn.param "mlp.layer1.bias" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<64xf32>
  %wo = attn.param "output.weight" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<64x1xf32>
  %bo = attn.param "output.bias" {init = #attn.init<uniform>, scale = 0.125 : f32} : tensor<1xf32>
  %h0 = attn.dense %x, %w0, %b0 : tensor<32x16xf32>, tensor<16x64xf32>, tensor<64xf32>
  %a0 = attn.tanh %h0 : tensor<32x64xf32>
  %h1 = attn.dense %a0, %w1, %b1 : tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>
  %a1 = attn.tanh %h1 : tensor<32x64xf32>
  %y = attn.dense %a1, %wo, %bo : tensor<32x64xf32>, tensor<64x1xf32>, tensor<1xf32>
  %l = attn.mse %y, %target : tensor<32x1xf32>, tensor<32x1xf32>
  return %l : tensor<f32>
}
