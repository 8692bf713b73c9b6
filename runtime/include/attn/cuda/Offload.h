/* The CUDA runtime functions compiled code calls under `--device cuda` (attn-to-cuda emits the
 * kernel calls, gpu-to-llvm the launches; docs/cuda.md). A program's buffers are CUDA managed
 * memory (attn_cuda_use_device_memory below), which the GPU and the CPU both address, or,
 * where only the GPU touches them, device memory (mgpuMemAlloc below); the functions here take
 * either, and never touch device memory on the host. Calls
 * queue their GPU work in order on the default stream; attn_rt_cuda_synchronize waits for it.
 *
 * The fused attention has the CPU flash kernels' signatures (attn/kernels.h; strided views
 * allowed). Each call gathers its operands into device buffers as bf16, runs the GPU's
 * FlashAttention-2 kernels and scatters the results back as f32 into the result memrefs.
 * Head dim 64 or 128, the same for keys and values.
 *
 * There is no error return across the MLIR ABI: a call with no usable GPU, or whose kernels
 * fail, prints "attn runtime: <kernel>: <why>" and aborts, as the CPU kernels do. attnc checks
 * for a device before it runs a program compiled for one. */
#ifndef ATTN_CUDA_OFFLOAD_H
#define ATTN_CUDA_OFFLOAD_H

#include "attn/kernels.h"

#include <stdbool.h>
#include <stddef.h>

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

/* attn_rt_matmul's and attn_rt_dense's contract (attn/kernels.h), in f32 on cuBLASLt (exact
 * f32, no TF32), queued, on the operands where they lie: a strided view is passed with its leading
 * dimension and batch stride, or gathered where cuBLASLt takes no such view. */
void _mlir_ciface_attn_rt_cuda_matmul(attn_memref3 *a, attn_memref3 *b, attn_memref3 *c,
                                      int64_t trans_a, int64_t trans_b);
void _mlir_ciface_attn_rt_cuda_dense(attn_memref2 *x, attn_memref2 *w, attn_memref1 *bias,
                                     attn_memref2 *y);
/* The same with bf16 factors (attn_rt_matmul_bf16's and attn_rt_dense_bf16's contract: the
 * factors come rounded, the bias and the result are f32), on tensor cores. */
void _mlir_ciface_attn_rt_cuda_matmul_bf16(attn_memref_bf16_3 *a, attn_memref_bf16_3 *b,
                                           attn_memref3 *c, int64_t trans_a, int64_t trans_b);
void _mlir_ciface_attn_rt_cuda_dense_bf16(attn_memref_bf16_2 *x, attn_memref_bf16_2 *w,
                                          attn_memref1 *bias, attn_memref2 *y);

/* Waits for the GPU work queued so far (launches, products, the attention and recurrent
 * calls); compiled code calls it where the host touches memory (attn-gpu-host-sync). A kernel
 * that failed since the last wait ends the process with a message naming the kernel launched
 * last. */
void attn_rt_cuda_synchronize(void);

/* Greedy decoding's choice: for each row of x [rows, cols] (device or managed memory, written
 * by queued work), the index of its largest value and that value, as std::max_element picks
 * them (the lowest index on ties; a NaN only as the first element), into host memory: a decoding
 * step reads back `rows` choices instead of rows x cols log-probabilities (attn/decode/Seq2Seq.h).
 */
void attn_cuda_argmax_rows(const float *x, int64_t rows, int64_t cols, int32_t *index,
                           float *value);

/* Beam search's ranking: for each row of x [rows, cols] (device or managed memory, written by
 * queued work), its k largest values, largest first, and their indices (ties: the lowest index
 * first; a NaN ranks as -inf and is written as -inf), into host memory index [rows, k] and
 * value [rows, k]: a step reads back rows x k candidates instead of rows x cols
 * log-probabilities. 1 <= k <= cols. */
void attn_cuda_top_k_rows(const float *x, int64_t rows, int64_t cols, int64_t k, int32_t *index,
                          float *value);

/* Beam search's reorder of a state: row r of `to` becomes row parents[r] of `from` (rows of
 * row_bytes each; device or managed memory, `to` not overlapping `from`), copied on the GPU,
 * so that the state does not come to the host. Returns when the copies are done. */
void attn_cuda_gather_rows(const void *from, void *to, int64_t row_bytes, const int32_t *parents,
                           int64_t rows);

/* From now on the runtime's buffers (attn/Alloc.h: tensors, and compiled code's temporaries
 * other than its device buffers) are CUDA managed memory. attn::Program calls it when it opens a
 * program compiled with
 * --device cuda, on a machine with a usable GPU, before the program's tensors are made. */
void attn_cuda_use_device_memory(void);

/* Starts moving `bytes` of managed memory at `p` to the GPU, queued on the default stream, so
 * that a batch goes up in one transfer rather than a page fault at a time as kernels touch it.
 * attn::Program calls it on each input of a --device cuda program's call (the parameters stay
 * where the GPU left them). A hint: memory it cannot move is left where it is. */
void attn_cuda_prefetch(const void *p, size_t bytes);

/* Whether the GPU addresses `p` (device or managed memory): attn::Program passes a copy of a
 * tensor that it does not (one made before the program was opened), rather than have a kernel
 * fault on it. */
int attn_cuda_device_addressable(const void *p);

/* The launches of the compiler's generated kernels (runtime/cuda/launch.cpp): the functions
 * of MLIR's CUDA runtime wrappers that gpu-to-llvm's launches call, defined by attnc's runtime
 * (which links no MLIR). Modules are loaded once per process. Launches are asynchronous, in
 * order on the default stream with every attn_rt_cuda_* call; mgpuStreamSynchronize does not
 * wait. */
void *mgpuModuleLoadJIT(void *ptx, int opt_level);
void *mgpuModuleLoad(void *image, size_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y, intptr_t grid_z,
                      intptr_t block_x, intptr_t block_y, intptr_t block_z, int32_t shared_bytes,
                      void *stream, void **params, void **extra, size_t params_count);
/* Device memory for the buffers only the GPU touches (attn-device-buffers' gpu.alloc and
 * gpu.dealloc): CUDA's stream-ordered pool, on `stream` (the default stream), kept by the pool
 * for reuse. Out of memory ends the process with a message, as a failed launch does. */
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool host_shared);
void mgpuMemFree(void *p, void *stream);
/* A constant's copy into a program's buffer (attn-constants-to-buffers' gpu.memcpy), queued. */
void mgpuMemcpy(void *to, void *from, size_t bytes, void *stream);

/* Why this process cannot run these kernels ("" when it can: a driver and a GPU). attn::Program
 * asks it before running a program whose attn_program_info::device is "cuda", through a weak
 * reference: a program linked without this library is refused with a message too. The string
 * lives until the thread's next call. */
const char *attn_cuda_device_unavailable(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_CUDA_OFFLOAD_H */
