// The GPU kernels of decoding's choices (runtime/cuda/DecodeKernels.cuh) compiled as C++ over
// WarpEmulator.h, launched as decode.cu launches them, against the CPU's picks:
// std::max_element for greedy decoding's argmax, a stable sort for beam search's k best.
// Runs in CI, where there is no GPU; program-test.cpp runs them on one, through
// attn/cuda/Offload.h's entry points.
#include "WarpEmulator.h"
// After the emulator: the kernels are written over its primitives.
#include "../../runtime/cuda/DecodeKernels.cuh"

#include "DecodeReference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace attn::cuda::testing;
using attn::cuda::emulator::Dim3;
using attn::cuda::emulator::launch;
namespace k = attn::cuda::decode;

// Rows of normally distributed scores, then the cases that decide the picks (DecodeReference.h).
std::vector<float> rows(int64_t count, int64_t cols) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> x(size_t(count * cols));
  for (float &v : x)
    v = dist(rng);
  writeDecodeCases(x.data(), cols);
  return x;
}

TEST(EmulatedDecodeKernels, ArgmaxIsStdMaxElement) {
  const int64_t count = kDecodeCaseRows, cols = 1000;
  std::vector<float> x = rows(count, cols), value(count, -7);
  std::vector<int32_t> index(count, -7);
  launch(Dim3{unsigned(count), 1, 1}, k::kShared, k::argmaxRows,
         static_cast<const float *>(x.data()), cols, index.data(), value.data());
  for (int64_t r = 0; r < count; ++r) {
    const float *row = x.data() + r * cols;
    const int32_t want = int32_t(std::max_element(row, row + cols) - row);
    EXPECT_EQ(index[r], want) << "row " << r;
    if (std::isnan(row[want]))
      EXPECT_TRUE(std::isnan(value[r])) << "row " << r;
    else
      EXPECT_EQ(value[r], row[want]) << "row " << r;
  }
}

TEST(EmulatedDecodeKernels, TopKIsAStableSortsFirstK) {
  const int64_t count = kDecodeCaseRows, cols = 300;
  std::vector<float> x = rows(count, cols);
  for (int64_t kk : {int64_t(1), int64_t(6), cols}) {
    std::vector<int32_t> index(size_t(count * kk), -7);
    std::vector<float> value(size_t(count * kk), -7);
    launch(Dim3{unsigned(count), 1, 1}, k::kShared, k::topKRows,
           static_cast<const float *>(x.data()), cols, kk, index.data(), value.data());
    for (int64_t r = 0; r < count; ++r) {
      const float *row = x.data() + r * cols;
      std::vector<int32_t> order = ranking(row, cols);
      for (int64_t i = 0; i < kk; ++i) {
        ASSERT_EQ(index[r * kk + i], order[i]) << "k " << kk << ", row " << r << ", rank " << i;
        ASSERT_EQ(value[r * kk + i], rankedValue(row[order[i]]))
            << "k " << kk << ", row " << r << ", rank " << i;
      }
    }
  }
}

} // namespace
