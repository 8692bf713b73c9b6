// C++ side of the oneDNN kernels in attn/kernels.h: introspection of the primitive cache, and
// the rounding of host data for the bf16 products.
#ifndef ATTN_CPU_MATMUL_H
#define ATTN_CPU_MATMUL_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::cpu {

// Number of oneDNN matmul primitives currently cached (one per distinct shape/stride/transpose
// configuration seen by _mlir_ciface_attn_rt_matmul / _mlir_ciface_attn_rt_dense).
size_t cachedPrimitiveCount();
// Drops every cached primitive (tests; memory pressure).
void clearPrimitiveCache();

// dst[0..n) = src[0..n) rounded to the nearest bfloat16, ties to even, as bits (what compiled
// code's arith.truncf gives a bf16 product's factors): host code calling the _bf16 kernels.
void roundToBf16(const float *src, uint16_t *dst, size_t n);

// "oneDNN 2.6.3, effective ISA AVX2": oneDNN's version and the instruction set its kernels
// dispatch to on this CPU, after ONEDNN_MAX_CPU_ISA's cap (spelt as that variable takes it).
std::string oneDnnDescription();

} // namespace attn::cpu

#endif // ATTN_CPU_MATMUL_H
