// Fused attention kernels (attn.fused_attention / attn.fused_attention_grad, kind "additive"),
// called by compiled code through attn/kernels.h. One pass per row over the keys: the scores
// never exist as a [B, S, A] tensor, and the backward recomputes tanh instead of storing it.
//
// Shapes at the boundary: q [B, A], k [B, S, A], v [A], mask [B, S], h [B, S, D];
// forward c [B, D], w [B, S]; backward dq [B, A], dk [B, S, A], dv [A], dh [B, S, D].
#include "attn/kernels.h"
#include "Memref.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>


using namespace attn::cpu::memref;

namespace {

// tanh as the rational function MLIR's (and Eigen's) polynomial approximation uses, so that
// the loops calling it vectorize (the clamp becomes min/max: this file is compiled with
// -fno-trapping-math); within 1e-6 of std::tanh (tests/unit/runtime/AttentionTest.cpp).
__attribute__((always_inline)) inline float fastTanh(float x) {
  const float bound = 7.90531110763549805f;
  float y = x < -bound ? -bound : (x > bound ? bound : x), y2 = y * y;
  float p = -2.76076847742355e-16f;
  p = p * y2 + 2.00018790482477e-13f;
  p = p * y2 - 8.60467152213735e-11f;
  p = p * y2 + 5.12229709037114e-08f;
  p = p * y2 + 1.48572235717979e-05f;
  p = p * y2 + 6.37261928875436e-04f;
  p = p * y2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * y2 + 1.18534705686654e-04f;
  q = q * y2 + 2.26843463243900e-03f;
  q = q * y2 + 4.89352518554385e-03f;
  return y * p / q;
}

struct Dims {
  int64_t B, S, A, D;
};

Dims checkShapes(const char *kernel, const attn_memref2 &q, const attn_memref3 &k,
                 const attn_memref1 &v, const attn_memref2 &mask, const attn_memref3 &h) {
  Dims d{q.sizes[0], k.sizes[1], q.sizes[1], h.sizes[2]};
  bool ok = k.sizes[0] == d.B && k.sizes[2] == d.A && v.sizes[0] == d.A && mask.sizes[0] == d.B &&
            mask.sizes[1] == d.S && h.sizes[0] == d.B && h.sizes[1] == d.S;
  if (!ok)
    fail(kernel, "inconsistent shapes: q [" + std::to_string(d.B) + ", " + std::to_string(d.A) +
                     "], k [" + std::to_string(k.sizes[0]) + ", " + std::to_string(k.sizes[1]) +
                     ", " + std::to_string(k.sizes[2]) + "], v [" + std::to_string(v.sizes[0]) +
                     "], mask [" + std::to_string(mask.sizes[0]) + ", " +
                     std::to_string(mask.sizes[1]) + "], h [" + std::to_string(h.sizes[0]) +
                     ", " + std::to_string(h.sizes[1]) + ", " + std::to_string(h.sizes[2]) + "]");
  return d;
}

// e[j] = sum_a v[a] tanh(q[a] + k[j, a]) for the keys of one row. k: [S, A].
ATTN_ROW_KERNEL float additiveScore(const float *q, const float *kj, const float *v, int64_t A) {
  float acc = 0;
#pragma omp simd reduction(+ : acc)
  for (int64_t a = 0; a < A; ++a)
    acc += v[a] * fastTanh(q[a] + kj[a]);
  return acc;
}

// The gradient of additiveScore, scaled by de = d loss / d e[j]: with t = tanh(q + k[j]),
// g = de v (1 - t^2); dq += g, dk[j] = g, dv += de t. Vectors of length A.
ATTN_ROW_KERNEL void additiveScoreBackward(const float *__restrict q, const float *__restrict kj,
                           const float *__restrict v, float de, float *__restrict dq,
                           float *__restrict dkj, float *__restrict dv, int64_t A) {
#pragma omp simd
  for (int64_t a = 0; a < A; ++a) {
    float t = fastTanh(q[a] + kj[a]);
    float g = de * v[a] * (1 - t * t);
    dq[a] += g;
    dkj[a] = g;
    dv[a] += de * t;
  }
}

} // namespace

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_additive_attention(
    attn_memref2 *qm, attn_memref3 *km, attn_memref1 *vm, attn_memref2 *maskm, attn_memref3 *hm,
    attn_memref2 *cm, attn_memref2 *wm) {
  Dims d = checkShapes("attn_rt_additive_attention", *qm, *km, *vm, *maskm, *hm);
  std::vector<float> bq, bk, bv, bmask, bh;
  const float *q = rowMajor(*qm, 2, bq), *k = rowMajor(*km, 3, bk), *v = rowMajor(*vm, 1, bv);
  const float *mask = rowMajor(*maskm, 2, bmask), *h = rowMajor(*hm, 3, bh);
  RowMajorOut<attn_memref2> c(*cm, 2), w(*wm, 2);
  std::vector<float> e(d.S);
  for (int64_t b = 0; b < d.B; ++b) {
    const float *mb = mask + b * d.S;
    float *wb = w.data + b * d.S, *cb = c.data + b * d.D;
    // Masked softmax of the scores: weights exp(e - max) * mask over their sum.
    float max = -INFINITY;
    for (int64_t j = 0; j < d.S; ++j)
      if (mb[j] != 0) {
        e[j] = additiveScore(q + b * d.A, k + (b * d.S + j) * d.A, v, d.A);
        max = std::max(max, e[j]);
      }
    float total = 0;
    for (int64_t j = 0; j < d.S; ++j) {
      wb[j] = mb[j] != 0 ? std::exp(e[j] - max) * mb[j] : 0.0f;
      total += wb[j];
    }
    total = std::max(total, 1e-30f);
    for (int64_t j = 0; j < d.S; ++j)
      wb[j] /= total;
    // c = sum_j w[j] h[j, :]
    std::fill(cb, cb + d.D, 0.0f);
    for (int64_t j = 0; j < d.S; ++j) {
      if (wb[j] == 0)
        continue;
      const float *hj = h + (b * d.S + j) * d.D;
      float wj = wb[j];
#pragma omp simd
      for (int64_t x = 0; x < d.D; ++x)
        cb[x] += wj * hj[x];
    }
  }
  c.finish();
  w.finish();
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_additive_attention_backward(
    attn_memref2 *qm, attn_memref3 *km, attn_memref1 *vm, attn_memref2 *maskm, attn_memref3 *hm,
    attn_memref2 *wm, attn_memref2 *dcm, attn_memref2 *dwm, attn_memref2 *dqm, attn_memref3 *dkm,
    attn_memref1 *dvm, attn_memref3 *dhm) {
  Dims d = checkShapes("attn_rt_additive_attention_backward", *qm, *km, *vm, *maskm, *hm);
  std::vector<float> bq, bk, bv, bmask, bh, bw, bdc, bdw;
  const float *q = rowMajor(*qm, 2, bq), *k = rowMajor(*km, 3, bk), *v = rowMajor(*vm, 1, bv);
  const float *mask = rowMajor(*maskm, 2, bmask), *h = rowMajor(*hm, 3, bh);
  const float *w = rowMajor(*wm, 2, bw), *dc = rowMajor(*dcm, 2, bdc);
  const float *dw = rowMajor(*dwm, 2, bdw);
  RowMajorOut<attn_memref2> dq(*dqm, 2);
  RowMajorOut<attn_memref3> dk(*dkm, 3), dh(*dhm, 3);
  RowMajorOut<attn_memref1> dv(*dvm, 1);
  float *dvd = dv.data; // a local pointer: the vectorizer does not see through dv.data
  std::fill(dvd, dvd + d.A, 0.0f);
  std::vector<float> da(d.S);
  for (int64_t b = 0; b < d.B; ++b) {
    const float *wb = w + b * d.S, *dcb = dc + b * d.D, *qb = q + b * d.A;
    float *dqb = dq.data + b * d.A;
    // da[j] = dw[j] + h[j, :] . dc;  dh[j, :] = w[j] dc
    float weighted = 0;
    for (int64_t j = 0; j < d.S; ++j) {
      const float *hj = h + (b * d.S + j) * d.D;
      float *dhj = dh.data + (b * d.S + j) * d.D;
      float dot = 0, wj = wb[j];
#pragma omp simd reduction(+ : dot)
      for (int64_t x = 0; x < d.D; ++x) {
        dot += hj[x] * dcb[x];
        dhj[x] = wj * dcb[x];
      }
      da[j] = dw[b * d.S + j] + dot;
      weighted += wj * da[j];
    }
    // de[j] = w[j] (da[j] - sum_k w[k] da[k]), then through the score.
    std::fill(dqb, dqb + d.A, 0.0f);
    for (int64_t j = 0; j < d.S; ++j) {
      float *dkj = dk.data + (b * d.S + j) * d.A;
      float de = wb[j] * (da[j] - weighted);
      if (de == 0) {
        std::fill(dkj, dkj + d.A, 0.0f);
        continue;
      }
      additiveScoreBackward(qb, k + (b * d.S + j) * d.A, v, de, dqb, dkj, dvd, d.A);
    }
  }
  dq.finish();
  dk.finish();
  dv.finish();
  dh.finish();
}
