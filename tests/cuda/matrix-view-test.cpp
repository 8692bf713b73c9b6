// How attn_rt_cuda_matmul hands a strided view to cuBLASLt (runtime/cuda/MatrixView.h): with
// a leading dimension, as the row-major transpose, or gathered. Every case is then checked by
// reading the view's elements through the description it got. No GPU needed.
#include "runtime/cuda/MatrixView.h"

#include <gtest/gtest.h>

namespace {

using attn::cuda::MatrixView;
using attn::cuda::matrixView;

struct ViewCase {
  const char *name;
  int64_t sizes[3], strides[3];
  bool direct, transposed;
  int64_t ld, batchStride;
};

// The offset of element (b, r, c) as the description says it lies.
int64_t described(const MatrixView &v, int64_t b, int64_t r, int64_t c) {
  return b * v.batchStride + (v.transposed ? c * v.ld + r : r * v.ld + c);
}

class MatrixViews : public ::testing::TestWithParam<ViewCase> {};

TEST_P(MatrixViews, DescribeWhereEachElementLies) {
  const ViewCase &c = GetParam();
  const MatrixView v = matrixView(c.sizes, c.strides);
  EXPECT_EQ(v.direct, c.direct);
  if (!c.direct)
    return;
  EXPECT_EQ(v.transposed, c.transposed);
  EXPECT_EQ(v.ld, c.ld);
  EXPECT_EQ(v.batchStride, c.batchStride);
  for (int64_t b = 0; b < c.sizes[0]; ++b)
    for (int64_t r = 0; r < c.sizes[1]; ++r)
      for (int64_t col = 0; col < c.sizes[2]; ++col)
        ASSERT_EQ(described(v, b, r, col), b * c.strides[0] + r * c.strides[1] + col * c.strides[2])
            << b << ", " << r << ", " << col;
}

const ViewCase kCases[] = {
    {"packed", {2, 3, 4}, {12, 4, 1}, true, false, 4, 12},
    {"rows apart", {2, 3, 4}, {40, 8, 1}, true, false, 8, 40},
    {"column major", {2, 3, 4}, {12, 1, 3}, true, true, 3, 12},
    {"one matrix: no batch stride", {1, 3, 4}, {99, 4, 1}, true, false, 4, 0},
    // MLIR may give a size-1 dim any stride; it is never stepped over.
    {"one row, any row stride", {1, 1, 4}, {4, 0, 1}, true, false, 4, 0},
    {"one column, any column stride", {1, 3, 1}, {3, 1, 5}, true, false, 1, 0},
    {"one strided row: a column-major column", {1, 1, 4}, {8, 4, 2}, true, true, 2, 0},
    {"neither stride 1: gathered", {1, 3, 4}, {48, 2, 7}, false, false, 0, 0},
    {"rows overlapping: gathered", {1, 3, 4}, {12, 2, 1}, false, false, 0, 0},
};

INSTANTIATE_TEST_SUITE_P(Cases, MatrixViews, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ViewCase> &info) {
                           std::string name = info.param.name;
                           for (char &ch : name)
                             if (!isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return name;
                         });

} // namespace
