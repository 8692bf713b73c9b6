// Gathers of strided views into packed buffers on the GPU, queued on the default stream: for
// program.cpp's products, whose operands may be device memory that the host cannot read
// (attn-device-buffers). Defined in offload.cu beside the attention's and recurrent layers'
// gathers (OffloadKernels.cuh), which they share.
#ifndef ATTN_CUDA_GATHER_H
#define ATTN_CUDA_GATHER_H

#include "attn/kernels.h"

namespace attn::cuda::internal {

// out[i] = the view's element i in row-major order; `out` is device or managed memory of
// sizes[0] x ... elements. `what` names the caller in a failure's message.
void gatherOnGpu(const char *what, const attn_memref1 &m, float *out);
void gatherOnGpu(const char *what, const attn_memref3 &m, float *out);
void gatherOnGpu(const char *what, const attn_memref_bf16_3 &m, uint16_t *out);

} // namespace attn::cuda::internal

#endif // ATTN_CUDA_GATHER_H
