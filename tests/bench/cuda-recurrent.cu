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
#include "CudaBench.cuh"

#include "attn/cuda/Recurrent.h"

#include <cublas_v2.h>

using namespace attn::cuda;

namespace {

using namespace attn::cuda::bench;

// cuBLAS f32 SGEMM at 8192^3 with TF32 off: the ceiling for exact f32 GEMMs here.
double gemmPeak(int repeat) {
  const int n = 8192;
  DeviceBuffer a = randomBuffer<float>(size_t(n) * n, 1), b = randomBuffer<float>(size_t(n) * n, 2),
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
  Args args;
  if (!parseArgs(argc, argv, "attn-bench-cuda-recurrent", 10, args))
    return 77;
  const int repeat = args.repeat;
  FILE *json = args.json;
  const double peak = gemmPeak(repeat);
  std::printf("device: %s\ncuBLAS f32 GEMM 8192^3 (no TF32): %.1f TFLOP/s\n",
              deviceDescription().c_str(), peak / 1e12);
  std::printf("%-5s %5s %10s %10s %8s %8s\n", "cell", "H", "fwd ms", "f+b ms", "TFLOP/s",
              "of GEMM");

  const int64_t B = 64, T = 128;
  for (RecurrentCell cell : {RecurrentCell::Lstm, RecurrentCell::Gru})
    for (int64_t H : {512, 1024}) {
      const bool lstm = cell == RecurrentCell::Lstm;
      const int64_t I = H, G = (lstm ? 4 : 3) * H;
      const RecurrentShape shape{B, T, I, H, false};
      const float w = 1.0f / float(H);
      DeviceBuffer x = randomBuffer<float>(B * T * I, 3), h0 = randomBuffer<float>(B * H, 4),
                   c0 = randomBuffer<float>(B * H, 5), wih = randomBuffer<float>(I * G, 6, w),
                   whh = randomBuffer<float>(H * G, 7, w), bih = randomBuffer<float>(G, 8, w),
                   bhh = randomBuffer<float>(G, 9, w), dOut = randomBuffer<float>(B * T * H, 10),
                   dhn = randomBuffer<float>(B * H, 11), dcn = randomBuffer<float>(B * H, 12);
      DeviceBuffer out(B * T * H * 4), hn(B * H * 4), cn(B * H * 4), dx(B * T * I * 4),
          dh0(B * H * 4), dc0(B * H * 4), dwih(I * G * 4), dwhh(H * G * 4), dbih(G * 4),
          dbhh(G * 4);
      const RecurrentWeights weights{wih.as<float>(), whh.as<float>(), bih.as<float>(),
                                     lstm ? nullptr : bhh.as<float>(), nullptr};
      const RecurrentGradients grads{dx.as<float>(),   dh0.as<float>(),  dc0.as<float>(),
                                     dwih.as<float>(), dwhh.as<float>(), dbih.as<float>(),
                                     dbhh.as<float>(), nullptr};
      auto fwd = [&] {
        check(recurrentForward(shape, cell, weights, x.as<float>(), h0.as<float>(), c0.as<float>(),
                               nullptr, out.as<float>(), hn.as<float>(), cn.as<float>()));
      };
      auto fwdBwd = [&] {
        fwd();
        check(recurrentBackward(shape, cell, weights, x.as<float>(), h0.as<float>(), c0.as<float>(),
                                nullptr, dOut.as<float>(), dhn.as<float>(), dcn.as<float>(),
                                grads));
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
