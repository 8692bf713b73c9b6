// attn::cuda::matmul (cuBLASLt) on a GPU against the product in double from the same rounded
// inputs: f32, bf16 and f16 storage, every combination of transposes, batches with a
// broadcast operand, and the bias and bias + ReLU epilogues. A plain program like the other
// GPU tests (exit 0 pass, 1 fail, 77 no GPU).
#include "attn/cuda/Matmul.h"

#include "AttentionReference.h" // toBits, fromBits
#include "GpuTest.h"

#include <cuda_runtime_api.h>

#include <cstring>

using namespace attn::cuda;
using namespace attn::cuda::testing;

namespace {

struct MatmulCase {
  const char *name;
  MatmulType type;
  MatmulShape shape;
  Epilogue epilogue;
};

// Host values rounded to the storage type, and their bytes.
struct Operand {
  std::vector<double> values;
  std::vector<unsigned char> bytes;
};

Operand operand(size_t n, MatmulType type, std::mt19937 &rng) {
  std::normal_distribution<float> dist;
  Operand o{std::vector<double>(n), {}};
  const size_t width = type == MatmulType::F32 ? 4 : 2;
  o.bytes.resize(n * width);
  for (size_t i = 0; i < n; ++i) {
    const float x = dist(rng);
    if (type == MatmulType::F32) {
      std::memcpy(&o.bytes[i * 4], &x, 4);
      o.values[i] = x;
    } else {
      const DType d = type == MatmulType::BF16 ? DType::BF16 : DType::F16;
      const uint16_t bits = toBits(x, d);
      std::memcpy(&o.bytes[i * 2], &bits, 2);
      o.values[i] = fromBits(bits, d);
    }
  }
  return o;
}

double value(const std::vector<unsigned char> &bytes, size_t i, MatmulType type) {
  if (type == MatmulType::F32) {
    float x;
    std::memcpy(&x, &bytes[i * 4], 4);
    return x;
  }
  uint16_t bits;
  std::memcpy(&bits, &bytes[i * 2], 2);
  return fromBits(bits, type == MatmulType::BF16 ? DType::BF16 : DType::F16);
}

void runCase(const MatmulCase &c, std::mt19937 &rng) {
  const MatmulShape &s = c.shape;
  std::printf("  %s\n", c.name);
  const int64_t batchA = s.broadcastA ? 1 : s.batch, batchB = s.broadcastB ? 1 : s.batch;
  const Operand a = operand(batchA * s.m * s.k, c.type, rng),
                b = operand(batchB * s.k * s.n, c.type, rng), bias = operand(s.n, c.type, rng);
  const size_t width = c.type == MatmulType::F32 ? 4 : 2, nc = s.batch * s.m * s.n;
  DeviceBuffer da(a.bytes.size()), db(b.bytes.size()), dbias(bias.bytes.size()), dc(nc * width);
  da.upload(a.bytes.data(), a.bytes.size());
  db.upload(b.bytes.data(), b.bytes.size());
  dbias.upload(bias.bytes.data(), bias.bytes.size());
  cudaMemset(dc.data(), 0xff, nc * width); // NaN
  Status st = matmul(s, c.type, da.data(), db.data(), dc.data(),
                     c.epilogue == Epilogue::None ? nullptr : dbias.data(), c.epilogue);
  if (st.ok())
    st = synchronize();
  if (!st.ok())
    return fail(st.message());
  std::vector<unsigned char> got(nc * width);
  dc.download(got.data(), got.size());

  double num = 0, den = 0;
  for (int64_t i = 0; i < s.batch; ++i)
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t col = 0; col < s.n; ++col) {
        double want = 0;
        for (int64_t kk = 0; kk < s.k; ++kk) {
          const int64_t ia =
              (s.broadcastA ? 0 : i) * s.m * s.k + (s.transA ? kk * s.m + r : r * s.k + kk);
          const int64_t ib =
              (s.broadcastB ? 0 : i) * s.k * s.n + (s.transB ? col * s.k + kk : kk * s.n + col);
          want += a.values[ia] * b.values[ib];
        }
        if (c.epilogue != Epilogue::None)
          want += bias.values[col];
        if (c.epilogue == Epilogue::BiasRelu)
          want = std::max(want, 0.0);
        const double g = value(got, (i * s.m + r) * s.n + col, c.type);
        if (!std::isfinite(g))
          return fail("an element of c is not finite (unwritten?)");
        num += (g - want) * (g - want);
        den += want * want;
      }
  const double error = std::sqrt(num / den);
  const double tolerance = c.type == MatmulType::F32 ? 1e-5 : 1e-2;
  std::printf("    relative error %.2e\n", error);
  if (!(error <= tolerance))
    fail(std::string(c.name) + ": relative error " + std::to_string(error));
}

MatmulShape shape(int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool bA = false,
                  bool bB = false) {
  MatmulShape s;
  s.batch = batch;
  s.m = m;
  s.n = n;
  s.k = k;
  s.transA = ta;
  s.transB = tb;
  s.broadcastA = bA;
  s.broadcastB = bB;
  return s;
}

} // namespace

int main() {
  // cuBLASLt is opened at the first product (matmul.cpp), not linked: it must load, GPU or
  // not.
  if (Status st = loadMatmulLibrary(); !st.ok()) {
    fail(st.message());
    return finish();
  }
  if (skipWithoutDevice())
    return 77;
  const std::vector<MatmulCase> cases = {
      {"f32 a b", MatmulType::F32, shape(1, 33, 65, 47, false, false), Epilogue::None},
      {"f32 a^T b, batch 3, b broadcast", MatmulType::F32,
       shape(3, 20, 31, 16, true, false, false, true), Epilogue::None},
      {"f32 a b^T + bias (dense)", MatmulType::F32, shape(1, 64, 96, 128, false, true),
       Epilogue::Bias},
      {"bf16 a^T b^T, batch 4, a broadcast", MatmulType::BF16,
       shape(4, 48, 40, 72, true, true, true, false), Epilogue::None},
      {"bf16 a b + bias, relu", MatmulType::BF16, shape(1, 128, 256, 64, false, false),
       Epilogue::BiasRelu},
      {"f16 a b^T, batch 2", MatmulType::F16, shape(2, 17, 24, 40, false, true), Epilogue::None},
  };
  std::mt19937 rng(20261203);
  for (const MatmulCase &c : cases)
    runCase(c, rng);
  Status bad = matmul(shape(1, 0, 4, 4, false, false), MatmulType::F32, nullptr, nullptr, nullptr);
  if (bad.ok() || bad.message().find("c [1, 0, 4]") == std::string::npos)
    fail("a zero dimension must be refused by shape: " + bad.message());
  return finish();
}
