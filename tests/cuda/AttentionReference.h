// The fused attention's definition in double on the CPU, and the conformance cases and checks
// that both GPU-kernel tests share: flash-attention-test.cpp (on a GPU) and
// emulated-attention-test.cpp (the same kernels on tests/cuda/WarpEmulator.h, in CI).
#ifndef ATTN_TESTS_CUDA_ATTENTIONREFERENCE_H
#define ATTN_TESTS_CUDA_ATTENTIONREFERENCE_H

#include "attn/cuda/FlashAttention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace attn::cuda::testing {

struct Case {
  const char *name;
  DType dtype;
  AttentionShape shape;
  // Per batch row, how many leading keys are allowed; empty: no key mask.
  std::vector<int64_t> validKeys;
  bool withDLse;
  // Too big for the emulator (minutes on CPU threads): GPU only.
  bool large = false;
};

inline AttentionShape attentionShape(int64_t B, int64_t H, int64_t T, int64_t S, int64_t D,
                                     bool causal, int64_t window = -1) {
  AttentionShape s;
  s.batch = B;
  s.heads = H;
  s.queries = T;
  s.keys = S;
  s.headDim = D;
  s.causal = causal;
  s.scale = 1.0f / std::sqrt(float(D));
  s.window = window;
  return s;
}

// For GoogleTest's messages.
inline void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

// Both storage types, both head dims, causal and not, key masks, local windows, rows and a
// whole batch row with no allowed key, T != S both ways, lengths off the 64-row tiles, and
// several tiles.
inline std::vector<Case> conformanceCases() {
  return {
      {"self, one partial tile", DType::BF16, attentionShape(2, 3, 77, 77, 64, false), {}, false},
      {"causal self, three tiles",
       DType::BF16,
       attentionShape(1, 2, 130, 130, 128, true),
       {},
       false},
      {"cross, padded keys, d_lse",
       DType::F16,
       attentionShape(2, 2, 50, 93, 64, false),
       {93, 63},
       true},
      {"causal, more queries than keys",
       DType::BF16,
       attentionShape(2, 1, 70, 40, 128, true),
       {},
       true},
      {"a batch row with no key",
       DType::F16,
       attentionShape(2, 2, 33, 65, 128, false),
       {65, 0},
       false},
      {"causal, fewer queries than keys",
       DType::F16,
       attentionShape(1, 2, 40, 150, 64, true),
       {},
       false},
      {"causal, padded keys", DType::F16, attentionShape(2, 2, 96, 96, 64, true), {96, 50}, true},
      {"local window, padded keys",
       DType::BF16,
       attentionShape(2, 2, 30, 45, 64, false, 4),
       {45, 20},
       true},
      {"local window, whole tiles",
       DType::BF16,
       attentionShape(1, 1, 128, 128, 64, false, 8),
       {},
       false},
      {"local window, causal", DType::F16, attentionShape(1, 2, 70, 70, 128, true, 6), {}, false},
      {"long causal", DType::BF16, attentionShape(1, 2, 520, 520, 128, true), {}, false, true},
      {"long", DType::BF16, attentionShape(1, 1, 300, 700, 64, false), {}, false, true},
  };
}

// Host storage in the kernels' element type, and the values it holds as doubles.
struct Tensor {
  std::vector<uint16_t> bits;
  std::vector<double> values;
};

inline uint16_t toBits(float x, DType dtype) {
  uint16_t bits;
  if (dtype == DType::BF16) {
    __nv_bfloat16 h = __float2bfloat16(x);
    std::memcpy(&bits, &h, 2);
  } else {
    __half h = __float2half(x);
    std::memcpy(&bits, &h, 2);
  }
  return bits;
}

inline double fromBits(uint16_t bits, DType dtype) {
  if (dtype == DType::BF16) {
    __nv_bfloat16 h;
    std::memcpy(&h, &bits, 2);
    return __bfloat162float(h);
  }
  __half h;
  std::memcpy(&h, &bits, 2);
  return __half2float(h);
}

