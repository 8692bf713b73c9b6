// Fused attention on the GPU: attn.fused_attention (and its _grad) for a dot-product score, the
// op attn-to-onednn sends to attn_rt_flash_attention on the CPU, with the same contract
// (attn/kernels.h). Per batch b and head h:
//
//   s[i, j] = scale * q[i] . k[j], over the keys j allowed for query i
//             (key_mask[b, j] != 0, j <= i + S - T when causal, and
//             |j - center[b, h, i]| <= window with a window: Luong's local attention),
//   out[i]  = sum_j softmax_j(s)[i, j] v[j],   lse[i] = log sum_j exp(s[i, j]);
//   a row with no allowed key: out[i] = 0, lse[i] = 0, and no gradient.
//
// FlashAttention-2's algorithm on tensor cores (mma.sync m16n8k16, f32 accumulation): scores
// exist one tile at a time, never as [T, S]. Storage is bf16 or f16; lse, the key mask and the
// backward's workspace are f32. Every pointer is device memory, row-major and contiguous:
//
//   q [B, H, T, D], k [B, H, S, D], v [B, H, S, D]; key_mask [B, S] (or null: every key
//   allowed), center [B, H, T] (with a window only);
//   out [B, H, T, D], lse [B, H, T]; d_out like out, d_lse like lse (or null: zero);
//   dq, dk, dv like q, k, v.
//
// D is 64 or 128. Calls are asynchronous on `stream` (null: the default stream); a launch
// error is returned, a fault inside a kernel shows at the next synchronize().
#ifndef ATTN_CUDA_FLASHATTENTION_H
#define ATTN_CUDA_FLASHATTENTION_H

#include "attn/cuda/Device.h"

#include <cstddef>
#include <cstdint>

namespace attn::cuda {

enum class DType { BF16, F16 };

struct AttentionShape {
  int64_t batch = 1, heads = 1;
  int64_t queries = 0;  // T
  int64_t keys = 0;     // S
  int64_t headDim = 64; // D, of queries, keys and values
  bool causal = false;
  float scale = 1.0f;
  int64_t window = -1; // >= 0: keys within `window` of each query's center; needs a center
};

// Which keys each query sees besides causality: both optional (null).
struct AttentionMasks {
  const float *keyMask = nullptr; // [B, S], nonzero where a key may be attended
  const float *center = nullptr;  // [B, H, T], the window's center per query
};

// Why the kernels cannot run this shape, or an ok Status.
Status checkAttentionShape(const AttentionShape &shape, const AttentionMasks &masks = {});

Status flashAttentionForward(const AttentionShape &shape, DType dtype, const void *q, const void *k,
                             const void *v, const AttentionMasks &masks, void *out, float *lse,
                             void *stream = nullptr);

// Device memory the backward needs besides its operands (per row: dO . O - d_lse, in f32).
size_t flashAttentionBackwardWorkspace(const AttentionShape &shape);

Status flashAttentionBackward(const AttentionShape &shape, DType dtype, const void *q,
                              const void *k, const void *v, const AttentionMasks &masks,
                              const void *out, const float *lse, const void *dOut,
                              const float *dLse, void *dq, void *dk, void *dv, void *workspace,
                              void *stream = nullptr);

} // namespace attn::cuda

#endif // ATTN_CUDA_FLASHATTENTION_H
