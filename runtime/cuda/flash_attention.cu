// Fused attention on NVIDIA GPUs: the launches of FlashKernels.cuh's kernels (tile sizes,
// shared memory, dispatch over storage type, head dim and causality) behind
// attn/cuda/FlashAttention.h.
#include "attn/cuda/FlashAttention.h"

#include "Launch.cuh"
#include "Warp.cuh"
// After Warp.cuh: the kernels are written over its primitives.
#include "FlashKernels.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace attn::cuda {
namespace {

using namespace flash;

//===- launch ------------------------------------------------------------------------------===//

Dims dimsOf(const AttentionShape &s, const AttentionMasks &masks) {
  return {s.heads,          s.queries, s.keys,   masks.keyMask != nullptr,
          s.scale * kLog2e, s.scale,   s.window, s.window >= 0 ? masks.center : nullptr};
}

int tilesOf(int64_t n, int tile) { return int((n + tile - 1) / tile); }

template <typename T, int D, bool Causal>
Status forward(const AttentionShape &s, const void *q, const void *k, const void *v,
               const AttentionMasks &masks, void *out, float *lse, cudaStream_t stream) {
  return launch("the fused attention forward", flashForward<T, D, Causal>,
                dim3(tilesOf(s.queries, kBlockRows), unsigned(s.batch * s.heads)), kThreads,
                Plan<T, D>::forwardShared, stream, dimsOf(s, masks), static_cast<const T *>(q),
                static_cast<const T *>(k), static_cast<const T *>(v), masks.keyMask,
                static_cast<T *>(out), lse);
}

template <typename T, int D, bool Causal>
Status backward(const AttentionShape &s, const void *q, const void *k, const void *v,
                const AttentionMasks &masks, const void *out, const float *lse, const void *dOut,
                const float *dLse, void *dq, void *dk, void *dv, float *delta,
                cudaStream_t stream) {
  const Dims d = dimsOf(s, masks);
  const int64_t rows = s.batch * s.heads * s.queries;
  const unsigned bh = unsigned(s.batch * s.heads);
  const T *tq = static_cast<const T *>(q), *tk = static_cast<const T *>(k),
          *tv = static_cast<const T *>(v), *tdOut = static_cast<const T *>(dOut);
  if (Status st = launch("the fused attention backward's delta", backwardDelta<T, D>,
                         unsigned((rows + kWarps - 1) / kWarps), kThreads, 0, stream, rows,
                         static_cast<const T *>(out), tdOut, dLse, delta);
      !st)
    return st;
  if (Status st = launch("the fused attention backward's dq",
                         flashBackwardDq<T, D, Causal, Plan<T, D>::dqKeys>,
                         dim3(tilesOf(s.queries, kBlockRows), bh), kThreads, Plan<T, D>::dqShared,
                         stream, d, tq, tk, tv, masks.keyMask, lse, tdOut,
                         static_cast<const float *>(delta), static_cast<T *>(dq));
      !st)
    return st;
  return launch("the fused attention backward's dk, dv",
                flashBackwardDkDv<T, D, Causal, Plan<T, D>::dkdvQueries>,
                dim3(tilesOf(s.keys, kBlockRows), bh), kThreads, Plan<T, D>::dkdvShared, stream, d,
                tq, tk, tv, masks.keyMask, lse, tdOut, static_cast<const float *>(delta),
                static_cast<T *>(dk), static_cast<T *>(dv));
}

// Calls f.template run<T, D, Causal>() for the shape's instantiation.
template <typename F> Status dispatch(const AttentionShape &s, DType dtype, const F &f) {
  const bool bf16 = dtype == DType::BF16, d64 = s.headDim == 64;
  if (s.causal)
    return bf16 ? (d64 ? f.template run<__nv_bfloat16, 64, true>()
                       : f.template run<__nv_bfloat16, 128, true>())
                : (d64 ? f.template run<__half, 64, true>() : f.template run<__half, 128, true>());
  return bf16 ? (d64 ? f.template run<__nv_bfloat16, 64, false>()
                     : f.template run<__nv_bfloat16, 128, false>())
              : (d64 ? f.template run<__half, 64, false>() : f.template run<__half, 128, false>());
}

struct Forward {
  const AttentionShape &s;
  const void *q, *k, *v;
  const AttentionMasks &masks;
  void *out;
  float *lse;
  cudaStream_t stream;
  template <typename T, int D, bool Causal> Status run() const {
    return forward<T, D, Causal>(s, q, k, v, masks, out, lse, stream);
  }
};

struct Backward {
  const AttentionShape &s;
  const void *q, *k, *v;
  const AttentionMasks &masks;
  const void *out;
  const float *lse;
  const void *dOut;
  const float *dLse;
  void *dq, *dk, *dv;
  float *delta;
  cudaStream_t stream;
  template <typename T, int D, bool Causal> Status run() const {
    return backward<T, D, Causal>(s, q, k, v, masks, out, lse, dOut, dLse, dq, dk, dv, delta,
                                  stream);
  }
};

} // namespace

