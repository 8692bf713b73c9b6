// The `--device cuda` entry points of attn/cuda/Offload.h for the fused attention and the
// recurrent layers: memrefs in and out, the GPU's kernels in between. Per call: gather each
// operand into a contiguous device buffer (honouring the memref's strides; rounded to bf16
// for the attention), run the kernels, and scatter the results (widened to f32) into the
// result memrefs. A --device cuda program's memrefs are managed or device memory, which the
// GPU addresses: the gathers and scatters are kernels, queued in order with the work before
// and after, and the host neither waits nor touches the data. A memref in host memory is
// gathered on the host instead (after a wait for the work queued before) and copied over, and
// its result copied back. The attention's device buffers grow and are kept per thread; the
// recurrent layers' come from the stream-ordered pool per call (attn/cuda/Device.h), so
// neither waits.
#include "attn/cuda/Device.h"
#include "attn/cuda/FlashAttention.h"
#include "attn/cuda/Offload.h"
#include "attn/cuda/Recurrent.h"
#include "runtime/cuda/Fail.h"
#include "runtime/cuda/Gather.h"
#include "runtime/cuda/OffloadKernels.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace {

using namespace attn::cuda;

using internal::fail;

void check(const char *kernel, const Status &st) {
  if (!st.ok())
    fail(kernel, st.message());
}

void check(const char *kernel, cudaError_t err) {
  if (err != cudaSuccess)
    fail(kernel, cudaGetErrorString(err));
}

__global__ void toBf16(const float *__restrict__ in, __nv_bfloat16 *__restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16(in[i]);
}

__global__ void toF32(const __nv_bfloat16 *__restrict__ in, float *__restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}

unsigned blocksFor(size_t n) { return unsigned(std::min<size_t>((n + 255) / 256, 4096)); }

template <int N> size_t count(const int64_t (&sizes)[N]) {
  size_t n = 1;
  for (int64_t s : sizes)
    n *= size_t(s);
  return n;
}

// Whether the GPU addresses the memref's storage (managed or device memory), or it has no
// element to move.
template <typename M> bool onGpu(const M &m) {
  return count(m.sizes) == 0 || deviceAddressable(m.aligned);
}
// Whether every one of the memrefs is on the GPU: then nothing is gathered on the host, which
// need not wait for the work queued before.
template <typename... M> bool allOnGpu(const M *...ms) { return (onGpu(*ms) && ...); }

template <typename M, int N, typename T> void gatherOnGpu(const char *kernel, const M &m, T *out) {
  if (size_t n = count(m.sizes)) {
    offload::gatherKernel<M, N, T><<<blocksFor(n), 256>>>(m, out, n);
    check(kernel, cudaGetLastError());
  }
}
template <typename M, int N, typename T> void scatterOnGpu(const char *kernel, const T *in, M &m) {
  if (size_t n = count(m.sizes)) {
    offload::scatterKernel<M, N, T><<<blocksFor(n), 256>>>(in, m, n);
    check(kernel, cudaGetLastError());
  }
}

template <typename M, int N> void gather(const M &m, std::vector<float> &out) {
  out.resize(count(m.sizes));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = m.aligned[offload::offsetOf<M, N>(m, i)];
}

template <typename M, int N> void scatter(const std::vector<float> &in, M &m) {
  for (size_t i = 0; i < in.size(); ++i)
    m.aligned[offload::offsetOf<M, N>(m, i)] = in[i];
}

// A device buffer that grows to the largest size asked of it.
struct Slot {
  DeviceBuffer buffer;
  void *get(const char *kernel, size_t bytes) {
    if (buffer.bytes() < bytes) {
      buffer = DeviceBuffer(bytes);
      check(kernel, buffer.status());
    }
    return buffer.data();
  }
};

struct Staging {
  Slot f32, bf16[8], f32Out[4];
  std::vector<float> host;
};

Staging &staging() {
  thread_local Staging s;
  return s;
}

void requireDevice(const char *kernel) {
  static const std::string why = deviceUnavailable();
  if (!why.empty())
    fail(kernel, why);
}

