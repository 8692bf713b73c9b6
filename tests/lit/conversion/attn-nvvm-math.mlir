// RUN: attn-opt %s -split-input-file -verify-diagnostics -attn-nvvm-math | FileCheck %s

// The libdevice functions that are one PTX instruction become that instruction's LLVM
// intrinsic, internal and always inlined; the reciprocal square root is 1 / sqrt(x), as the
// CPU computes it.
// CHECK-LABEL: gpu.module @kernels
// CHECK:         llvm.func internal @__nv_floorf(%[[X:.*]]: f32) -> f32
// CHECK-SAME:      always_inline
// CHECK-NEXT:      %[[R:.*]] = llvm.intr.floor(%[[X]]) : (f32) -> f32
// CHECK-NEXT:      llvm.return %[[R]] : f32
// CHECK:         llvm.func internal @__nv_sqrtf
// CHECK:           llvm.intr.sqrt
// CHECK:         llvm.func internal @__nv_rsqrtf(%[[Y:.*]]: f32) -> f32
// CHECK:           %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK:           %[[S:.*]] = llvm.intr.sqrt(%[[Y]]) : (f32) -> f32
// CHECK:           llvm.fdiv %[[ONE]], %[[S]] : f32
// CHECK:         llvm.func internal @__nv_fmaxf(%{{.*}}: f32, %{{.*}}: f32) -> f32
// CHECK:           llvm.intr.maxnum
// CHECK:         llvm.func internal @__nv_fmaf
// CHECK:           llvm.intr.fma
// Other functions are not touched.
// CHECK:         llvm.func @helper(f32) -> f32
gpu.module @kernels {
  llvm.func @__nv_floorf(f32) -> f32
  llvm.func @__nv_sqrtf(f32) -> f32
  llvm.func @__nv_rsqrtf(f32) -> f32
  llvm.func @__nv_fmaxf(f32, f32) -> f32
  llvm.func @__nv_fmaf(f32, f32, f32) -> f32
  llvm.func @helper(f32) -> f32
}

// -----

// A transcendental function has no one-instruction form: attnc links no libdevice.
gpu.module @kernels {
  // expected-error @+1 {{'llvm.func' op calls libdevice's '__nv_expf', which attnc does not link (only one-instruction f32 functions have a body here)}}
  llvm.func @__nv_expf(f32) -> f32
}

// -----

// Nor does the f64 form of a one-instruction f32 function.
gpu.module @kernels {
  // expected-error @+1 {{calls libdevice's '__nv_floor'}}
  llvm.func @__nv_floor(f64) -> f64
}
