// The gathers and scatters of the --device cuda entry points (runtime/cuda/OffloadKernels.cuh)
// compiled as C++ over WarpEmulator.h, on the views compiled code passes (transposed, sliced,
// broadcast, with an offset), against the memref's elements walked on the host. Runs in CI,
// where there is no GPU.
#include "WarpEmulator.h"
// After the emulator: the kernels use its blockIdx, threadIdx, gridDim and blockDim.
#include "../../runtime/cuda/OffloadKernels.cuh"

#include "attn/kernels.h" // attn_memref4

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

using attn::cuda::emulator::Dim3;
using attn::cuda::emulator::launch;
namespace k = attn::cuda::offload;

// Element (a, b, c, d) of a rank-4 memref, by its strides.
float &at(attn_memref4 &m, int64_t a, int64_t b, int64_t c, int64_t d) {
  return m.aligned[m.offset + a * m.strides[0] + b * m.strides[1] + c * m.strides[2] +
                   d * m.strides[3]];
}

// The views: [2, 3, 4, 5] packed; the same storage with dims 1 and 2 swapped (a head split's
// transpose); a slice of every other row past an offset; dim 0 broadcast (stride 0).
std::vector<attn_memref4> views(std::vector<float> &storage) {
  float *p = storage.data();
  return {
      {p, p, 0, {2, 3, 4, 5}, {60, 20, 5, 1}},
      {p, p, 0, {2, 4, 3, 5}, {60, 5, 20, 1}},
      {p, p, 7, {2, 3, 2, 5}, {60, 20, 10, 1}},
      {p, p, 3, {4, 3, 4, 5}, {0, 20, 5, 1}},
  };
}

TEST(EmulatedOffloadKernels, GatherWalksTheViewInRowMajorOrder) {
  std::vector<float> storage(2 * 60 + 16);
  for (size_t i = 0; i < storage.size(); ++i)
    storage[i] = float(i) * 0.5f - 3;
  for (attn_memref4 m : views(storage)) {
    const size_t n = size_t(m.sizes[0] * m.sizes[1] * m.sizes[2] * m.sizes[3]);
    std::vector<float> f32(n, NAN);
    std::vector<__nv_bfloat16> bf16(n);
    launch(Dim3{2, 1, 1}, 0, k::gatherKernel<attn_memref4, 4, float>, m, f32.data(), n);
    launch(Dim3{1, 1, 1}, 0, k::gatherKernel<attn_memref4, 4, __nv_bfloat16>, m, bf16.data(), n);
    size_t i = 0;
    for (int64_t a = 0; a < m.sizes[0]; ++a)
      for (int64_t b = 0; b < m.sizes[1]; ++b)
        for (int64_t c = 0; c < m.sizes[2]; ++c)
          for (int64_t d = 0; d < m.sizes[3]; ++d, ++i) {
            ASSERT_EQ(f32[i], at(m, a, b, c, d)) << "element " << i;
            ASSERT_EQ(__bfloat162float(bf16[i]), __bfloat162float(__float2bfloat16(f32[i])))
                << "element " << i;
          }
  }
}

TEST(EmulatedOffloadKernels, ScatterWritesTheViewsElementsAndNothingElse) {
  std::vector<float> storage(2 * 60 + 16);
  for (attn_memref4 m : views(storage)) {
    if (m.strides[0] == 0)
      continue; // a broadcast view is read, never written
    std::fill(storage.begin(), storage.end(), NAN);
    const size_t n = size_t(m.sizes[0] * m.sizes[1] * m.sizes[2] * m.sizes[3]);
    std::vector<float> in(n);
    std::vector<__nv_bfloat16> inBf16(n);
    for (size_t i = 0; i < n; ++i) {
      in[i] = float(i) + 0.25f;
      inBf16[i] = __float2bfloat16(in[i]);
    }
    launch(Dim3{3, 1, 1}, 0, k::scatterKernel<attn_memref4, 4, float>,
           static_cast<const float *>(in.data()), m, n);
    size_t i = 0, written = 0;
    for (int64_t a = 0; a < m.sizes[0]; ++a)
      for (int64_t b = 0; b < m.sizes[1]; ++b)
        for (int64_t c = 0; c < m.sizes[2]; ++c)
          for (int64_t d = 0; d < m.sizes[3]; ++d, ++i)
            ASSERT_EQ(at(m, a, b, c, d), in[i]) << "element " << i;
    for (float x : storage)
      written += !std::isnan(x);
    EXPECT_EQ(written, n) << "a scatter wrote outside the view";
    launch(Dim3{1, 1, 1}, 0, k::scatterKernel<attn_memref4, 4, __nv_bfloat16>,
           static_cast<const __nv_bfloat16 *>(inBf16.data()), m, n);
    i = 0;
    for (int64_t a = 0; a < m.sizes[0]; ++a)
      for (int64_t b = 0; b < m.sizes[1]; ++b)
        for (int64_t c = 0; c < m.sizes[2]; ++c)
          for (int64_t d = 0; d < m.sizes[3]; ++d, ++i)
            ASSERT_EQ(at(m, a, b, c, d), __bfloat162float(inBf16[i])) << "element " << i;
  }
}

} // namespace