inline Tensor randomTensor(size_t n, DType dtype, std::mt19937 &rng, float sigma) {
  std::normal_distribution<float> dist(0.0f, sigma);
  Tensor t;
  t.bits.resize(n);
  t.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    t.bits[i] = toBits(dist(rng), dtype);
    t.values[i] = fromBits(t.bits[i], dtype);
  }
  return t;
}

struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
  std::vector<bool> emptyRow;
};

// The op's definition (attn/kernels.h), row by row, in double.
inline Reference reference(const AttentionShape &s, const std::vector<float> &mask,
                           const std::vector<float> &center, bool hasMask, const Tensor &q,
                           const Tensor &k, const Tensor &v, const Tensor &dOut,
                           const std::vector<double> &dLse) {
  const int64_t B = s.batch, H = s.heads, T = s.queries, S = s.keys, D = s.headDim;
  Reference r;
  r.out.assign(B * H * T * D, 0.0);
  r.lse.assign(B * H * T, 0.0);
  r.dq.assign(B * H * T * D, 0.0);
  r.dk.assign(B * H * S * D, 0.0);
  r.dv.assign(B * H * S * D, 0.0);
  r.emptyRow.assign(B * H * T, false);
  std::vector<double> p(S), dp(S);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t bh = b * H + h;
      for (int64_t i = 0; i < T; ++i) {
        const double *qi = &q.values[(bh * T + i) * D];
        double mx = -std::numeric_limits<double>::infinity();
        std::vector<bool> ok(S);
        for (int64_t j = 0; j < S; ++j) {
          ok[j] = (!hasMask || mask[b * S + j] != 0.0f) && (!s.causal || j <= i + S - T) &&
                  (s.window < 0 || std::fabs(double(j) - center[bh * T + i]) <= s.window);
          if (!ok[j])
            continue;
          double dot = 0;
          for (int64_t c = 0; c < D; ++c)
            dot += qi[c] * k.values[(bh * S + j) * D + c];
          p[j] = dot * s.scale;
          mx = std::max(mx, p[j]);
        }
        if (mx == -std::numeric_limits<double>::infinity()) {
          r.emptyRow[bh * T + i] = true;
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j)
          sum += ok[j] ? std::exp(p[j] - mx) : 0.0;
        r.lse[bh * T + i] = mx + std::log(sum);
        for (int64_t j = 0; j < S; ++j)
          p[j] = ok[j] ? std::exp(p[j] - mx) / sum : 0.0;
        double *oi = &r.out[(bh * T + i) * D];
        for (int64_t j = 0; j < S; ++j)
          for (int64_t c = 0; c < D; ++c)
            oi[c] += p[j] * v.values[(bh * S + j) * D + c];
        // Backward: ds = p (dO . v_j - (dO . out - d_lse)).
        const double *doi = &dOut.values[(bh * T + i) * D];
        double delta = -dLse[bh * T + i];
        for (int64_t c = 0; c < D; ++c)
          delta += doi[c] * oi[c];
        for (int64_t j = 0; j < S; ++j) {
          if (p[j] == 0.0)
            continue;
          double dot = 0;
          for (int64_t c = 0; c < D; ++c)
            dot += doi[c] * v.values[(bh * S + j) * D + c];
          const double ds = p[j] * (dot - delta);
          for (int64_t c = 0; c < D; ++c) {
            r.dq[(bh * T + i) * D + c] += s.scale * ds * k.values[(bh * S + j) * D + c];
            r.dk[(bh * S + j) * D + c] += s.scale * ds * qi[c];
            r.dv[(bh * S + j) * D + c] += p[j] * doi[c];
          }
        }
      }
    }
  return r;
}

// A case's inputs, drawn at random (rounded to the storage type), and its reference.
struct Problem {
  Case c;
  Tensor q, k, v, dOut;
  std::vector<float> mask;   // [B, S], 1 where allowed
  std::vector<float> dLse;   // [B, H, T]; zeros without withDLse
  std::vector<float> center; // [B, H, T]: a monotonic alignment i S / T, jittered (windows)
  Reference ref;
  bool hasMask() const { return !c.validKeys.empty(); }
  bool hasWindow() const { return c.shape.window >= 0; }
};

