// The gathers and scatters of offload.cu's entry points (attn/cuda/Offload.h): a strided
// memref's elements, in row-major order, to and from a contiguous device buffer, f32 or bf16,
// on the GPU, for memrefs the GPU addresses (a --device cuda program's managed memory).
//
// Device code only, like TrainKernels.cuh: offload.cu includes it and launches these;
// tests/cuda's emulator runs them on CPU threads.
#ifndef ATTN_RUNTIME_CUDA_OFFLOADKERNELS_CUH
#define ATTN_RUNTIME_CUDA_OFFLOADKERNELS_CUH

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

namespace attn::cuda::offload {

// Row-major element `linear` of a memref (attn/abi.h's descriptor of rank N) -> its offset in
// the memref's storage.
template <typename M, int N> __host__ __device__ int64_t offsetOf(const M &m, size_t linear) {
  int64_t offset = m.offset;
  for (int d = N - 1; d >= 0; --d) {
    offset += int64_t(linear % size_t(m.sizes[d])) * m.strides[d];
    linear /= size_t(m.sizes[d]);
  }
  return offset;
}

__device__ __forceinline__ float toStorage(float x, float *) { return x; }
__device__ __forceinline__ __nv_bfloat16 toStorage(float x, __nv_bfloat16 *) {
  return __float2bfloat16(x);
}
// (A bf16 view's bits, copied as they are: program.cpp's products gather their factors so.)
__device__ __forceinline__ uint16_t toStorage(uint16_t bits, uint16_t *) { return bits; }
__device__ __forceinline__ float widened(float x) { return x; }
__device__ __forceinline__ float widened(__nv_bfloat16 x) { return __bfloat162float(x); }

// out[i] = the memref's element i (row-major), stored as T; n = the memref's elements. A
// grid-stride loop: any grid covers any n.
template <typename M, int N, typename T> __global__ void gatherKernel(M m, T *out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = toStorage(m.aligned[offsetOf<M, N>(m, i)], out);
}

// The memref's element i (row-major) = in[i], widened to f32.
template <typename M, int N, typename T> __global__ void scatterKernel(const T *in, M m, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    m.aligned[offsetOf<M, N>(m, i)] = widened(in[i]);
}

} // namespace attn::cuda::offload

#endif // ATTN_RUNTIME_CUDA_OFFLOADKERNELS_CUH
