// RUN: attn-opt %s -attn-packed-entries=prefix=attn_m_ -split-input-file -verify-diagnostics | FileCheck %s

// The wrapper loads one pointer per argument, rebuilds each descriptor and calls the entry,
// which becomes private.
// CHECK: func.func @attn_m_forward(%[[ARGS:.*]]: !llvm.ptr)
// CHECK: %[[SLOT0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[SLOT0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue %[[P0]], %{{.*}}[0] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.getelementptr %[[ARGS]][1]
// CHECK: %[[M1:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<8xf32>
// CHECK: call @forward(%{{.*}}, %[[M1]])
// CHECK: func.func private @forward
func.func @forward(%x: memref<4x8xf32>, %y: memref<8xf32>) {
  return
}

// -----

// expected-error @+1 {{entry point 'returns' still returns values 'memref<8xf32>'; run buffer-results-to-out-params first}}
func.func @returns(%x: memref<8xf32>) -> memref<8xf32> {
  return %x : memref<8xf32>
}
