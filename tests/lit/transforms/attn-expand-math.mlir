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

// Rounding to bf16 becomes integer arithmetic (LLVM 19 would leave a loop of fptrunc to
// bfloat unvectorized): the bits plus 0x7fff plus the kept part's lowest bit, shifted right
// by 16; a NaN gives a NaN.
// CHECK-LABEL: func @round
// CHECK-NOT: arith.truncf
// CHECK: %[[NAN:.+]] = arith.cmpf une
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.select %[[NAN]]
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
func.func @round(%x: f32) -> bf16 {
  %r = arith.truncf %x : f32 to bf16
  return %r : bf16
}
