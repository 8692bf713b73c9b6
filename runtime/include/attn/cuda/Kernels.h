// The GPU kernels of attn's training ops besides attention and the matmuls: layer norm, softmax
// cross-entropy, Adam, each with the contract of its op (docs/dialect.md: attn.layer_norm,
// attn.cross_entropy and attn.cross_entropy_grad, attn.adam_update), and the gates of one
// recurrent step (attn.lstm_cell, attn.gru_cell in its three forms), in f32 device memory,
// row-major and contiguous. Every reduction has a fixed order (no atomics): the same inputs
// give the same bits on every run, as on the CPU.
//
// Calls are asynchronous on `stream` (null: the default stream); a launch error is returned.
#ifndef ATTN_CUDA_KERNELS_H
#define ATTN_CUDA_KERNELS_H

#include "attn/cuda/Device.h"

#include <cstddef>
#include <cstdint>

namespace attn::cuda {

//===- attn.layer_norm -----------------------------------------------------------------------===//
// y = (x - mean) / sqrt(var + epsilon) * gamma + beta over the last dim; x, y [rows, dim],
// gamma, beta [dim]; mean and rstd [rows] are kept for the backward.
Status layerNormForward(int64_t rows, int64_t dim, float epsilon, const float *x,
                        const float *gamma, const float *beta, float *y, float *mean, float *rstd,
                        void *stream = nullptr);

// Device memory the backward needs for dgamma and dbeta's partial sums.
size_t layerNormBackwardWorkspace(int64_t rows, int64_t dim);

// dx [rows, dim]; dgamma, dbeta [dim] (overwritten, not accumulated).
Status layerNormBackward(int64_t rows, int64_t dim, const float *x, const float *gamma,
                         const float *mean, const float *rstd, const float *dy, float *dx,
                         float *dgamma, float *dbeta, void *workspace, void *stream = nullptr);

//===- attn.cross_entropy, attn.cross_entropy_grad --------------------------------------------===//
struct CrossEntropyOptions {
  int64_t ignoreIndex = -1;
  float labelSmoothing = 0.0f;
};

// Device memory the forward keeps for the backward: per row, its log-sum-exp and its loss;
// and the count of contributing rows.
size_t crossEntropyWorkspace(int64_t rows);

// loss (one float) = the mean over contributing rows of
//   -(1 - e) log p[label] - (e / C) sum_c log p[c],  p = softmax(logits[row]),
// 0 when no row contributes; rows whose label is ignoreIndex or outside [0, C) contribute
// nothing. logits [rows, classes], labels [rows] (int32).
Status crossEntropyForward(int64_t rows, int64_t classes, const CrossEntropyOptions &options,
                           const float *logits, const int32_t *labels, float *loss, void *workspace,
                           void *stream = nullptr);

// dlogits = grad * (softmax(logits) - q) * valid / count, q the smoothed one-hot target; grad
// is the loss's gradient (one float in device memory); workspace as the forward left it.
Status crossEntropyBackward(int64_t rows, int64_t classes, const CrossEntropyOptions &options,
                            const float *logits, const int32_t *labels, const float *grad,
                            const void *workspace, float *dlogits, void *stream = nullptr);

//===- attn.adam_update -----------------------------------------------------------------------===//
struct AdamOptions {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, weightDecay = 0.0f;
  bool decoupled = false; // AdamW
};

// In place, with t = step (from 1):
//   g' = grad + weight_decay param (Adam) or grad (AdamW),
//   m = beta1 m + (1 - beta1) g',  v = beta2 v + (1 - beta2) g'^2,
//   param -= lr (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon)
//            [+ lr weight_decay param, AdamW].
Status adamUpdate(int64_t n, const AdamOptions &options, float lr, int64_t step, float *param,
                  const float *grad, float *m, float *v, void *stream = nullptr);

// Greedy decoding's choice: for each row of x [rows, cols], the index of its largest value and
// that value, as std::max_element picks them (the lowest index on ties; a NaN only as the
// first element); index [rows] (int32) and value [rows] in device memory.
Status argmaxRows(int64_t rows, int64_t cols, const float *x, int32_t *index, float *value,
                  void *stream = nullptr);
// Beam search's ranking: for each row of x [rows, cols], its k largest values, largest first,
// and their indices (ties: the lowest index first; a NaN ranks as -inf and is written as
// -inf); index [rows, k] (int32) and value [rows, k] in device memory. 1 <= k <= cols.
Status topKRows(int64_t rows, int64_t cols, int64_t k, const float *x, int32_t *index, float *value,
                void *stream = nullptr);

//===- recurrent steps: the gates of attn.lstm_cell and attn.gru_cell ------------------------===//
// A step is the caller's GEMMs (x W_ih for every step at once, h<t-1> W_hh per step: cuBLASLt,
// attn/cuda/Matmul.h) and one of these, all of the gates' elementwise work in one pass over
// [B, H]. `gates` holds what the backward reads. The backward's dh is the whole gradient
// reaching h<t> (its output's plus, through W_hh, step t+1's); what it writes to dhPrev is the
// direct part, to which the caller adds its GEMM's (dz W_hh^T). Shapes: batch B, hidden H.

// Vanilla RNN (attn.rnn_cell): z [B, H] = x W_ax + h<t-1> W_aa + b; h = tanh(z) [B, H], kept
// in gates [B, H] for the backward.
Status rnnCellForward(int64_t batch, int64_t hidden, const float *z, float *gates, float *h,
                      void *stream = nullptr);
// Writes dz [B, H] = dh (1 - h^2): the gradient of z (for W_ax, b and dh<t-1> = dz W_aa^T).
Status rnnCellBackward(int64_t batch, int64_t hidden, const float *gates, const float *dh,
                       float *dz, void *stream = nullptr);

// LSTM (gates i, f, g, o: PyTorch's order). z [B, 4H] = x W_ih + h<t-1> W_hh + b; cPrev, c, h
// [B, H]; peephole [3, H] (diagonal: i, f read c<t-1>, o reads c<t>) or null; gates [B, 4H].
Status lstmCellForward(int64_t batch, int64_t hidden, const float *z, const float *cPrev,
                       const float *peephole, float *gates, float *c, float *h,
                       void *stream = nullptr);
// dcNext [B, H]: the gradient reaching c<t> from step t+1 (null at the last step). Writes dz
// [B, 4H], dcPrev [B, H] and, with peepholes, dpeepholeRows [B, 3H]: each row's share, to sum
// over the rows of every step with sumRows.
Status lstmCellBackward(int64_t batch, int64_t hidden, const float *gates, const float *cPrev,
                        const float *c, const float *peephole, const float *dh,
                        const float *dcNext, float *dz, float *dcPrev, float *dpeepholeRows,
                        void *stream = nullptr);

// GRU, PyTorch's form (r, z, n): a [B, 3H] = x W_ih + b_ih, bh [B, 3H] = h<t-1> W_hh + b_hh;
// gates [B, 4H] (r, z, n and b_n).
Status gruCellForward(int64_t batch, int64_t hidden, const float *a, const float *bh,
                      const float *hPrev, float *gates, float *h, void *stream = nullptr);
// Writes da, dbh [B, 3H] (the gradients of a and bh) and dhPrev = dh z.
Status gruCellBackward(int64_t batch, int64_t hidden, const float *gates, const float *hPrev,
                       const float *dh, float *da, float *dbh, float *dhPrev,
                       void *stream = nullptr);

// GRU, the minimal form (u, c): a, bh [B, 2H]; gates [B, 2H].
Status gruMinimalCellForward(int64_t batch, int64_t hidden, const float *a, const float *bh,
                             const float *hPrev, float *gates, float *h, void *stream = nullptr);
// Writes dz [B, 2H] (the gradient of a and of bh alike) and dhPrev = dh (1 - u).
Status gruMinimalCellBackward(int64_t batch, int64_t hidden, const float *gates,
                              const float *hPrev, const float *dh, float *dz, float *dhPrev,
                              void *stream = nullptr);

// GRU, the seed's form (u, r, c): the candidate reads (r h<t-1>) W_hh[:, c], so a step is
//   gruSeedCellGates(a, bur) -> bc = rh W_hh[:, c] + b_hh[c] -> gruSeedCellOutput(bc),
// with a [B, 3H] = x W_ih + b_ih, bur [B, 2H] = h<t-1> W_hh[:, u r] + b_hh[u r], rh, bc
// [B, H], gates [B, 3H] (u, r, c~). Its backward is
//   gruSeedCellOutputBackward -> drh = da_c W_hh[:, c]^T -> gruSeedCellGatesBackward:
// the first writes da's u and c blocks and dhPrev = dh (1 - u), the second da's r block and
// adds drh r to dhPrev. da [B, 3H] is a's gradient; its u and r blocks are also bur's, its c
// block bc's.
Status gruSeedCellGates(int64_t batch, int64_t hidden, const float *a, const float *bur,
                        const float *hPrev, float *gates, float *rh, void *stream = nullptr);
Status gruSeedCellOutput(int64_t batch, int64_t hidden, const float *a, const float *bc,
                         const float *hPrev, float *gates, float *h, void *stream = nullptr);
Status gruSeedCellOutputBackward(int64_t batch, int64_t hidden, const float *gates,
                                 const float *hPrev, const float *dh, float *da, float *dhPrev,
                                 void *stream = nullptr);
Status gruSeedCellGatesBackward(int64_t batch, int64_t hidden, const float *gates,
                                const float *hPrev, const float *drh, float *da, float *dhPrev,
                                void *stream = nullptr);

// out [cols] = the sum over rows, in order, of in [rows, cols] (a peephole's gradient from
// the per-row shares of every step).
Status sumRows(int64_t rows, int64_t cols, const float *in, float *out, void *stream = nullptr);

} // namespace attn::cuda

#endif // ATTN_CUDA_KERNELS_H
