// RUN: attn-opt %s -attn-internalize=prefix=attn_m_ | FileCheck %s

// CHECK: llvm.func @attn_m_forward()
llvm.func @attn_m_forward() {
  llvm.call @forward() : () -> ()
  llvm.return
}
// CHECK: llvm.func internal @forward()
llvm.func @forward() {
  llvm.return
}
// Declarations stay external: they are resolved by the runtime at link time.
// CHECK: llvm.func @_mlir_ciface_attn_rt_matmul(!llvm.ptr)
llvm.func @_mlir_ciface_attn_rt_matmul(!llvm.ptr)