inline Problem makeProblem(const Case &c, std::mt19937 &rng) {
  const AttentionShape &s = c.shape;
  const size_t nq = s.batch * s.heads * s.queries * s.headDim;
  const size_t nk = s.batch * s.heads * s.keys * s.headDim;
  const size_t rows = s.batch * s.heads * s.queries;
  Problem p{c,
            randomTensor(nq, c.dtype, rng, 1.0f),
            randomTensor(nk, c.dtype, rng, 1.0f),
            randomTensor(nk, c.dtype, rng, 1.0f),
            randomTensor(nq, c.dtype, rng, 1.0f),
            std::vector<float>(s.batch * s.keys, 1.0f),
            std::vector<float>(rows, 0.0f),
            std::vector<float>(rows, 0.0f),
            {}};
  for (int64_t b = 0; p.hasMask() && b < s.batch; ++b)
    for (int64_t j = c.validKeys[b]; j < s.keys; ++j)
      p.mask[b * s.keys + j] = 0.0f;
  std::normal_distribution<float> unit;
  for (size_t i = 0; c.withDLse && i < rows; ++i)
    p.dLse[i] = unit(rng);
  std::uniform_real_distribution<float> jitter(-1.5f, 1.5f);
  for (size_t row = 0; row < rows; ++row)
    p.center[row] = float(row % s.queries) * float(s.keys) / float(s.queries) + jitter(rng);
  std::vector<double> dLse(p.dLse.begin(), p.dLse.end());
  p.ref = reference(s, p.mask, p.center, p.hasMask(), p.q, p.k, p.v, p.dOut, dLse);
  return p;
}

// What the kernels gave, as doubles.
struct Outputs {
  std::vector<double> out, lse, dq, dk, dv;
};

// ||got - want|| / ||want||; infinity if an element is not finite (unwritten: outputs are
// poisoned with NaN before the kernels run).
inline double relativeError(const std::vector<double> &got, const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]))
      return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// The failures of `got` against the problem's reference (empty: conformant). bf16 keeps 8 bits
// of mantissa and f16 11: P and every output are rounded to them.
inline std::vector<std::string> compare(const Problem &p, const Outputs &got) {
  const bool bf16 = p.c.dtype == DType::BF16;
  const double tolForward = bf16 ? 1e-2 : 2e-3, tolBackward = bf16 ? 2e-2 : 5e-3;
  std::vector<std::string> failures;
  const struct {
    const char *name;
    const std::vector<double> &got, &want;
    double tol;
  } tensors[] = {{"out", got.out, p.ref.out, tolForward},
                 {"lse", got.lse, p.ref.lse, tolForward},
                 {"dq", got.dq, p.ref.dq, tolBackward},
                 {"dk", got.dk, p.ref.dk, tolBackward},
                 {"dv", got.dv, p.ref.dv, tolBackward}};
  std::string line = "    relative error:";
  for (const auto &t : tensors) {
    const double e = relativeError(t.got, t.want);
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.2e", t.name, e);
    line += buf;
    if (!(e <= t.tol))
      failures.push_back(std::string(t.name) + ": relative error " + std::to_string(e) +
                         " (tolerance " + std::to_string(t.tol) + ")" +
                         (std::isinf(e) ? ", an element is not finite (unwritten?)" : ""));
  }
  std::printf("%s\n", line.c_str());
  // Rows with no allowed key: exactly zero output, lse and dq.
  const int64_t D = p.c.shape.headDim;
  for (size_t row = 0; row < p.ref.emptyRow.size(); ++row) {
    if (!p.ref.emptyRow[row])
      continue;
    bool zero = got.lse[row] == 0.0;
    for (int64_t c = 0; c < D; ++c)
      zero = zero && got.out[row * D + c] == 0.0 && got.dq[row * D + c] == 0.0;
    if (!zero)
      failures.push_back("row " + std::to_string(row) +
                         " has no allowed key: its out, lse and dq must be exactly 0");
  }
  return failures;
}

} // namespace attn::cuda::testing

#endif // ATTN_TESTS_CUDA_ATTENTIONREFERENCE_H
