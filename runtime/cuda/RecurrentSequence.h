// The recurrent sequence loop of attn.rnn, attn.lstm and attn.gru (PyTorch's form) over the step
// kernels of RecurrentKernels.cuh, forward and backward, written once over a `Backend` that
// supplies memory, GEMMs and the kernels' launches: recurrent_kernels.cu's runs on the GPU
// (cuBLASLt and real launches), tests/cuda's on the CPU (loops and the emulator), so the
// loop's indexing and accumulation are checked in CI where there is no GPU.
//
// A Backend has (all pointers in its memory, f32, row-major):
//   float *scratch(size_t n);                    // n floats, alive until the backend goes
//   Status gemm(m, n, k, transA, transB, a, b, c, bias);   // c [m, n] = op(a) op(b) (+ bias [n])
//   Status add(n, a, b, out);                    // out = a + b; out may be a or b
//   Status copy(n, from, to);
//   Status reorder(B, T, C, reverse, toSteps, in, out);    // RecurrentKernels.cuh's reorderSteps
//   Status sumRows(rows, cols, in, out);
//   Status blend(B, H, m, prev, next, out), split(B, H, m, d, dCell, dPrev);   // masked steps
//   and the step kernels of attn/cuda/Kernels.h: rnnForward, rnnBackward, lstmForward,
//   lstmBackward, gruForward, gruBackward, with those functions' arguments.
//
// Shapes: x [B, T, I], h0, h_n [B, R], c0, c_n [B, H], outputs [B, T, R] (time order, as
// attnc's sequence ops), w_ih [I, G], w_hh [R, G] with G = 4H (LSTM: i, f, g, o), 3H (GRU: r,
// z, n) or H (vanilla RNN); R = P for an LSTM with a projection w_proj [H, P] (h<t> = (o *
// tanh(c<t>)) w_proj), else H; the LSTM's and the RNN's one bias b_ih [G] (b_hh unused), the
// GRU's b_ih and b_hh [3H]; the LSTM's
// diagonal peephole [3, H] or null; mask [B, T, 1] or null: a step of a row with mask m updates
// each state as s + m (cell(x, s) - s), so a 0 holds the state (padding) and the output
// repeats it. Inside, everything runs in processing order: step k is time T-1-k when
// `reverse`.
#ifndef ATTN_RUNTIME_CUDA_RECURRENTSEQUENCE_H
#define ATTN_RUNTIME_CUDA_RECURRENTSEQUENCE_H

#include "attn/cuda/Recurrent.h"

#include <cstdint>
#include <utility>

