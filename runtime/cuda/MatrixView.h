// How a strided memref view of matrices is handed to cuBLASLt, which takes a leading dimension
// and a batch stride per operand but no other strides (runtime/cuda/program.cpp; tested by
// attn-cuda-matmul-test, which needs no GPU for these).
//
// A view [batch, rows, cols] with element strides [sb, sr, sc] is, when sc == 1, row-major
// matrices with leading dimension sr; when sr == 1, the transposes of row-major [cols, rows]
// matrices with leading dimension sc. Any other view is gathered into a packed copy first.
#ifndef ATTN_CUDA_MATRIX_VIEW_H
#define ATTN_CUDA_MATRIX_VIEW_H

#include <algorithm>
#include <cstdint>

namespace attn::cuda {

struct MatrixView {
  bool direct = false;     // false: no leading dimension describes it; gather it
  bool transposed = false; // stored as the row-major transpose
  int64_t ld = 0;          // elements between rows of the stored row-major matrix
  int64_t batchStride = 0; // elements between matrices (0 when the batch is 1)
};

// sizes and strides of a rank-3 memref ([batch, rows, cols]).
inline MatrixView matrixView(const int64_t sizes[3], const int64_t strides[3]) {
  const int64_t batch = sizes[0], rows = sizes[1], cols = sizes[2];
  // A dim of size 1 is never stepped over: MLIR may give it any stride.
  const int64_t sr = rows == 1 ? cols : strides[1];
  const int64_t sc = cols == 1 ? 1 : strides[2];
  MatrixView v;
  v.batchStride = batch == 1 ? 0 : strides[0];
  if (sc == 1 && sr >= cols) {
    v.direct = true;
    v.ld = std::max<int64_t>(sr, 1);
  } else if (rows == 1 || strides[1] == 1) {
    // Column-major: the row-major [cols, rows] with rows of stride sc.
    const int64_t ld = cols == 1 ? rows : strides[2];
    v.direct = ld >= rows;
    v.transposed = true;
    v.ld = std::max<int64_t>(ld, 1);
  }
  // cuBLASLt reads each matrix whole: batches must not overlap their predecessors' rows
  // unless they are the same matrix.
  if (v.direct && batch > 1 && v.batchStride < 0)
    v.direct = false;
  return v;
}

} // namespace attn::cuda

#endif // ATTN_CUDA_MATRIX_VIEW_H
