// RUN: attn-opt %s -split-input-file -attn-fuse-attention="remarks=1 precision=bf16" -verify-diagnostics | FileCheck %s

// Under a bf16 policy, a dot-product attention of 16 to 127 queries and keys stays unfused:
// the flash kernels would compute it in f32, the unfused form's batched products in bf16.
// CHECK-LABEL: func @short
// CHECK-NOT: attn.fused_attention
// CHECK: attn.scaled_dot_product_attention
func.func @short(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-remark @+1 {{not fused: with bf16 products the unfused attention is faster at fewer than 128 queries or keys (the fused kernels compute it in f32)}}
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v {causal = true} : tensor<2x4x16x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// 128 queries and keys fill the flash kernels' bf16 tiles: fused.
// CHECK-LABEL: func @long
// CHECK: attn.fused_attention
// CHECK-NOT: attn.scaled_dot_product_attention
func.func @long(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x8xf32>) -> tensor<1x2x128x8xf32> {
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v {causal = true} : tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x8xf32>
  return %o : tensor<1x2x128x8xf32>
}

// -----

// A decoding step's one query (and anything under 16 queries or keys): fused, its products
// too small to gain from bf16.
// CHECK-LABEL: func @step
// CHECK: attn.fused_attention
// CHECK-NOT: attn.scaled_dot_product_attention
func.func @step(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x8xf32>) -> tensor<2x4x1x8xf32> {
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x8xf32>
  return %o : tensor<2x4x1x8xf32>
}