Status checkAttentionShape(const AttentionShape &s, const AttentionMasks &masks) {
  auto shape = [&] {
    return "q [" + std::to_string(s.batch) + ", " + std::to_string(s.heads) + ", " +
           std::to_string(s.queries) + ", " + std::to_string(s.headDim) + "], k [" +
           std::to_string(s.batch) + ", " + std::to_string(s.heads) + ", " +
           std::to_string(s.keys) + ", " + std::to_string(s.headDim) + "]";
  };
  if (s.headDim != 64 && s.headDim != 128)
    return Status::error("attn::cuda fused attention: head dim " + std::to_string(s.headDim) +
                         " (" + shape() + "); the GPU kernels are built for 64 and 128");
  if (s.batch < 1 || s.heads < 1 || s.queries < 1 || s.keys < 1)
    return Status::error("attn::cuda fused attention: empty shape " + shape());
  if (s.batch * s.heads > 65535)
    return Status::error(
        "attn::cuda fused attention: batch x heads = " + std::to_string(s.batch * s.heads) + " (" +
        shape() + ") exceeds the grid's 65535");
  if (s.window >= 0 && !masks.center)
    return Status::error("attn::cuda fused attention: a window of " + std::to_string(s.window) +
                         " without the centers it is around (" + shape() + ")");
  if (s.queries > (int64_t(1) << 30) || s.keys > (int64_t(1) << 30))
    return Status::error("attn::cuda fused attention: sequence too long (" + shape() + ")");
  return {};
}

// cp.async moves 16-byte chunks: every row of q, k, v, d_out must start on a 16-byte boundary
// (cudaMalloc's are on 256; a view at an odd element offset is not).
static Status checkAligned(std::initializer_list<const void *> pointers) {
  for (const void *p : pointers)
    if (reinterpret_cast<uintptr_t>(p) % 16)
      return Status::error("attn::cuda fused attention: an operand at " +
                           std::to_string(reinterpret_cast<uintptr_t>(p)) +
                           " is not 16-byte aligned");
  return {};
}

Status flashAttentionForward(const AttentionShape &shape, DType dtype, const void *q, const void *k,
                             const void *v, const AttentionMasks &masks, void *out, float *lse,
                             void *stream) {
  if (Status st = checkAttentionShape(shape, masks); !st)
    return st;
  if (Status st = checkAligned({q, k, v}); !st)
    return st;
  return dispatch(shape, dtype,
                  Forward{shape, q, k, v, masks, out, lse, static_cast<cudaStream_t>(stream)});
}

size_t flashAttentionBackwardWorkspace(const AttentionShape &shape) {
  return size_t(shape.batch * shape.heads * shape.queries) * sizeof(float);
}

Status flashAttentionBackward(const AttentionShape &shape, DType dtype, const void *q,
                              const void *k, const void *v, const AttentionMasks &masks,
                              const void *out, const float *lse, const void *dOut,
                              const float *dLse, void *dq, void *dk, void *dv, void *workspace,
                              void *stream) {
  if (Status st = checkAttentionShape(shape, masks); !st)
    return st;
  if (Status st = checkAligned({q, k, v, dOut}); !st)
    return st;
  return dispatch(shape, dtype,
                  Backward{shape, q, k, v, masks, out, lse, dOut, dLse, dq, dk, dv,
                           static_cast<float *>(workspace), static_cast<cudaStream_t>(stream)});
}

} // namespace attn::cuda
