/* The CUDA runtime kernels compiled code calls under `--device cuda` (attn-to-cuda emits the
 * calls; docs/cuda.md). Their signatures are the CPU flash kernels' (attn/kernels.h): the
 * operands are host memrefs (strided views allowed). Each call copies its operands to the
 * device as bf16, runs the GPU's FlashAttention-2 kernels and copies the results back as f32
 * into the result memrefs. Head dim 64 or 128, the same for keys and values.
 *
 * There is no error return across the MLIR ABI: a call with no usable GPU, or whose kernels
 * fail, prints "attn runtime: <kernel>: <why>" and aborts, as the CPU kernels do. attnc checks
 * for a device before it runs a program compiled for one. */
#ifndef ATTN_CUDA_OFFLOAD_H
#define ATTN_CUDA_OFFLOAD_H

#include "attn/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

void _mlir_ciface_attn_rt_cuda_flash_attention(attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                                               attn_memref2 *mask, attn_memref4 *out,
                                               attn_memref3 *lse, int64_t causal, float scale);

void _mlir_ciface_attn_rt_cuda_flash_attention_backward(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref4 *out,
    attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse, attn_memref4 *dq, attn_memref4 *dk,
    attn_memref4 *dv, int64_t causal, float scale);

/* attn.lstm and attn.gru (PyTorch's form), masked or not, forward and backward, with the CPU
 * kernels' signatures (attn_rt_rnn_forward, attn_rt_rnn_backward of attn/kernels.h) and kinds:
 * the operands go to the device in f32, the sequence loop of attn/cuda/Recurrent.h runs there,
 * the results come back. The backward recomputes the forward on the device. */
void _mlir_ciface_attn_rt_cuda_rnn_forward(
    attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,
    attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
    attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,
    int64_t kind, int64_t reverse, int64_t training, int64_t peephole, int64_t projection,
    int64_t masked);

void _mlir_ciface_attn_rt_cuda_rnn_backward(
    attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,
    attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
    attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,
    attn_memref3 *d_outputs, attn_memref2 *d_h_n, attn_memref2 *d_c_n, attn_memref3 *d_x,
    attn_memref2 *d_h0, attn_memref2 *d_c0, attn_memref2 *d_w_ih, attn_memref2 *d_w_hh,
    attn_memref1 *d_b_ih, attn_memref1 *d_b_hh, attn_memref2 *d_w_peephole,
    attn_memref2 *d_w_proj, int64_t kind, int64_t reverse, int64_t peephole, int64_t projection,
    int64_t masked);

/* Why this process cannot run these kernels ("" when it can: a driver and a GPU). attn::Program
 * asks it before running a program whose attn_program_info::device is "cuda", through a weak
 * reference: a program linked without this library is refused with a message too. The string
 * lives until the thread's next call. */
const char *attn_cuda_device_unavailable(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_CUDA_OFFLOAD_H */
