// RUN: attn-opt %s -attn-expand-math | FileCheck %s

// tanh and exp become plain arithmetic that LLVM's loop vectorizer can widen.
// CHECK-LABEL: func @f
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: arith.mulf
func.func @f(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  %e = math.exp %t : f32
  return %e : f32
}
