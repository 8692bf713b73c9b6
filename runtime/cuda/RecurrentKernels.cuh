// The GPU kernels of one recurrent step's gates (attn/cuda/Kernels.h has the contracts): the
// vanilla RNN, the LSTM with or without diagonal peepholes, and the three GRU forms of
// attn.gru_cell (pytorch, seed, minimal), forward and backward, f32 throughout.
//
// A step on the GPU is GEMMs (cuBLASLt: x W_ih for all steps at once, h<t-1> W_hh per step)
// and one of these kernels: every elementwise op of the cell's gates in one pass over [B, H],
// what the backward needs kept in `gates`. The seed's GRU multiplies r * h<t-1> by W_hh before
// its candidate, so it is two kernels with a GEMM between them, forward and backward.
//
// One thread per (row, unit), a grid-stride loop. Device code only, written so that
// tests/cuda's emulator runs it on CPU threads (recurrent_kernels.cu launches it).
#ifndef ATTN_RUNTIME_CUDA_RECURRENTKERNELS_CUH
#define ATTN_RUNTIME_CUDA_RECURRENTKERNELS_CUH

#include <cmath>
#include <cstdint>

namespace attn::cuda::recurrent {

constexpr int kThreads = 128;

// Grid (host side): enough blocks for n elements, capped (the loop covers the rest).
inline unsigned elementBlocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65535 ? blocks : 65535);
}

__device__ __forceinline__ int64_t firstElement() {
  return int64_t(blockIdx.x) * kThreads + threadIdx.x;
}
__device__ __forceinline__ int64_t elementStride() { return int64_t(gridDim.x) * kThreads; }

// expf, not __expf: the CPU path's accuracy, at a cost that is small next to the GEMMs.
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

//===- vanilla RNN --------------------------------------------------------------------------===//

// z [B, H] = x W_ax + h<t-1> W_aa + b. Writes h = tanh(z) to h and to gates [B, H] (the
// backward's 1 - h^2; h itself may be blended by a mask afterwards).
__global__ void __launch_bounds__(kThreads)
    rnnForward(int64_t B, int64_t H, const float *__restrict__ z, float *__restrict__ gates,
               float *__restrict__ h) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const float y = tanhf(z[e]);
    gates[e] = y;
    h[e] = y;
  }
}

// dh [B, H] reaching h<t>. Writes dz [B, H] = dh (1 - h^2).
__global__ void __launch_bounds__(kThreads)
    rnnBackward(int64_t B, int64_t H, const float *__restrict__ gates, const float *__restrict__ dh,
                float *__restrict__ dz) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride())
    dz[e] = dh[e] * (1.0f - gates[e] * gates[e]);
}

//===- LSTM ---------------------------------------------------------------------------------===//

// z [B, 4H]: x W_ih + h<t-1> W_hh + b, blocks i, f, g, o. cPrev [B, H]. peep [3, H] or null:
// i and f read c<t-1>, o reads c<t>. Writes gates [B, 4H] (i, f, g, o activated), c, h [B, H].
__global__ void __launch_bounds__(kThreads)
    lstmForward(int64_t B, int64_t H, const float *__restrict__ z,
                const float *__restrict__ cPrev, const float *__restrict__ peep,
                float *__restrict__ gates, float *__restrict__ c, float *__restrict__ h) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *zr = z + b * 4 * H;
    float *gr = gates + b * 4 * H;
    const float cp = cPrev[e];
    const float pi = peep ? peep[u] : 0.0f, pf = peep ? peep[H + u] : 0.0f,
                po = peep ? peep[2 * H + u] : 0.0f;
    const float i = sigmoid(zr[u] + pi * cp), f = sigmoid(zr[H + u] + pf * cp),
                g = tanhf(zr[2 * H + u]);
    const float cn = f * cp + i * g;
    const float o = sigmoid(zr[3 * H + u] + po * cn);
    gr[u] = i;
    gr[H + u] = f;
    gr[2 * H + u] = g;
    gr[3 * H + u] = o;
    c[e] = cn;
    h[e] = o * tanhf(cn);
  }
}

