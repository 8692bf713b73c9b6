// Launches of RecurrentKernels.cuh behind attn/cuda/Kernels.h: shapes checked, grids sized,
// launch errors returned.
#include "attn/cuda/Kernels.h"

#include "Launch.cuh"
// The kernels use blockIdx, threadIdx and gridDim only: no Warp.cuh primitives.
#include "RecurrentKernels.cuh"

#include <cuda_runtime.h>

#include <string>

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

} // namespace attn::cuda
