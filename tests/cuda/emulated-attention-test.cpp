// The GPU fused attention kernels (runtime/cuda/FlashKernels.cuh) compiled as C++ over
// WarpEmulator.h's CPU versions of their warp primitives, launched as flash_attention.cu
// launches them (the same Plan), against the op's definition in double: the conformance cases
// that fit on CPU threads. Runs in CI, where there is no GPU; what it cannot check, the
// GPU test does (flash-attention-test.cpp, scripts/gpu-check.sh).
#include "WarpEmulator.h"
// After the emulator: the kernels are written over its primitives.
#include "../../runtime/cuda/FlashKernels.cuh"

#include "AttentionReference.h"

#include <gtest/gtest.h>

namespace {

using namespace attn::cuda;
using namespace attn::cuda::flash;
using namespace attn::cuda::testing;
using emulator::Dim3;
using emulator::launch;

// Host arrays standing in for device memory, poisoned like the GPU test's (NaN everywhere).
template <typename T> std::vector<T> poisoned(size_t n) {
  std::vector<T> v(n);
  std::memset(v.data(), 0xff, n * sizeof(T));
  return v;
}

template <typename T> std::vector<double> asDoubles(const std::vector<T> &v, DType dtype) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, &v[i], 2);
    out[i] = fromBits(bits, dtype);
  }
  return out;
}

template <typename T, int D, bool Causal> Outputs run(const Problem &p) {
  const AttentionShape &s = p.c.shape;
  const Dims d{s.heads,          s.queries, s.keys,   p.hasMask(),
               s.scale * kLog2e, s.scale,   s.window, p.hasWindow() ? p.center.data() : nullptr};
  const size_t nq = p.q.bits.size(), nk = p.k.bits.size(), rows = p.dLse.size();
  auto input = [](const Tensor &t) {
    std::vector<T> v(t.bits.size());
    std::memcpy(v.data(), t.bits.data(), t.bits.size() * 2);
    return v;
  };
  const std::vector<T> q = input(p.q), k = input(p.k), v = input(p.v), dOut = input(p.dOut);
  const float *mask = p.hasMask() ? p.mask.data() : nullptr;
  const float *dLse = p.c.withDLse ? p.dLse.data() : nullptr;
  auto tiles = [](int64_t n) { return unsigned((n + kBlockRows - 1) / kBlockRows); };
  const unsigned bh = unsigned(s.batch * s.heads);

  std::vector<T> out = poisoned<T>(nq), dq = poisoned<T>(nq), dk = poisoned<T>(nk),
                 dv = poisoned<T>(nk);
  std::vector<float> lse = poisoned<float>(rows), delta = poisoned<float>(rows);
  launch(Dim3{tiles(s.queries), bh, 1}, Plan<T, D>::forwardShared, flashForward<T, D, Causal>, d,
         q.data(), k.data(), v.data(), mask, out.data(), lse.data());
  launch(Dim3{unsigned((rows + kWarps - 1) / kWarps), 1, 1}, 0, backwardDelta<T, D>, int64_t(rows),
         static_cast<const T *>(out.data()), dOut.data(), dLse, delta.data());
  launch(Dim3{tiles(s.queries), bh, 1}, Plan<T, D>::dqShared,
         flashBackwardDq<T, D, Causal, Plan<T, D>::dqKeys>, d, q.data(), k.data(), v.data(), mask,
         static_cast<const float *>(lse.data()), dOut.data(),
         static_cast<const float *>(delta.data()), dq.data());
  launch(Dim3{tiles(s.keys), bh, 1}, Plan<T, D>::dkdvShared,
         flashBackwardDkDv<T, D, Causal, Plan<T, D>::dkdvQueries>, d, q.data(), k.data(), v.data(),
         mask, static_cast<const float *>(lse.data()), dOut.data(),
         static_cast<const float *>(delta.data()), dk.data(), dv.data());
  return {asDoubles(out, p.c.dtype), std::vector<double>(lse.begin(), lse.end()),
          asDoubles(dq, p.c.dtype), asDoubles(dk, p.c.dtype), asDoubles(dv, p.c.dtype)};
}

template <typename T> Outputs runTyped(const Problem &p) {
  const AttentionShape &s = p.c.shape;
  if (s.headDim == 64)
    return s.causal ? run<T, 64, true>(p) : run<T, 64, false>(p);
  return s.causal ? run<T, 128, true>(p) : run<T, 128, false>(p);
}

class EmulatedFlashAttention : public ::testing::TestWithParam<Case> {};

TEST_P(EmulatedFlashAttention, MatchesTheDefinition) {
  const Case &c = GetParam();
  std::mt19937 rng(20261203);
  const Problem p = makeProblem(c, rng);
  const Outputs got = c.dtype == DType::BF16 ? runTyped<__nv_bfloat16>(p) : runTyped<__half>(p);
  for (const std::string &failure : compare(p, got))
    ADD_FAILURE() << c.name << ": " << failure;
}

std::vector<Case> emulatedCases() {
  std::vector<Case> cases;
  for (const Case &c : conformanceCases())
    if (!c.large)
      cases.push_back(c);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Conformance, EmulatedFlashAttention, ::testing::ValuesIn(emulatedCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string name;
                           for (const char *ch = info.param.name; *ch; ++ch)
                             name += std::isalnum(static_cast<unsigned char>(*ch)) ? *ch : '_';
                           return name;
                         });

} // namespace