// dh [B, H]: the gradient reaching h<t> (its output's and, through W_hh, step t+1's: the
// caller's GEMM). dcNext [B, H]: reaching c<t> from step t+1, null at the last step. Writes
// dz [B, 4H] (the caller's weight GEMMs and dh<t-1> = dz W_hh^T), dcPrev [B, H] and, with
// peepholes, dpeepRows [B, 3H]: each row's share of dpeep, summed over rows and steps in a
// fixed order by TrainKernels.cuh's sumChunks (attn::cuda::sumRows).
__global__ void __launch_bounds__(kThreads)
    lstmBackward(int64_t B, int64_t H, const float *__restrict__ gates,
                 const float *__restrict__ cPrev, const float *__restrict__ c,
                 const float *__restrict__ peep, const float *__restrict__ dh,
                 const float *__restrict__ dcNext, float *__restrict__ dz,
                 float *__restrict__ dcPrev, float *__restrict__ dpeepRows) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *gr = gates + b * 4 * H;
    float *dzr = dz + b * 4 * H;
    const float i = gr[u], f = gr[H + u], g = gr[2 * H + u], o = gr[3 * H + u];
    const float cp = cPrev[e], cn = c[e], tc = tanhf(cn);
    const float pi = peep ? peep[u] : 0.0f, pf = peep ? peep[H + u] : 0.0f,
                po = peep ? peep[2 * H + u] : 0.0f;
    const float dzo = dh[e] * tc * o * (1.0f - o);
    const float dc = (dcNext ? dcNext[e] : 0.0f) + dh[e] * o * (1.0f - tc * tc) + dzo * po;
    const float dzi = dc * g * i * (1.0f - i), dzf = dc * cp * f * (1.0f - f),
                dzg = dc * i * (1.0f - g * g);
    dzr[u] = dzi;
    dzr[H + u] = dzf;
    dzr[2 * H + u] = dzg;
    dzr[3 * H + u] = dzo;
    dcPrev[e] = dc * f + dzi * pi + dzf * pf;
    if (peep) {
      float *dp = dpeepRows + b * 3 * H;
      dp[u] = dzi * cp;
      dp[H + u] = dzf * cp;
      dp[2 * H + u] = dzo * cn;
    }
  }
}

//===- GRU, PyTorch's form -------------------------------------------------------------------===//

// a [B, 3H] = x W_ih + b_ih, bh [B, 3H] = h<t-1> W_hh + b_hh, blocks r, z, n:
//   r = σ(a_r + b_r), z = σ(a_z + b_z), n = tanh(a_n + r b_n), h = (1 - z) n + z h<t-1>.
// Writes gates [B, 4H] (r, z, n, and b_n, which the backward's dr needs) and h [B, H].
__global__ void __launch_bounds__(kThreads)
    gruForward(int64_t B, int64_t H, const float *__restrict__ a, const float *__restrict__ bh,
               const float *__restrict__ hPrev, float *__restrict__ gates,
               float *__restrict__ h) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *ar = a + b * 3 * H, *br = bh + b * 3 * H;
    float *gr = gates + b * 4 * H;
    const float r = sigmoid(ar[u] + br[u]), z = sigmoid(ar[H + u] + br[H + u]);
    const float n = tanhf(ar[2 * H + u] + r * br[2 * H + u]);
    gr[u] = r;
    gr[H + u] = z;
    gr[2 * H + u] = n;
    gr[3 * H + u] = br[2 * H + u];
    h[e] = (1.0f - z) * n + z * hPrev[e];
  }
}

// dh [B, H] reaching h<t>. Writes da [B, 3H] (for W_ih, b_ih), dbh [B, 3H] (for W_hh, b_hh
// and dh<t-1> += dbh W_hh^T) and dhPrev [B, H]: dh<t-1>'s direct part, dh z.
__global__ void __launch_bounds__(kThreads)
    gruBackward(int64_t B, int64_t H, const float *__restrict__ gates,
                const float *__restrict__ hPrev, const float *__restrict__ dh,
                float *__restrict__ da, float *__restrict__ dbh, float *__restrict__ dhPrev) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *gr = gates + b * 4 * H;
    float *dar = da + b * 3 * H, *dbr = dbh + b * 3 * H;
    const float r = gr[u], z = gr[H + u], n = gr[2 * H + u], bn = gr[3 * H + u];
    const float dn = dh[e] * (1.0f - z) * (1.0f - n * n);
    const float dzz = dh[e] * (hPrev[e] - n) * z * (1.0f - z);
    const float dr = dn * bn * r * (1.0f - r);
    dar[u] = dbr[u] = dr;
    dar[H + u] = dbr[H + u] = dzz;
    dar[2 * H + u] = dn;
    dbr[2 * H + u] = dn * r;
    dhPrev[e] = dh[e] * z;
  }
}

