// Matrix products on the GPU through cuBLASLt, with the contract of the CPU's attn_rt_matmul
// and attn_rt_dense (attn/kernels.h), row-major:
//
//   c[i] = op(a[i]) op(b[i]) (+ bias, then ReLU, as the epilogue asks), for i < batch;
//   a [batch or 1, M, K] ([.., K, M] when transA), b [batch or 1, K, N] ([.., N, K] when
//   transB), c [batch, M, N], bias [N]; a batch of 1 is broadcast.
//
// Storage f32 (accumulated in f32: no TF32 unless allowTf32), bf16 or f16 (accumulated in f32);
// bias in the storage type. BF16Factors: a and b bf16, c and the bias f32 (attn-precision's
// bf16 products, attn_rt_matmul_bf16's contract). cuBLASLt's GELU epilogue is the tanh
// approximation, not attn.gelu's exact erf form, so it is not offered.
#ifndef ATTN_CUDA_MATMUL_H
#define ATTN_CUDA_MATMUL_H

#include "attn/cuda/Device.h"

#include <cstdint>

namespace attn::cuda {

enum class MatmulType { F32, BF16, F16, BF16Factors };
enum class Epilogue { None, Bias, BiasRelu };

struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  bool broadcastA = false, broadcastB = false; // a (or b) has batch 1
  bool allowTf32 = false;                      // f32 storage: TF32 tensor cores
  // Strided operands (0: packed): the elements between rows of each stored row-major matrix
  // (a's rows are K long, or M when transA; b's N, or K when transB; c's N), and between
  // matrices of a batch (ignored where an operand is broadcast).
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t batchStrideA = 0, batchStrideB = 0, batchStrideC = 0;
};

// Opens cuBLASLt now (by its soname, else in the toolkit attnc was built with), which the
// first product does otherwise; needs no GPU. The error names the library.
Status loadMatmulLibrary();

// One cuBLASLt handle and workspace per thread, made at the first call; launch errors and
// shapes no algorithm serves come back as a Status naming the shape.
Status matmul(const MatmulShape &shape, MatmulType type, const void *a, const void *b, void *c,
              const void *bias = nullptr, Epilogue epilogue = Epilogue::None,
              void *stream = nullptr);

} // namespace attn::cuda

#endif // ATTN_CUDA_MATMUL_H
