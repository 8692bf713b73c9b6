// Warp-level primitives of the fused attention kernels (FlashKernels.cuh) as PTX: cp.async
// staging, ldmatrix fragments, mma.sync m16n8k16, ex2.approx, shuffles and barriers. The
// kernels use nothing else of the hardware, so that tests/cuda's emulator can supply the same
// functions on CPU threads and run the kernels' indexing, masking and pipelining in CI, where
// there is no GPU (tests/cuda/WarpEmulator.h; it follows the PTX ISA's fragment layouts).
#ifndef ATTN_RUNTIME_CUDA_WARP_CUH
#define ATTN_RUNTIME_CUDA_WARP_CUH

#include <cstdint>

namespace attn::cuda {

__device__ __forceinline__ uint32_t sharedAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The block's dynamic shared memory (the launch's third parameter).
__device__ __forceinline__ unsigned char *dynamicShared() {
  extern __shared__ __align__(16) unsigned char shared[];
  return shared;
}

__device__ __forceinline__ void syncBlock() { __syncthreads(); }

__device__ __forceinline__ float shuffleXor(float v, int laneMask) {
  return __shfl_xor_sync(0xffffffffu, v, laneMask);
}

// 16 bytes global -> shared, asynchronously; zero-filled when !valid (rows past T or S).
__device__ __forceinline__ void copyAsync16(void *dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sharedAddress(dst)),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void commitCopies() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most `Pending` committed groups are still in flight.
template <int Pending> __device__ __forceinline__ void waitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Four 8 x 8 matrices of 16-bit elements; lanes 8m .. 8m + 7 give the row addresses of matrix
// m, and lane l receives row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of each (transposed:
// element l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1).
__device__ __forceinline__ void loadMatrices(uint32_t r[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(p)));
}
__device__ __forceinline__ void loadMatricesTransposed(uint32_t r[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(p)));
}

// c[16 x 8] += a[16 x 16] b[16 x 8], f32 accumulators, bf16 or f16 operands.
__device__ __forceinline__ void mmaBf16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mmaF16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float exp2Approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

} // namespace attn::cuda

#endif // ATTN_RUNTIME_CUDA_WARP_CUH
