// Launches of RecurrentKernels.cuh behind attn/cuda/Kernels.h (shapes checked, grids sized,
// launch errors returned), and the sequence loop of attn/cuda/Recurrent.h over them: the
// GPU's Backend for RecurrentSequence.h.
#include "attn/cuda/Kernels.h"
#include "attn/cuda/Matmul.h"
#include "attn/cuda/Recurrent.h"

#include "Launch.cuh"
// The kernels use blockIdx, threadIdx and gridDim only: no Warp.cuh primitives.
#include "RecurrentKernels.cuh"
#include "RecurrentSequence.h"

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace attn::cuda {
namespace {

using namespace recurrent;

Status checkCell(const char *op, int64_t batch, int64_t hidden) {
  if (batch < 1 || hidden < 1)
    return Status::error(std::string("attn::cuda ") + op + ": batch " + std::to_string(batch) +
                         ", hidden " + std::to_string(hidden) + " (both must be >= 1)");
  return {};
}

// kernel over the batch x hidden elements of a step, after the shape check.
template <typename... Params, typename... Args>
Status cell(const char *op, int64_t batch, int64_t hidden, void *stream,
            void (*kernel)(int64_t, int64_t, Params...), Args... args) {
  if (Status st = checkCell(op, batch, hidden); !st)
    return st;
  return launch(op, kernel, dim3(elementBlocks(batch * hidden)), dim3(kThreads), 0,
                static_cast<cudaStream_t>(stream), batch, hidden, args...);
}

} // namespace

Status rnnCellForward(int64_t batch, int64_t hidden, const float *z, float *gates, float *h,
                      void *stream) {
  return cell("rnn_cell", batch, hidden, stream, rnnForward, z, gates, h);
}

Status rnnCellBackward(int64_t batch, int64_t hidden, const float *gates, const float *dh,
                       float *dz, void *stream) {
  return cell("rnn_cell backward", batch, hidden, stream, rnnBackward, gates, dh, dz);
}

Status lstmCellForward(int64_t batch, int64_t hidden, const float *z, const float *cPrev,
                       const float *peephole, float *gates, float *c, float *h, void *stream) {
  return cell("lstm_cell", batch, hidden, stream, lstmForward, z, cPrev, peephole, gates, c, h);
}

Status lstmCellBackward(int64_t batch, int64_t hidden, const float *gates, const float *cPrev,
                        const float *c, const float *peephole, const float *dh,
                        const float *dcNext, float *dz, float *dcPrev, float *dpeepholeRows,
                        void *stream) {
  if (peephole && !dpeepholeRows)
    return Status::error("attn::cuda lstm_cell backward: peepholes need dpeepholeRows");
  return cell("lstm_cell backward", batch, hidden, stream, lstmBackward, gates, cPrev, c,
              peephole, dh, dcNext, dz, dcPrev, dpeepholeRows);
}

Status gruCellForward(int64_t batch, int64_t hidden, const float *a, const float *bh,
                      const float *hPrev, float *gates, float *h, void *stream) {
  return cell("gru_cell", batch, hidden, stream, gruForward, a, bh, hPrev, gates, h);
}

Status gruCellBackward(int64_t batch, int64_t hidden, const float *gates, const float *hPrev,
                       const float *dh, float *da, float *dbh, float *dhPrev, void *stream) {
  return cell("gru_cell backward", batch, hidden, stream, gruBackward, gates, hPrev, dh, da, dbh,
              dhPrev);
}

Status gruMinimalCellForward(int64_t batch, int64_t hidden, const float *a, const float *bh,
                             const float *hPrev, float *gates, float *h, void *stream) {
  return cell("gru_cell (minimal)", batch, hidden, stream, gruMinimalForward, a, bh, hPrev, gates,
              h);
}

Status gruMinimalCellBackward(int64_t batch, int64_t hidden, const float *gates,
                              const float *hPrev, const float *dh, float *dz, float *dhPrev,
                              void *stream) {
  return cell("gru_cell (minimal) backward", batch, hidden, stream, gruMinimalBackward, gates,
              hPrev, dh, dz, dhPrev);
}

Status gruSeedCellGates(int64_t batch, int64_t hidden, const float *a, const float *bur,
                        const float *hPrev, float *gates, float *rh, void *stream) {
  return cell("gru_cell (seed) gates", batch, hidden, stream, gruSeedGates, a, bur, hPrev, gates,
              rh);
}

Status gruSeedCellOutput(int64_t batch, int64_t hidden, const float *a, const float *bc,
                         const float *hPrev, float *gates, float *h, void *stream) {
  return cell("gru_cell (seed) output", batch, hidden, stream, gruSeedOutput, a, bc, hPrev, gates,
              h);
}

Status gruSeedCellOutputBackward(int64_t batch, int64_t hidden, const float *gates,
                                 const float *hPrev, const float *dh, float *da, float *dhPrev,
                                 void *stream) {
  return cell("gru_cell (seed) output backward", batch, hidden, stream, gruSeedOutputBackward,
              gates, hPrev, dh, da, dhPrev);
}

Status gruSeedCellGatesBackward(int64_t batch, int64_t hidden, const float *gates,
                                const float *hPrev, const float *drh, float *da, float *dhPrev,
                                void *stream) {
  return cell("gru_cell (seed) gates backward", batch, hidden, stream, gruSeedGatesBackward, gates,
              hPrev, drh, da, dhPrev);
}

namespace {

// RecurrentSequence.h's Backend on the GPU. Scratch memory comes from buffers kept per thread
// across calls, the i-th request of a call from the i-th buffer, grown when too small (a
// training loop's layers ask the same sizes every step). Every call's work is queued on the
// default stream, so the next call's kernels, which reuse a buffer, run after this call's
// last use of it, and a buffer replaced by a larger one goes back to the pool in stream order
// (attn/cuda/Device.h): the calls return without waiting. An allocation failure is kept and
// returned by the next operation.
struct GpuBackend {
  std::vector<DeviceBuffer> &buffers = pool();
  size_t used = 0;
  Status failure;

  static std::vector<DeviceBuffer> &pool() {
    thread_local std::vector<DeviceBuffer> buffers;
    return buffers;
  }
  float *scratch(size_t n) {
    if (used == buffers.size())
      buffers.emplace_back();
    DeviceBuffer &b = buffers[used++];
    if (b.bytes() < n * sizeof(float)) {
      b = DeviceBuffer();
      b = DeviceBuffer(n * sizeof(float));
      if (!b.status() && failure.ok())
        failure = b.status();
    }
    return b.as<float>();
  }
  Status gemm(int64_t m, int64_t n, int64_t k, bool transA, bool transB, const float *a,
              const float *b, float *c, const float *bias) {
    if (!failure)
      return failure;
    MatmulShape shape;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    shape.transA = transA;
    shape.transB = transB;
    return matmul(shape, MatmulType::F32, a, b, c, bias, bias ? Epilogue::Bias : Epilogue::None);
  }
  Status add(int64_t n, const float *a, const float *b, float *out) {
    if (!failure)
      return failure;
    return launch("recurrent add", addElements, dim3(elementBlocks(n)), dim3(kThreads), 0,
                  cudaStream_t(nullptr), n, a, b, out);
  }
  Status copy(int64_t n, const float *from, float *to) {
    if (!failure)
      return failure;
    cudaError_t err = cudaMemcpyAsync(to, from, size_t(n) * sizeof(float),
                                      cudaMemcpyDeviceToDevice, cudaStream_t(nullptr));
    return err == cudaSuccess ? Status()
                              : Status::error(std::string("attn::cuda recurrent copy: ") +
                                              cudaGetErrorString(err));
  }
  Status reorder(int64_t B, int64_t T, int64_t C, bool reverse, bool toSteps, const float *in,
                 float *out) {
    if (!failure)
      return failure;
    return launch("recurrent reorder", reorderSteps, dim3(elementBlocks(B * T * C)),
                  dim3(kThreads), 0, cudaStream_t(nullptr), B, T, C, int(reverse), int(toSteps),
                  in, out);
  }
  Status sumRows(int64_t rows, int64_t cols, const float *in, float *out) {
    return failure ? attn::cuda::sumRows(rows, cols, in, out) : failure;
  }
  Status blend(int64_t B, int64_t H, const float *m, const float *prev, const float *next,
               float *out) {
    if (!failure)
      return failure;
    return launch("recurrent mask blend", blendMasked, dim3(elementBlocks(B * H)),
                  dim3(kThreads), 0, cudaStream_t(nullptr), B, H, m, prev, next, out);
  }
  Status split(int64_t B, int64_t H, const float *m, const float *d, float *dCell,
               float *dPrev) {
    if (!failure)
      return failure;
    return launch("recurrent mask split", splitMasked, dim3(elementBlocks(B * H)),
                  dim3(kThreads), 0, cudaStream_t(nullptr), B, H, m, d, dCell, dPrev);
  }
  template <typename... Args> Status rnnForward(Args... args) {
    return failure ? rnnCellForward(args...) : failure;
  }
  template <typename... Args> Status rnnBackward(Args... args) {
    return failure ? rnnCellBackward(args...) : failure;
  }
  template <typename... Args> Status lstmForward(Args... args) {
    return failure ? lstmCellForward(args...) : failure;
  }
  template <typename... Args> Status lstmBackward(Args... args) {
    return failure ? lstmCellBackward(args...) : failure;
  }
  template <typename... Args> Status gruForward(Args... args) {
    return failure ? gruCellForward(args...) : failure;
  }
  template <typename... Args> Status gruBackward(Args... args) {
    return failure ? gruCellBackward(args...) : failure;
  }
};

Status checkSequence(const char *op, const RecurrentShape &s, const RecurrentWeights &w,
                     RecurrentCell cell) {
  if (s.batch < 1 || s.steps < 1 || s.input < 1 || s.hidden < 1)
    return Status::error(std::string("attn::cuda ") + op + ": batch " + std::to_string(s.batch) +
                         ", steps " + std::to_string(s.steps) + ", input " +
                         std::to_string(s.input) + ", hidden " + std::to_string(s.hidden) +
                         " (all must be >= 1)");
  if (cell == RecurrentCell::Gru && (w.peephole || !w.bHh))
    return Status::error(std::string("attn::cuda ") + op +
                         ": a GRU has b_hh and no peepholes");
  if (cell == RecurrentCell::Rnn && w.peephole)
    return Status::error(std::string("attn::cuda ") + op + ": a vanilla RNN has no peepholes");
  if (s.projection < 0 || (s.projection > 0) != (w.wProj != nullptr) ||
      (s.projection > 0 && cell != RecurrentCell::Lstm))
    return Status::error(std::string("attn::cuda ") + op + ": projection " +
                         std::to_string(s.projection) + (w.wProj ? " with" : " without") +
                         " w_proj (an LSTM's projection P > 0 comes with w_proj [H, P])");
  return {};
}

} // namespace

Status recurrentForward(const RecurrentShape &shape, RecurrentCell cell,
                        const RecurrentWeights &weights, const float *x, const float *h0,
                        const float *c0, const float *mask, float *outputs, float *hn,
                        float *cn) {
  if (Status st = checkSequence("recurrent forward", shape, weights, cell); !st)
    return st;
  GpuBackend be;
  sequence::Trace trace;
  return sequence::forward(be, shape, cell, weights, x, h0, c0, mask, outputs, hn, cn, trace);
}

Status recurrentBackward(const RecurrentShape &shape, RecurrentCell cell,
                         const RecurrentWeights &weights, const float *x, const float *h0,
                         const float *c0, const float *mask, const float *dOutputs,
                         const float *dhn, const float *dcn, const RecurrentGradients &gradients) {
  if (Status st = checkSequence("recurrent backward", shape, weights, cell); !st)
    return st;
  GpuBackend be;
  return sequence::backward(be, shape, cell, weights, x, h0, c0, mask, dOutputs, dhn, dcn,
                            gradients);
}

} // namespace attn::cuda
