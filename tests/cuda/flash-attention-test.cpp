// Conformance of the GPU fused attention (attn/cuda/FlashAttention.h) on a GPU, against the
// op's definition in double from the same rounded inputs (AttentionReference.h): forward (out,
// lse) and backward (dq, dk, dv) for every case of conformanceCases(). Every output is poisoned
// with NaN before the call, so an element the kernels forget to write fails; the backward runs
// twice and must give the same bits (it has no atomics).
//
// A plain program rather than a GoogleTest one: scripts/gpu-check.sh builds it on the GPU
// machine, which has CUDA and CMake but no GoogleTest. Exit 0 pass, 1 fail, 77 no GPU (ctest's
// SKIP_RETURN_CODE).
#include "AttentionReference.h"
#include "GpuTest.h"

#include "attn/cuda/Offload.h"

#include <cuda_runtime_api.h>

#include <array>

using namespace attn::cuda;
using namespace attn::cuda::testing;

namespace {

std::vector<double> download16(const DeviceBuffer &buf, size_t n, DType dtype) {
  std::vector<uint16_t> bits = downloaded<uint16_t>(buf, n);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = fromBits(bits[i], dtype);
  return out;
}

std::vector<double> download32(const DeviceBuffer &buf, size_t n) {
  std::vector<float> f = downloaded<float>(buf, n);
  return std::vector<double>(f.begin(), f.end());
}

void runCase(const Case &c, std::mt19937 &rng) {
  const AttentionShape &s = c.shape;
  std::printf("  %s: %s B%lld H%lld T%lld S%lld D%lld%s%s\n", c.name,
              c.dtype == DType::BF16 ? "bf16" : "f16", (long long)s.batch, (long long)s.heads,
              (long long)s.queries, (long long)s.keys, (long long)s.headDim,
              s.causal ? " causal" : "", c.validKeys.empty() ? "" : " key-mask");
  if (s.window >= 0)
    std::printf("    window %lld around a monotonic alignment\n", (long long)s.window);
  const Problem p = makeProblem(c, rng);
  const size_t nq = p.q.bits.size(), nk = p.k.bits.size(), rows = p.dLse.size();
  DeviceBuffer q = uploaded(p.q.bits.data(), nq * 2), k = uploaded(p.k.bits.data(), nk * 2),
               v = uploaded(p.v.bits.data(), nk * 2), dOut = uploaded(p.dOut.bits.data(), nq * 2),
               mask = uploaded(p.mask.data(), p.mask.size() * 4),
               dLse = uploaded(p.dLse.data(), rows * 4);
  DeviceBuffer center = uploaded(p.center.data(), rows * 4);
  AttentionMasks masks;
  masks.keyMask = p.hasMask() ? mask.as<float>() : nullptr;
  masks.center = p.hasWindow() ? center.as<float>() : nullptr;
  const float *dLsePtr = c.withDLse ? dLse.as<float>() : nullptr;

  DeviceBuffer out = poisoned(nq * 2), lse = poisoned(rows * 4);
  if (!check(flashAttentionForward(s, c.dtype, q.data(), k.data(), v.data(), masks, out.data(),
                                   lse.as<float>()),
             "forward") ||
      !check(synchronize(), "forward"))
    return;
  Outputs got{download16(out, nq, c.dtype), download32(lse, rows), {}, {}, {}};

  DeviceBuffer workspace(flashAttentionBackwardWorkspace(s));
  std::vector<double> previous[3];
  for (int run = 0; run < 2; ++run) {
    DeviceBuffer dq = poisoned(nq * 2), dk = poisoned(nk * 2), dv = poisoned(nk * 2);
    if (!check(flashAttentionBackward(s, c.dtype, q.data(), k.data(), v.data(), masks, out.data(),
                                      lse.as<float>(), dOut.data(), dLsePtr, dq.data(), dk.data(),
                                      dv.data(), workspace.data()),
               "backward") ||
        !check(synchronize(), "backward"))
      return;
    got.dq = download16(dq, nq, c.dtype);
    got.dk = download16(dk, nk, c.dtype);
    got.dv = download16(dv, nk, c.dtype);
    if (run == 1 && !(previous[0] == got.dq && previous[1] == got.dk && previous[2] == got.dv))
      fail("the backward gave different bits on the same inputs");
    previous[0] = got.dq;
    previous[1] = got.dk;
    previous[2] = got.dv;
  }
  for (const std::string &f : compare(p, got))
    fail(f);
}

// --device cuda's entry points (attn/cuda/Offload.h), as compiled code calls them: f32 host
// memrefs in and out, q a strided view (stored [B, T, H, D]), the rest contiguous.
void runOffload(std::mt19937 &rng) {
  const Case c{"offload", DType::BF16, attentionShape(2, 2, 40, 70, 64, true), {70, 33}, true};
  std::printf("  --device cuda entry points: B2 H2 T40 S70 D64 causal key-mask, q strided\n");
  const Problem p = makeProblem(c, rng);
  const int64_t B = 2, H = 2, T = 40, S = 70, D = 64;
  auto f32 = [](const std::vector<double> &v) { return std::vector<float>(v.begin(), v.end()); };
  std::vector<float> qStored(B * T * H * D), k = f32(p.k.values), v = f32(p.v.values),
                                             dOut = f32(p.dOut.values), mask = p.mask,
                                             dLse = p.dLse;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d)
          qStored[((b * T + t) * H + h) * D + d] = float(p.q.values[((b * H + h) * T + t) * D + d]);
  auto m4 = [](float *data, std::array<int64_t, 4> sizes, std::array<int64_t, 4> strides) {
    attn_memref4 m{data, data, 0, {}, {}};
    for (int i = 0; i < 4; ++i) {
      m.sizes[i] = sizes[i];
      m.strides[i] = strides[i];
    }
    return m;
  };
  auto dense4 = [&](float *data, int64_t rows) {
    return m4(data, {B, H, rows, D}, {H * rows * D, rows * D, D, 1});
  };
  attn_memref4 q = m4(qStored.data(), {B, H, T, D}, {T * H * D, D, H * D, 1});
  attn_memref4 km = dense4(k.data(), S), vm = dense4(v.data(), S), dom = dense4(dOut.data(), T);
  attn_memref2 maskm{mask.data(), mask.data(), 0, {B, S}, {S, 1}};
  std::vector<float> out(B * H * T * D, NAN), lse(B * H * T, NAN), dq(B * H * T * D, NAN),
      dk(B * H * S * D, NAN), dv(B * H * S * D, NAN);
  attn_memref4 outm = dense4(out.data(), T), dqm = dense4(dq.data(), T), dkm = dense4(dk.data(), S),
               dvm = dense4(dv.data(), S);
  attn_memref3 lsem{lse.data(), lse.data(), 0, {B, H, T}, {H * T, T, 1}};
  attn_memref3 dlsem{dLse.data(), dLse.data(), 0, {B, H, T}, {H * T, T, 1}};
  _mlir_ciface_attn_rt_cuda_flash_attention(&q, &km, &vm, &maskm, &outm, &lsem, 1, c.shape.scale);
  _mlir_ciface_attn_rt_cuda_flash_attention_backward(&q, &km, &vm, &maskm, &outm, &lsem, &dom,
                                                     &dlsem, &dqm, &dkm, &dvm, 1, c.shape.scale);
  auto f64 = [](const std::vector<float> &v) { return std::vector<double>(v.begin(), v.end()); };
  const Outputs got{f64(out), f64(lse), f64(dq), f64(dk), f64(dv)};
  for (const std::string &f : compare(p, got))
    fail("offload: " + f);
}

} // namespace

int main() {
  if (skipWithoutDevice())
    return 77;
  std::mt19937 rng(20261203);
  for (const Case &c : conformanceCases())
    runCase(c, rng);
  runOffload(rng);

  // Shapes the kernels are not built for are refused with the shape in the message.
  Status bad = checkAttentionShape(attentionShape(1, 1, 8, 8, 96, false));
  if (bad.ok() || bad.message().find("head dim 96") == std::string::npos)
    fail("head dim 96 must be refused by name: " + bad.message());

  return finish();
}
