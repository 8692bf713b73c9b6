/* Runtime kernels that compiled code calls (the attn-to-onednn lowering emits these calls).
 *
 * A call from MLIR to `func.func private @attn_rt_X(memref..., i64...) attributes
 * {llvm.emit_c_interface}` arrives here as `_mlir_ciface_attn_rt_X(attn_memrefN *...)`: each
 * memref is passed as a pointer to its descriptor (the layout MLIR's LLVM lowering uses).
 * Descriptors may be strided (views): kernels honour `strides` and `offset`. */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_MEMREF(N)                                                                             \
  typedef struct {                                                                                 \
    float *allocated;                                                                              \
    float *aligned;                                                                                \
    int64_t offset;                                                                                \
    int64_t sizes[N];                                                                              \
    int64_t strides[N];                                                                            \
  } attn_memref##N;
ATTN_MEMREF(1)
ATTN_MEMREF(2)
ATTN_MEMREF(3)
#undef ATTN_MEMREF

/* c[i] = op(a[i]) x op(b[i]) for every batch i, through a cached oneDNN matmul primitive.
 * a: [Ba, M, K] (or [Ba, K, M] when trans_a), b: [Bb, K, N] (or [Bb, N, K] when trans_b),
 * c: [B, M, N] with Ba, Bb in {1, B}: a batch of size 1 broadcasts. */
void _mlir_ciface_attn_rt_matmul(attn_memref3 *a, attn_memref3 *b, attn_memref3 *c,
                                 int64_t trans_a, int64_t trans_b);

/* y = x w + bias.  x: [M, K], w: [K, N], bias: [N], y: [M, N]. */
void _mlir_ciface_attn_rt_dense(attn_memref2 *x, attn_memref2 *w, attn_memref1 *bias,
                                attn_memref2 *y);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_KERNELS_H */
