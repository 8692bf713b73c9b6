func.func @forward(%x: tensor<32x16xf32>) -> tensor<32x1xf32> {
  %w = attn.param "w" : tensor<16x1xf32>
  %y = attn.dense %x, %w : tensor<32x16xf32>, tensor<16x1xf32>
  return %y : tensor<32x1xf32>
}

func.func @loss(%x: tensor<32x16xf32>, %t: tensor<32x1xf32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<16x1xf32>
  %y = attn.dense %x, %w : tensor<32x16xf32>, tensor<16x1xf32>
  %l = attn.mse %y, %t : tensor<32x1xf32>, tensor<32x1xf32>
  return %l : tensor<f32>
}
