// attn.rnn, attn.lstm and attn.gru (PyTorch's form) over a whole sequence on the GPU, forward and
// backward, in f32 device memory: per step a cuBLASLt GEMM (h<t-1> W_hh) and one kernel for
// all of the gates (attn/cuda/Kernels.h), with the input projection of every step one GEMM
// before the loop and the weight gradients one GEMM each after it. The layouts are attnc's
// sequence ops' (docs/dialect.md: attn.lstm, attn.gru), row-major:
//
//   x [B, T, I], h0, c0, h_n, c_n [B, H], outputs [B, T, H] (the hidden state of every step,
//   in time order; `reverse` runs the steps from the last to the first),
//   w_ih [I, G], w_hh [H, G]: G = 4H for the LSTM (gates i, f, g, o), 3H for the GRU (r, z, n),
//   H for the vanilla RNN (h = tanh(x w_ax + h<t-1> w_aa + b));
//   biases: the LSTM's one [4H] and the vanilla RNN's one [H] in bIh; the GRU's b_ih and b_hh
//   [3H];
//   the LSTM's diagonal peephole [3, H] (i and f read c<t-1>, o reads c<t>) or null;
//   the LSTM's projection (`projection` P > 0, oneDNN's LSTMP): w_proj [H, P], no bias, the
//   hidden state h<t> = (o * tanh(c<t>)) w_proj, so h0, h_n are [B, P], outputs [B, T, P] and
//   w_hh [P, 4H] (c stays [B, H]);
//   mask [B, T, 1] or null: each step of a row updates each state as s + m (cell(x, s) - s),
//   so a 0 holds the state (padding, anywhere in the row) and the output repeats it, as the
//   CPU's masked sequence ops define it (any values, not only 0 and 1).
//
// The backward runs the forward again (no activations are kept between calls) and returns
// every gradient, overwritten, not accumulated. Calls queue their work on the default stream
// and return without waiting for it (read the results after synchronize() or a copy on that
// stream); their scratch memory is kept per thread for the next call. Errors (a launch, an
// allocation, a shape cuBLASLt has no algorithm for) come back as a Status; a kernel that
// fails while running shows at the next wait.
#ifndef ATTN_CUDA_RECURRENT_H
#define ATTN_CUDA_RECURRENT_H

#include "attn/cuda/Device.h"

#include <cstdint>

namespace attn::cuda {

enum class RecurrentCell { Rnn, Lstm, Gru };

struct RecurrentShape {
  int64_t batch = 0, steps = 0, input = 0, hidden = 0;
  bool reverse = false;
  int64_t projection = 0; // P of an LSTM's projection; 0: none
  // The width of h: P with a projection, else H.
  int64_t state() const { return projection ? projection : hidden; }
};

struct RecurrentWeights {
  const float *wIh = nullptr, *wHh = nullptr, *bIh = nullptr, *bHh = nullptr, *peephole = nullptr,
              *wProj = nullptr;
};

// Where the backward writes each gradient (c0, peephole and wProj: LSTM only; bHh: GRU only).
struct RecurrentGradients {
  float *x = nullptr, *h0 = nullptr, *c0 = nullptr, *wIh = nullptr, *wHh = nullptr, *bIh = nullptr,
        *bHh = nullptr, *peephole = nullptr, *wProj = nullptr;
};

Status recurrentForward(const RecurrentShape &shape, RecurrentCell cell,
                        const RecurrentWeights &weights, const float *x, const float *h0,
                        const float *c0, const float *mask, float *outputs, float *hn,
                        float *cn);

Status recurrentBackward(const RecurrentShape &shape, RecurrentCell cell,
                         const RecurrentWeights &weights, const float *x, const float *h0,
                         const float *c0, const float *mask, const float *dOutputs,
                         const float *dhn, const float *dcn, const RecurrentGradients &gradients);

} // namespace attn::cuda

#endif // ATTN_CUDA_RECURRENT_H
