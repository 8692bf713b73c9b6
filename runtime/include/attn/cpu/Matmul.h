// C++ side of the oneDNN kernels in attn/kernels.h: introspection of the primitive cache.
#ifndef ATTN_CPU_MATMUL_H
#define ATTN_CPU_MATMUL_H

#include <cstddef>

namespace attn::cpu {

// Number of oneDNN matmul primitives currently cached (one per distinct shape/stride/transpose
// configuration seen by _mlir_ciface_attn_rt_matmul / _mlir_ciface_attn_rt_dense).
size_t cachedPrimitiveCount();
// Drops every cached primitive (tests; memory pressure).
void clearPrimitiveCache();

} // namespace attn::cpu

#endif // ATTN_CPU_MATMUL_H