//===- GRU, the minimal form -----------------------------------------------------------------===//

// a, bh [B, 2H], blocks u, c: u = σ(a_u + b_u), c~ = tanh(a_c + b_c),
// h = u c~ + (1 - u) h<t-1>. Writes gates [B, 2H] (u, c~) and h.
__global__ void __launch_bounds__(kThreads)
    gruMinimalForward(int64_t B, int64_t H, const float *__restrict__ a,
                      const float *__restrict__ bh, const float *__restrict__ hPrev,
                      float *__restrict__ gates, float *__restrict__ h) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *ar = a + b * 2 * H, *br = bh + b * 2 * H;
    float *gr = gates + b * 2 * H;
    const float uu = sigmoid(ar[u] + br[u]), cc = tanhf(ar[H + u] + br[H + u]);
    gr[u] = uu;
    gr[H + u] = cc;
    h[e] = uu * cc + (1.0f - uu) * hPrev[e];
  }
}

// Writes dz [B, 2H] (the gradient of a and of bh alike) and dhPrev's direct part dh (1 - u).
__global__ void __launch_bounds__(kThreads)
    gruMinimalBackward(int64_t B, int64_t H, const float *__restrict__ gates,
                       const float *__restrict__ hPrev, const float *__restrict__ dh,
                       float *__restrict__ dz, float *__restrict__ dhPrev) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *gr = gates + b * 2 * H;
    float *dzr = dz + b * 2 * H;
    const float uu = gr[u], cc = gr[H + u];
    dzr[u] = dh[e] * (cc - hPrev[e]) * uu * (1.0f - uu);
    dzr[H + u] = dh[e] * uu * (1.0f - cc * cc);
    dhPrev[e] = dh[e] * (1.0f - uu);
  }
}

//===- GRU, the seed's form ------------------------------------------------------------------===//
// u = σ(a_u + b_u), r = σ(a_r + b_r), c~ = tanh(a_c + (r h<t-1>) W_hh[:, c] + b_hh[c]),
// h = u c~ + (1 - u) h<t-1>: the candidate's product reads r, so a step is
//   seedGates -> GEMM rh W_hh[:, c] -> seedOutput,
// and its backward
//   seedOutputBackward -> GEMM da_c W_hh[:, c]^T -> seedGatesBackward.

// a [B, 3H] = x W_ih + b_ih (u, r, c), bur [B, 2H] = h<t-1> W_hh[:, u r] + b_hh[u r].
// Writes gates' u and r blocks ([B, 3H]: u, r, c~) and rh [B, H] = r h<t-1>.
__global__ void __launch_bounds__(kThreads)
    gruSeedGates(int64_t B, int64_t H, const float *__restrict__ a, const float *__restrict__ bur,
                 const float *__restrict__ hPrev, float *__restrict__ gates,
                 float *__restrict__ rh) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *ar = a + b * 3 * H, *br = bur + b * 2 * H;
    float *gr = gates + b * 3 * H;
    const float uu = sigmoid(ar[u] + br[u]), r = sigmoid(ar[H + u] + br[H + u]);
    gr[u] = uu;
    gr[H + u] = r;
    rh[e] = r * hPrev[e];
  }
}

// bc [B, H] = rh W_hh[:, c] + b_hh[c]. Writes gates' c~ block and h.
__global__ void __launch_bounds__(kThreads)
    gruSeedOutput(int64_t B, int64_t H, const float *__restrict__ a, const float *__restrict__ bc,
                  const float *__restrict__ hPrev, float *__restrict__ gates,
                  float *__restrict__ h) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    float *gr = gates + b * 3 * H;
    const float cc = tanhf(a[b * 3 * H + 2 * H + u] + bc[e]);
    gr[2 * H + u] = cc;
    h[e] = gr[u] * cc + (1.0f - gr[u]) * hPrev[e];
  }
}

