// attn-bench-cuda-recurrent: the GPU's LSTM and GRU layers (attn/cuda/Recurrent.h) in f32, a
// training step's layer work (forward, then backward) at batch 64, 128 steps, input = hidden =
// 512 and 1024, in ms and TFLOP/s, with the fraction of the f32 GEMM rate cuBLAS reaches in the
// same run (8192^3, no TF32: the layers compute in exact f32). scripts/gpu-check.sh runs it with
// PyTorch's nn.LSTM / nn.GRU (cuDNN) at the same sizes (cuda-recurrent.py) and prints the ratios.
//
//   attn-bench-cuda-recurrent [--json FILE] [--repeat N]
//
// FLOPs are the problem's: the forward's GEMMs 2 B T (I + H) G (G = 4H or 3H), the backward
// twice that (dx and dW_ih, dh and dW_hh); our backward also replays the forward, which is
// this implementation's cost and not counted. Times: the median of --repeat runs by CUDA
// events after warm-up.
#include "attn/cuda/Recurrent.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace attn::cuda;

namespace {

void die(const std::string &what) {
  std::fprintf(stderr, "attn-bench-cuda-recurrent: %s\n", what.c_str());
  std::exit(1);
}

void check(const Status &st) {
  if (!st.ok())
    die(st.message());
}

// Uniform values in [-scale, scale) from a hash of the index.
__global__ void fillRandom(float *x, size_t n, uint32_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    x[i] = scale * (float(h & 0xffffff) / float(1 << 23) - 1.0f);
  }
}

DeviceBuffer randomBuffer(size_t n, uint32_t seed, float scale = 1.0f) {
  DeviceBuffer b(n * sizeof(float));
  check(b.status());
  fillRandom<<<1024, 256>>>(b.as<float>(), n, seed, scale);
  if (cudaGetLastError() != cudaSuccess)
    die("fill failed");
  return b;
}

template <typename F> double medianMs(int repeat, F &&f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 2; ++i)
    f();
  cudaDeviceSynchronize();
  std::vector<float> ms(repeat);
  for (int i = 0; i < repeat; ++i) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&ms[i], start, stop);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[repeat / 2];
}

// cuBLAS f32 SGEMM at 8192^3 with TF32 off: the ceiling for exact f32 GEMMs here.
double gemmPeak(int repeat) {
  const int n = 8192;
  DeviceBuffer a = randomBuffer(size_t(n) * n, 1), b = randomBuffer(size_t(n) * n, 2),
               c(size_t(n) * n * sizeof(float));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    die("cublasCreate failed");
  cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);
  const float one = 1.0f, zero = 0.0f;
  double ms = medianMs(repeat, [&] {
    if (cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.as<float>(), n,
                    b.as<float>(), n, &zero, c.as<float>(), n) != CUBLAS_STATUS_SUCCESS)
      die("cublasSgemm failed");
  });
  cublasDestroy(handle);
  return 2.0 * n * n * double(n) / (ms * 1e-3);
}

} // namespace

int main(int argc, char **argv) {
  const char *jsonPath = nullptr;
  int repeat = 10;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      jsonPath = argv[++i];
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else
      die(std::string("unknown argument ") + argv[i] + " (--json FILE, --repeat N)");
  }
  if (std::string why = deviceUnavailable(); !why.empty()) {
    std::printf("attn-bench-cuda-recurrent: skipped: %s\n", why.c_str());
    return 77;
  }
  const double peak = gemmPeak(repeat);
  std::printf("device: %s\ncuBLAS f32 GEMM 8192^3 (no TF32): %.1f TFLOP/s\n",
              deviceDescription().c_str(), peak / 1e12);
  std::printf("%-5s %5s %10s %10s %8s %8s\n", "cell", "H", "fwd ms", "f+b ms", "TFLOP/s",
              "of GEMM");
  FILE *json = jsonPath ? std::fopen(jsonPath, "w") : nullptr;
  if (jsonPath && !json)
    die(std::string("cannot write ") + jsonPath);

  const int64_t B = 64, T = 128;
  for (RecurrentCell cell : {RecurrentCell::Lstm, RecurrentCell::Gru})
    for (int64_t H : {512, 1024}) {
      const bool lstm = cell == RecurrentCell::Lstm;
      const int64_t I = H, G = (lstm ? 4 : 3) * H;
      const RecurrentShape shape{B, T, I, H, false};
      const float w = 1.0f / float(H);
      DeviceBuffer x = randomBuffer(B * T * I, 3), h0 = randomBuffer(B * H, 4),
                   c0 = randomBuffer(B * H, 5), wih = randomBuffer(I * G, 6, w),
                   whh = randomBuffer(H * G, 7, w), bih = randomBuffer(G, 8, w),
                   bhh = randomBuffer(G, 9, w), dOut = randomBuffer(B * T * H, 10),
                   dhn = randomBuffer(B * H, 11), dcn = randomBuffer(B * H, 12);
      DeviceBuffer out(B * T * H * 4), hn(B * H * 4), cn(B * H * 4), dx(B * T * I * 4),
          dh0(B * H * 4), dc0(B * H * 4), dwih(I * G * 4), dwhh(H * G * 4), dbih(G * 4),
          dbhh(G * 4);
      const RecurrentWeights weights{wih.as<float>(), whh.as<float>(), bih.as<float>(),
                                     lstm ? nullptr : bhh.as<float>(), nullptr};
      const RecurrentGradients grads{dx.as<float>(),   dh0.as<float>(),  dc0.as<float>(),
                                     dwih.as<float>(), dwhh.as<float>(), dbih.as<float>(),
                                     dbhh.as<float>(), nullptr};
      auto fwd = [&] {
        check(recurrentForward(shape, cell, weights, x.as<float>(), h0.as<float>(),
                               c0.as<float>(), nullptr, out.as<float>(), hn.as<float>(),
                               cn.as<float>()));
      };
      auto fwdBwd = [&] {
        fwd();
        check(recurrentBackward(shape, cell, weights, x.as<float>(), h0.as<float>(),
                                c0.as<float>(), nullptr, dOut.as<float>(), dhn.as<float>(),
                                dcn.as<float>(), grads));
      };
      const double fwdFlops = 2.0 * B * T * double(I + H) * G;
      const double msF = medianMs(repeat, fwd), msFB = medianMs(repeat, fwdBwd);
      const double tFB = 3.0 * fwdFlops / (msFB * 1e-3);
      const char *name = lstm ? "lstm" : "gru";
      std::printf("%-5s %5lld %10.3f %10.3f %8.2f %7.0f%%\n", name, (long long)H, msF, msFB,
                  tFB / 1e12, 100 * tFB / peak);
      if (json)
        std::fprintf(json,
                     "{\"cell\": \"%s\", \"H\": %lld, \"fwd_ms\": %.3f, \"fwd_bwd_ms\": %.3f, "
                     "\"tflops\": %.3f, \"gemm_tflops\": %.3f}\n",
                     name, (long long)H, msF, msFB, tFB / 1e12, peak / 1e12);
    }
  if (json)
    std::fclose(json);
  return 0;
}