// Memref -> device bf16 in slot `slot`.
template <typename M, int N> void *uploadBf16(const char *kernel, const M &m, int slot) {
  Staging &s = staging();
  if (onGpu(m)) {
    auto *bf = static_cast<__nv_bfloat16 *>(
        s.bf16[slot].get(kernel, count(m.sizes) * sizeof(__nv_bfloat16)));
    gatherOnGpu<M, N>(kernel, m, bf);
    return bf;
  }
  gather<M, N>(m, s.host);
  const size_t n = s.host.size();
  float *f32 = static_cast<float *>(s.f32.get(kernel, n * sizeof(float)));
  check(kernel, cudaMemcpy(f32, s.host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  auto *bf = static_cast<__nv_bfloat16 *>(s.bf16[slot].get(kernel, n * sizeof(__nv_bfloat16)));
  toBf16<<<blocksFor(n), 256>>>(f32, bf, n);
  check(kernel, cudaGetLastError());
  return bf;
}

// Memref -> device f32 in slot `slot` (masks, lse).
template <typename M, int N> float *uploadF32(const char *kernel, const M &m, int slot) {
  Staging &s = staging();
  if (onGpu(m)) {
    float *f32 = static_cast<float *>(s.f32Out[slot].get(kernel, count(m.sizes) * sizeof(float)));
    gatherOnGpu<M, N>(kernel, m, f32);
    return f32;
  }
  gather<M, N>(m, s.host);
  const size_t n = s.host.size();
  float *f32 = static_cast<float *>(s.f32Out[slot].get(kernel, n * sizeof(float)));
  check(kernel, cudaMemcpy(f32, s.host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  return f32;
}

// Device bf16 -> memref.
template <typename M, int N> void downloadBf16(const char *kernel, const void *bf, M &m) {
  if (onGpu(m))
    return scatterOnGpu<M, N>(kernel, static_cast<const __nv_bfloat16 *>(bf), m);
  Staging &s = staging();
  const size_t n = count(m.sizes);
  float *f32 = static_cast<float *>(s.f32.get(kernel, n * sizeof(float)));
  toF32<<<blocksFor(n), 256>>>(static_cast<const __nv_bfloat16 *>(bf), f32, n);
  check(kernel, cudaGetLastError());
  s.host.resize(n);
  check(kernel, cudaMemcpy(s.host.data(), f32, n * sizeof(float), cudaMemcpyDeviceToHost));
  scatter<M, N>(s.host, m);
}

template <typename M, int N> void downloadF32(const char *kernel, const float *f32, M &m) {
  if (onGpu(m))
    return scatterOnGpu<M, N>(kernel, f32, m);
  Staging &s = staging();
  s.host.resize(count(m.sizes));
  check(kernel,
        cudaMemcpy(s.host.data(), f32, s.host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  scatter<M, N>(s.host, m);
}

AttentionShape shapeOf(const char *kernel, const attn_memref4 &q, const attn_memref4 &k,
                       const attn_memref4 &v, int64_t causal, float scale) {
  AttentionShape s;
  s.batch = q.sizes[0];
  s.heads = q.sizes[1];
  s.queries = q.sizes[2];
  s.keys = k.sizes[2];
  s.headDim = q.sizes[3];
  s.causal = causal != 0;
  s.scale = scale;
  if (v.sizes[3] != s.headDim)
    fail(kernel, "values of width " + std::to_string(v.sizes[3]) + " for keys of width " +
                     std::to_string(s.headDim) + ": the GPU kernels take one head dim");
  check(kernel, checkAttentionShape(s));
  return s;
}

} // namespace

namespace attn::cuda::internal {
void gatherOnGpu(const char *what, const attn_memref1 &m, float *out) {
  ::gatherOnGpu<attn_memref1, 1>(what, m, out);
}
void gatherOnGpu(const char *what, const attn_memref3 &m, float *out) {
  ::gatherOnGpu<attn_memref3, 3>(what, m, out);
}
void gatherOnGpu(const char *what, const attn_memref_bf16_3 &m, uint16_t *out) {
  ::gatherOnGpu<attn_memref_bf16_3, 3>(what, m, out);
}
} // namespace attn::cuda::internal

namespace {

// A memref's elements in a device buffer of its own, f32 (the recurrent entries: they run in
// f32 throughout, so a call owns its few buffers).
template <typename M, int N> DeviceBuffer onDevice(const char *kernel, const M &m) {
  if (onGpu(m)) {
    DeviceBuffer buf(count(m.sizes) * sizeof(float));
    check(kernel, buf.status());
    gatherOnGpu<M, N>(kernel, m, buf.as<float>());
    return buf;
  }
  std::vector<float> host;
  gather<M, N>(m, host);
  DeviceBuffer buf(host.size() * sizeof(float));
  check(kernel, buf.status());
  check(kernel, buf.upload(host.data(), host.size() * sizeof(float)));
  return buf;
}

// A device buffer for a result memref's elements.
template <typename M> DeviceBuffer resultFor(const char *kernel, const M &m) {
  DeviceBuffer buf(count(m.sizes) * sizeof(float));
  check(kernel, buf.status());
  return buf;
}

template <typename M, int N> void toHost(const char *kernel, const DeviceBuffer &buf, M &m) {
  if (onGpu(m))
    return scatterOnGpu<M, N>(kernel, buf.as<float>(), m);
  std::vector<float> host(count(m.sizes));
  check(kernel, buf.download(host.data(), host.size() * sizeof(float)));
  scatter<M, N>(host, m);
}

// The CPU kernels' kinds (attn/kernels.h) the GPU sequence loop has; the shape from x [B, T,
// I] and h0 [B, H].
RecurrentCell cellOf(const char *kernel, int64_t kind) {
  if (kind == ATTN_RNN_LSTM)
    return RecurrentCell::Lstm;
  if (kind == ATTN_RNN_GRU)
    return RecurrentCell::Gru;
  if (kind == ATTN_RNN_VANILLA)
    return RecurrentCell::Rnn;
  fail(kernel, "the GPU's sequence loop has no RNN kind " + std::to_string(kind));
}

// With a projection, h0 is [B, P] and w_proj [H, P].
RecurrentShape sequenceShape(const attn_memref3 &x, const attn_memref2 &h0,
                             const attn_memref2 &w_proj, int64_t reverse, int64_t projection) {
  RecurrentShape s;
  s.batch = x.sizes[0];
  s.steps = x.sizes[1];
  s.input = x.sizes[2];
  s.hidden = projection ? w_proj.sizes[0] : h0.sizes[1];
  s.projection = projection ? w_proj.sizes[1] : 0;
  s.reverse = reverse != 0;
  return s;
}

// A layer's operands on the device, from the RNN kernels' memrefs (attn/kernels.h): those
// the cell reads (c0, the peepholes and the projection for the LSTM, b_hh for the GRU, the
// mask if any; the LSTM's and the vanilla RNN's one bias is b_ih).
struct LayerOnDevice {
  RecurrentCell cell;
  RecurrentShape shape;
  DeviceBuffer x, h0, c0, wIh, wHh, bIh, bHh, peephole, wProj, mask;

  LayerOnDevice(const char *kernel, attn_memref3 *x_, attn_memref2 *h0_, attn_memref2 *c0_,
                attn_memref2 *w_ih, attn_memref2 *w_hh, attn_memref1 *b_ih, attn_memref1 *b_hh,
                attn_memref2 *w_peephole, attn_memref2 *w_proj, attn_memref3 *mask_, int64_t kind,
                int64_t reverse, int64_t withPeephole, int64_t projection, int64_t masked)
      : cell(cellOf(kernel, kind)), shape(sequenceShape(*x_, *h0_, *w_proj, reverse, projection)) {
    const bool lstm = cell == RecurrentCell::Lstm;
    x = onDevice<attn_memref3, 3>(kernel, *x_);
    h0 = onDevice<attn_memref2, 2>(kernel, *h0_);
    if (lstm)
      c0 = onDevice<attn_memref2, 2>(kernel, *c0_);
    wIh = onDevice<attn_memref2, 2>(kernel, *w_ih);
    wHh = onDevice<attn_memref2, 2>(kernel, *w_hh);
    bIh = onDevice<attn_memref1, 1>(kernel, *b_ih);
    if (gru())
      bHh = onDevice<attn_memref1, 1>(kernel, *b_hh);
    if (withPeephole)
      peephole = onDevice<attn_memref2, 2>(kernel, *w_peephole);
    if (projection)
      wProj = onDevice<attn_memref2, 2>(kernel, *w_proj);
    if (masked)
      mask = onDevice<attn_memref3, 3>(kernel, *mask_);
  }
  bool lstm() const { return cell == RecurrentCell::Lstm; }
  bool gru() const { return cell == RecurrentCell::Gru; }
  RecurrentWeights weights() const {
    return {wIh.as<float>(), wHh.as<float>(),      bIh.as<float>(),
            bHh.as<float>(), peephole.as<float>(), wProj.as<float>()};
  }
};

} // namespace

extern "C" void _mlir_ciface_attn_rt_cuda_rnn_forward(
    attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,
    attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
    attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n, int64_t kind,
    int64_t reverse, int64_t /*training*/, int64_t peephole, int64_t projection, int64_t masked) {
  const char *kernel = "attn_rt_cuda_rnn_forward";
  requireDevice(kernel);
  // A gather on the host reads what queued work writes.
  if (!allOnGpu(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask, outputs, h_n, c_n))
    attn_rt_cuda_synchronize();
  const LayerOnDevice l(kernel, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask, kind,
                        reverse, peephole, projection, masked);
  DeviceBuffer out = resultFor(kernel, *outputs), hn = resultFor(kernel, *h_n),
               cn = l.lstm() ? resultFor(kernel, *c_n) : DeviceBuffer();
  check(kernel, recurrentForward(l.shape, l.cell, l.weights(), l.x.as<float>(),
                                 l.h0.as<float>(), l.c0.as<float>(), l.mask.as<float>(),
                                 out.as<float>(), hn.as<float>(), cn.as<float>()));
  toHost<attn_memref3, 3>(kernel, out, *outputs);
  toHost<attn_memref2, 2>(kernel, hn, *h_n);
  if (l.lstm())
    toHost<attn_memref2, 2>(kernel, cn, *c_n);
}

extern "C" void _mlir_ciface_attn_rt_cuda_rnn_backward(
    attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,
    attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
    attn_memref3 *mask, attn_memref3 * /*outputs*/, attn_memref2 * /*h_n*/, attn_memref2 * /*c_n*/,
    attn_memref3 *d_outputs, attn_memref2 *d_h_n, attn_memref2 *d_c_n, attn_memref3 *d_x,
    attn_memref2 *d_h0, attn_memref2 *d_c0, attn_memref2 *d_w_ih, attn_memref2 *d_w_hh,
    attn_memref1 *d_b_ih, attn_memref1 *d_b_hh, attn_memref2 *d_w_peephole, attn_memref2 *d_w_proj,
    int64_t kind, int64_t reverse, int64_t peephole, int64_t projection, int64_t masked) {
  const char *kernel = "attn_rt_cuda_rnn_backward";
  requireDevice(kernel);
  // A gather on the host reads what queued work writes.
  if (!allOnGpu(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask, d_outputs, d_h_n,
                d_c_n, d_x, d_h0, d_c0, d_w_ih, d_w_hh, d_b_ih, d_b_hh, d_w_peephole, d_w_proj))
    attn_rt_cuda_synchronize();
  const LayerOnDevice l(kernel, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask, kind,
                        reverse, peephole, projection, masked);
  const bool lstm = l.lstm();
  DeviceBuffer gOut = onDevice<attn_memref3, 3>(kernel, *d_outputs),
               ghn = onDevice<attn_memref2, 2>(kernel, *d_h_n),
               gcn = lstm ? onDevice<attn_memref2, 2>(kernel, *d_c_n) : DeviceBuffer();
  DeviceBuffer rx = resultFor(kernel, *d_x), rh0 = resultFor(kernel, *d_h0),
               rc0 = lstm ? resultFor(kernel, *d_c0) : DeviceBuffer(),
               rwih = resultFor(kernel, *d_w_ih), rwhh = resultFor(kernel, *d_w_hh),
               rbih = resultFor(kernel, *d_b_ih),
               rbhh = l.gru() ? resultFor(kernel, *d_b_hh) : DeviceBuffer(),
               rwp = peephole ? resultFor(kernel, *d_w_peephole) : DeviceBuffer(),
               rwproj = projection ? resultFor(kernel, *d_w_proj) : DeviceBuffer();
  const RecurrentGradients g{rx.as<float>(),   rh0.as<float>(),  rc0.as<float>(),
                             rwih.as<float>(), rwhh.as<float>(), rbih.as<float>(),
                             rbhh.as<float>(), rwp.as<float>(),  rwproj.as<float>()};
  check(kernel, recurrentBackward(l.shape, l.cell, l.weights(), l.x.as<float>(),
                                  l.h0.as<float>(), l.c0.as<float>(), l.mask.as<float>(),
                                  gOut.as<float>(), ghn.as<float>(), gcn.as<float>(), g));
  // An LSTM's or a vanilla RNN's d_b_hh is its d_b_ih (one bias), a GRU's or an RNN's d_c0
  // its d_h0: the lowering passes the same buffer, which the kernel writes once.
  toHost<attn_memref3, 3>(kernel, rx, *d_x);
  toHost<attn_memref2, 2>(kernel, rh0, *d_h0);
  toHost<attn_memref2, 2>(kernel, rwih, *d_w_ih);
  toHost<attn_memref2, 2>(kernel, rwhh, *d_w_hh);
  toHost<attn_memref1, 1>(kernel, rbih, *d_b_ih);
  if (lstm)
    toHost<attn_memref2, 2>(kernel, rc0, *d_c0);
  if (l.gru())
    toHost<attn_memref1, 1>(kernel, rbhh, *d_b_hh);
  if (peephole)
    toHost<attn_memref2, 2>(kernel, rwp, *d_w_peephole);
  if (projection)
    toHost<attn_memref2, 2>(kernel, rwproj, *d_w_proj);
}

extern "C" void _mlir_ciface_attn_rt_cuda_flash_attention(attn_memref4 *q, attn_memref4 *k,
                                                          attn_memref4 *v, attn_memref2 *mask,
                                                          attn_memref4 *out, attn_memref3 *lse,
                                                          int64_t causal, float scale) {
  const char *kernel = "attn_rt_cuda_flash_attention";
  requireDevice(kernel);
  // A gather on the host reads what queued work writes; a scatter there, what it wrote.
  const bool queued = allOnGpu(q, k, v, mask, out, lse);
  if (!queued)
    attn_rt_cuda_synchronize();
  const AttentionShape s = shapeOf(kernel, *q, *k, *v, causal, scale);
  void *dq = uploadBf16<attn_memref4, 4>(kernel, *q, 0);
  void *dk = uploadBf16<attn_memref4, 4>(kernel, *k, 1);
  void *dv = uploadBf16<attn_memref4, 4>(kernel, *v, 2);
  AttentionMasks masks;
  masks.keyMask = uploadF32<attn_memref2, 2>(kernel, *mask, 0);
  void *dOut = staging().bf16[3].get(kernel, count(out->sizes) * sizeof(__nv_bfloat16));
  float *dLse = static_cast<float *>(staging().f32Out[1].get(kernel, count(lse->sizes) * 4));
  check(kernel, flashAttentionForward(s, DType::BF16, dq, dk, dv, masks, dOut, dLse));
  downloadBf16<attn_memref4, 4>(kernel, dOut, *out);
  downloadF32<attn_memref3, 3>(kernel, dLse, *lse);
  if (!queued)
    check(kernel, synchronize());
}

extern "C" void _mlir_ciface_attn_rt_cuda_flash_attention_backward(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref4 *out,
    attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse, attn_memref4 *dq, attn_memref4 *dk,
    attn_memref4 *dv, int64_t causal, float scale) {
  const char *kernel = "attn_rt_cuda_flash_attention_backward";
  requireDevice(kernel);
  // A gather on the host reads what queued work writes; a scatter there, what it wrote.
  const bool queued = allOnGpu(q, k, v, mask, out, lse, d_out, d_lse, dq, dk, dv);
  if (!queued)
    attn_rt_cuda_synchronize();
  const AttentionShape s = shapeOf(kernel, *q, *k, *v, causal, scale);
  void *devQ = uploadBf16<attn_memref4, 4>(kernel, *q, 0);
  void *devK = uploadBf16<attn_memref4, 4>(kernel, *k, 1);
  void *devV = uploadBf16<attn_memref4, 4>(kernel, *v, 2);
  void *devOut = uploadBf16<attn_memref4, 4>(kernel, *out, 3);
  void *devDOut = uploadBf16<attn_memref4, 4>(kernel, *d_out, 4);
  AttentionMasks masks;
  masks.keyMask = uploadF32<attn_memref2, 2>(kernel, *mask, 0);
  const float *devLse = uploadF32<attn_memref3, 3>(kernel, *lse, 1);
  const float *devDLse = uploadF32<attn_memref3, 3>(kernel, *d_lse, 2);
  Staging &st = staging();
  void *gq = st.bf16[5].get(kernel, count(dq->sizes) * sizeof(__nv_bfloat16));
  void *gk = st.bf16[6].get(kernel, count(dk->sizes) * sizeof(__nv_bfloat16));
  void *gv = st.bf16[7].get(kernel, count(dv->sizes) * sizeof(__nv_bfloat16));
  void *workspace = st.f32Out[3].get(kernel, flashAttentionBackwardWorkspace(s));
  check(kernel, flashAttentionBackward(s, DType::BF16, devQ, devK, devV, masks, devOut, devLse,
                                       devDOut, devDLse, gq, gk, gv, workspace));
  downloadBf16<attn_memref4, 4>(kernel, gq, *dq);
  downloadBf16<attn_memref4, 4>(kernel, gk, *dk);
  downloadBf16<attn_memref4, 4>(kernel, gv, *dv);
  if (!queued)
    check(kernel, synchronize());
}