// dh [B, H] reaching h<t>. Writes da's u and c blocks ([B, 3H]; da_u is also bur's u
// gradient, da_c also bc's) and dhPrev = dh (1 - u), the direct part.
__global__ void __launch_bounds__(kThreads)
    gruSeedOutputBackward(int64_t B, int64_t H, const float *__restrict__ gates,
                          const float *__restrict__ hPrev, const float *__restrict__ dh,
                          float *__restrict__ da, float *__restrict__ dhPrev) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float *gr = gates + b * 3 * H;
    float *dar = da + b * 3 * H;
    const float uu = gr[u], cc = gr[2 * H + u];
    dar[u] = dh[e] * (cc - hPrev[e]) * uu * (1.0f - uu);
    dar[2 * H + u] = dh[e] * uu * (1.0f - cc * cc);
    dhPrev[e] = dh[e] * (1.0f - uu);
  }
}

// drh [B, H] = da_c W_hh[:, c]^T. Writes da's r block (also bur's r gradient) and adds
// drh r to dhPrev.
__global__ void __launch_bounds__(kThreads)
    gruSeedGatesBackward(int64_t B, int64_t H, const float *__restrict__ gates,
                         const float *__restrict__ hPrev, const float *__restrict__ drh,
                         float *__restrict__ da, float *__restrict__ dhPrev) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    const int64_t b = e / H, u = e % H;
    const float r = gates[b * 3 * H + H + u];
    da[b * 3 * H + H + u] = drh[e] * hPrev[e] * r * (1.0f - r);
    dhPrev[e] += drh[e] * r;
  }
}

//===- the sequence loop's data movement (RecurrentSequence.h) --------------------------------===//

// [B, T, C] (attnc's layout, batch-major) <-> [T, B, C] in processing order (step k is time
// T-1-k when `reverse`), so that each step's rows are contiguous for its GEMM and kernel.
// toSteps: out [T, B, C] from in [B, T, C]; else out [B, T, C] from in [T, B, C].
__global__ void __launch_bounds__(kThreads)
    reorderSteps(int64_t B, int64_t T, int64_t C, int reverse, int toSteps,
                 const float *__restrict__ in, float *__restrict__ out) {
  for (int64_t e = firstElement(); e < B * T * C; e += elementStride()) {
    const int64_t c = e % C;
    if (toSteps) {
      const int64_t k = e / (B * C), b = (e / C) % B, t = reverse ? T - 1 - k : k;
      out[e] = in[(b * T + t) * C + c];
    } else {
      const int64_t b = e / (T * C), t = (e / C) % T, k = reverse ? T - 1 - t : t;
      out[e] = in[(k * B + b) * C + c];
    }
  }
}

// A masked step (attnc's masked sequence ops: s' = s + m (cell(x, s) - s), m the step's mask
// per row [B]): out = prev + m (next - prev) over [B, H]; out may be next.
__global__ void __launch_bounds__(kThreads)
    blendMasked(int64_t B, int64_t H, const float *__restrict__ m, const float *prev,
                const float *next, float *out) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride())
    out[e] = prev[e] + m[e / H] * (next[e] - prev[e]);
}

// Its backward: of the gradient d reaching s', m d reaches the cell's output and (1 - m) d
// the state before.
__global__ void __launch_bounds__(kThreads)
    splitMasked(int64_t B, int64_t H, const float *__restrict__ m, const float *__restrict__ d,
                float *__restrict__ dCell, float *__restrict__ dPrev) {
  for (int64_t e = firstElement(); e < B * H; e += elementStride()) {
    dCell[e] = m[e / H] * d[e];
    dPrev[e] = (1.0f - m[e / H]) * d[e];
  }
}

// out = a + b, elementwise over n; out may be a or b (no __restrict__).
__global__ void __launch_bounds__(kThreads)
    addElements(int64_t n, const float *a, const float *b, float *out) {
  for (int64_t e = firstElement(); e < n; e += elementStride())
    out[e] = a[e] + b[e];
}

} // namespace attn::cuda::recurrent

#endif // ATTN_RUNTIME_CUDA_RECURRENTKERNELS_CUH