namespace attn::cuda::sequence {

#define ATTN_TRY(expr)                                                                             \
  do {                                                                                             \
    if (Status st_ = (expr); !st_)                                                                 \
      return st_;                                                                                  \
  } while (0)

inline int64_t gatesOf(RecurrentCell cell, int64_t H) {
  return (cell == RecurrentCell::Lstm ? 4 : cell == RecurrentCell::Gru ? 3 : 1) * H;
}

// What the forward keeps for the backward, in processing order: the states before and after
// every step (h [T + 1, B, R], c [T + 1, B, H]: state k is step k's input), every step's gates
// ([T, B, 4H]), the LSTM cell's own c<t> before a mask's blend ([T, B, H]; with no mask, c's
// states), with a projection the cell's o * tanh(c<t>) before it ([T, B, H]), and the mask
// per step ([T, B]).
struct Trace {
  float *h = nullptr, *c = nullptr, *gates = nullptr, *cellC = nullptr, *cellH = nullptr,
        *mask = nullptr;
  const float *cellCOf(int64_t k, int64_t BH) const {
    return mask ? cellC + k * BH : c + (k + 1) * BH;
  }
};

template <typename Backend>
Status forward(Backend &be, const RecurrentShape &s, RecurrentCell cell, const RecurrentWeights &w,
               const float *x, const float *h0, const float *c0, const float *mask,
               float *outputs, float *hn, float *cn, Trace &trace) {
  const int64_t B = s.batch, T = s.steps, I = s.input, H = s.hidden, R = s.state(),
                G = gatesOf(cell, H);
  const bool lstm = cell == RecurrentCell::Lstm, rnn = cell == RecurrentCell::Rnn;
  const bool projected = s.projection > 0;
  // Every step's input projection in one GEMM ([B T, I] x [I, G] + b_ih), then in steps.
  float *xwBatch = be.scratch(B * T * G), *xw = be.scratch(T * B * G);
  ATTN_TRY(be.gemm(B * T, G, I, false, false, x, w.wIh, xwBatch, w.bIh));
  ATTN_TRY(be.reorder(B, T, G, s.reverse, true, xwBatch, xw));
  trace.h = be.scratch((T + 1) * B * R);
  trace.c = lstm ? be.scratch((T + 1) * B * H) : nullptr;
  trace.gates = be.scratch(T * B * 4 * H);
  trace.cellH = projected ? be.scratch(T * B * H) : nullptr;
  ATTN_TRY(be.copy(B * R, h0, trace.h));
  if (lstm)
    ATTN_TRY(be.copy(B * H, c0, trace.c));
  if (mask) {
    trace.mask = be.scratch(T * B);
    ATTN_TRY(be.reorder(B, T, 1, s.reverse, true, mask, trace.mask));
    trace.cellC = lstm ? be.scratch(T * B * H) : nullptr;
  }
  float *rec = be.scratch(B * G); // h<t-1> W_hh (+ b_hh), then (LSTM, RNN) the whole z
  float *hCell = mask ? be.scratch(B * R) : nullptr;
  for (int64_t k = 0; k < T; ++k) {
    const float *hPrev = trace.h + k * B * R, *xwk = xw + k * B * G;
    float *hNext = trace.h + (k + 1) * B * R, *gates = trace.gates + k * B * 4 * H;
    // With a mask, the cell writes beside the states, and the blend writes the states.
    float *hOut = mask ? hCell : hNext;
    float *cOut = lstm ? (mask ? trace.cellC + k * B * H : trace.c + (k + 1) * B * H) : nullptr;
    // The LSTM kernel writes o * tanh(c<t>); a projection multiplies it by w_proj into h.
    float *oTanhC = projected ? trace.cellH + k * B * H : hOut;
    if (lstm || rnn) {
      ATTN_TRY(be.gemm(B, G, R, false, false, hPrev, w.wHh, rec, nullptr));
      ATTN_TRY(be.add(B * G, xwk, rec, rec));
      if (lstm)
        ATTN_TRY(be.lstmForward(B, H, rec, trace.c + k * B * H, w.peephole, gates, cOut, oTanhC));
      else
        ATTN_TRY(be.rnnForward(B, H, rec, gates, hOut));
    } else {
      ATTN_TRY(be.gemm(B, G, H, false, false, hPrev, w.wHh, rec, w.bHh));
      ATTN_TRY(be.gruForward(B, H, xwk, rec, hPrev, gates, hOut));
    }
    if (projected)
      ATTN_TRY(be.gemm(B, R, H, false, false, oTanhC, w.wProj, hOut, nullptr));
    if (mask) {
      const float *m = trace.mask + k * B;
      ATTN_TRY(be.blend(B, R, m, hPrev, hCell, hNext));
      if (lstm)
        ATTN_TRY(be.blend(B, H, m, trace.c + k * B * H, cOut, trace.c + (k + 1) * B * H));
    }
  }
  ATTN_TRY(be.reorder(B, T, R, s.reverse, false, trace.h + B * R, outputs));
  ATTN_TRY(be.copy(B * R, trace.h + T * B * R, hn));
  if (lstm)
    ATTN_TRY(be.copy(B * H, trace.c + T * B * H, cn));
  return {};
}

// The gradients of every operand from those of outputs, h_n and c_n: the forward runs again
// (nothing is kept between calls), then the steps in reverse processing order; the weight
// gradients are one GEMM each over all steps afterwards, the bias gradients fixed-order sums.
template <typename Backend>
Status backward(Backend &be, const RecurrentShape &s, RecurrentCell cell,
                const RecurrentWeights &w, const float *x, const float *h0, const float *c0,
                const float *mask, const float *dOutputs, const float *dhn, const float *dcn,
                const RecurrentGradients &d) {
  const int64_t B = s.batch, T = s.steps, I = s.input, H = s.hidden, R = s.state(),
                G = gatesOf(cell, H);
  const bool lstm = cell == RecurrentCell::Lstm, gru = cell == RecurrentCell::Gru;
  const bool projected = s.projection > 0;
  Trace trace;
  float *outputs = be.scratch(B * T * R), *hn = be.scratch(B * R),
        *cn = lstm ? be.scratch(B * H) : nullptr;
  ATTN_TRY(forward(be, s, cell, w, x, h0, c0, mask, outputs, hn, cn, trace));

  float *dOut = be.scratch(T * B * R);
  ATTN_TRY(be.reorder(B, T, R, s.reverse, true, dOutputs, dOut));
  // dz (LSTM, RNN) or da (GRU) of every step, and the GRU's dbh; the peepholes' per-row shares.
  float *dz = be.scratch(T * B * G), *dbh = gru ? be.scratch(T * B * G) : nullptr;
  float *peepRows = w.peephole ? be.scratch(T * B * 3 * H) : nullptr;
  float *dh = be.scratch(B * R), *dhCarry = be.scratch(B * R), *direct = be.scratch(B * H);
  float *dc[2] = {lstm ? be.scratch(B * H) : nullptr, lstm ? be.scratch(B * H) : nullptr};
  // Masked: what of each state's gradient reaches the cell, and what the state before.
  float *dhCell = mask && !projected ? be.scratch(B * R) : dh,
        *dhHeld = mask ? be.scratch(B * R) : nullptr;
  // A projection: what reached the cell's h at every step ([T, B, P], for w_proj's gradient),
  // and the step's gradient of o * tanh(c<t>) ([B, H]).
  float *dhSteps = projected ? be.scratch(T * B * R) : nullptr,
        *dOTanhC = projected ? be.scratch(B * H) : nullptr;
  float *dcCell = mask && lstm ? be.scratch(B * H) : nullptr,
        *dcHeld = mask && lstm ? be.scratch(B * H) : nullptr;
  ATTN_TRY(be.copy(B * R, dhn, dhCarry));
  if (lstm)
    ATTN_TRY(be.copy(B * H, dcn, dc[0]));
  for (int64_t k = T - 1; k >= 0; --k) {
    const float *gates = trace.gates + k * B * 4 * H, *hPrev = trace.h + k * B * R;
    float *dzk = dz + k * B * G;
    // dhCellK: the gradient reaching the cell's h (kept per step under a projection); dhk: the
    // state's, which a mask splits between the cell and the state before.
    float *dhCellK = projected ? dhSteps + k * B * R : dhCell;
    float *dhk = mask ? dh : dhCellK;
    ATTN_TRY(be.add(B * R, dOut + k * B * R, dhCarry, dhk));
    if (mask) {
      const float *m = trace.mask + k * B;
      ATTN_TRY(be.split(B, R, m, dhk, dhCellK, dhHeld));
      if (lstm)
        ATTN_TRY(be.split(B, H, m, dc[0], dcCell, dcHeld));
    }
    if (lstm) {
      if (projected)
        ATTN_TRY(be.gemm(B, H, R, false, true, dhCellK, w.wProj, dOTanhC, nullptr));
      ATTN_TRY(be.lstmBackward(B, H, gates, trace.c + k * B * H, trace.cellCOf(k, B * H),
                               w.peephole, projected ? dOTanhC : dhCellK, mask ? dcCell : dc[0],
                               dzk, dc[1], peepRows ? peepRows + k * B * 3 * H : nullptr));
      if (mask)
        ATTN_TRY(be.add(B * H, dc[1], dcHeld, dc[1]));
      std::swap(dc[0], dc[1]);
      ATTN_TRY(be.gemm(B, R, G, false, true, dzk, w.wHh, dhCarry, nullptr));
    } else if (!gru) {
      ATTN_TRY(be.rnnBackward(B, H, gates, dhCellK, dzk));
      ATTN_TRY(be.gemm(B, H, G, false, true, dzk, w.wHh, dhCarry, nullptr));
    } else {
      float *dbhk = dbh + k * B * G;
      ATTN_TRY(be.gruBackward(B, H, gates, hPrev, dhCellK, dzk, dbhk, direct));
      ATTN_TRY(be.gemm(B, H, G, false, true, dbhk, w.wHh, dhCarry, nullptr));
      ATTN_TRY(be.add(B * H, direct, dhCarry, dhCarry));
    }
    if (mask)
      ATTN_TRY(be.add(B * R, dhHeld, dhCarry, dhCarry));
  }
  ATTN_TRY(be.copy(B * R, dhCarry, d.h0));
  if (lstm)
    ATTN_TRY(be.copy(B * H, dc[0], d.c0));

  // W_hh: the states each step read, [T B, R]^T, times what reached h<t-1> W_hh, [T B, G].
  const float *dRec = gru ? dbh : dz;
  ATTN_TRY(be.gemm(R, G, T * B, true, false, trace.h, dRec, d.wHh, nullptr));
  // W_proj: every step's o * tanh(c<t>), [T B, H]^T, times what reached its h, [T B, P].
  if (projected)
    ATTN_TRY(be.gemm(H, R, T * B, true, false, trace.cellH, dhSteps, d.wProj, nullptr));
  ATTN_TRY(be.sumRows(T * B, G, dz, d.bIh));
  if (gru)
    ATTN_TRY(be.sumRows(T * B, G, dbh, d.bHh));
  if (peepRows)
    ATTN_TRY(be.sumRows(T * B, 3 * H, peepRows, d.peephole));
  // x and W_ih in attnc's batch-major order.
  float *dzBatch = be.scratch(B * T * G);
  ATTN_TRY(be.reorder(B, T, G, s.reverse, false, dz, dzBatch));
  ATTN_TRY(be.gemm(B * T, I, G, false, true, dzBatch, w.wIh, d.x, nullptr));
  ATTN_TRY(be.gemm(I, G, B * T, true, false, x, dzBatch, d.wIh, nullptr));
  return {};
}

#undef ATTN_TRY

} // namespace attn::cuda::sequence

#endif // ATTN_RUNTIME_CUDA_RECURRENTSEQUENCE_H
