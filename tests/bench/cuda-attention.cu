// attn-bench-cuda-attention: the GPU fused attention (attn/cuda/FlashAttention.h) in TFLOP/s,
// FlashAttention-2's benchmark: bf16, head dim 128, 16 heads, batch x length = 16k tokens,
// S = 2k .. 16k, causal and not, forward and forward + backward. The fraction is of the bf16
// GEMM rate cuBLAS reaches in the same run (8192^3), and of the datasheet's dense bf16 peak.
//
//   attn-bench-cuda-attention [--json FILE] [--repeat N]
//
// FLOPs as FlashAttention's papers count them: forward 4 B H T S D (halved when causal), the
// backward 2.5 times the forward (our dQ kernel's two extra tile products are not counted: they
// are this implementation's cost, not the problem's). Times are the median of --repeat runs
// after warm-up, by CUDA events. scripts/gpu-check.sh runs it with PyTorch's
// scaled_dot_product_attention (FlashAttention-2 inside) at the same sizes (cuda-attention.py).
#include "CudaBench.cuh"

#include "attn/cuda/FlashAttention.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cmath>

using namespace attn::cuda;

namespace {

using namespace attn::cuda::bench;

constexpr double kDatasheetBf16 = 989.4e12; // H100 / H200 SXM dense bf16

// cuBLAS bf16 GEMM (f32 accumulation) at 8192^3: the ceiling for tensor-core work here.
double gemmPeak(int repeat) {
  const int n = 8192;
  DeviceBuffer a = randomBuffer<__nv_bfloat16>(size_t(n) * n, 1),
               b = randomBuffer<__nv_bfloat16>(size_t(n) * n, 2),
               c(size_t(n) * n * sizeof(__nv_bfloat16));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    die("cublasCreate failed");
  const float one = 1.0f, zero = 0.0f;
  double ms = medianMs(repeat, [&] {
    if (cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data(), CUDA_R_16BF, n,
                     b.data(), CUDA_R_16BF, n, &zero, c.data(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
      die("cublasGemmEx failed");
  });
  cublasDestroy(handle);
  return 2.0 * n * n * double(n) / (ms * 1e-3);
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  if (!parseArgs(argc, argv, "attn-bench-cuda-attention", 20, args))
    return 77;
  const int repeat = args.repeat;
  FILE *json = args.json;
  const double peak = gemmPeak(repeat);
  std::printf("device: %s\n", deviceDescription().c_str());
  std::printf("cuBLAS bf16 GEMM 8192^3: %.0f TFLOP/s (%.0f%% of the datasheet's %.0f)\n",
              peak / 1e12, 100 * peak / kDatasheetBf16, kDatasheetBf16 / 1e12);
  std::printf("%-6s %-7s %10s %8s %8s %10s %8s %8s\n", "S", "causal", "fwd ms", "TFLOP/s",
              "of GEMM", "f+b ms", "TFLOP/s", "of GEMM");

  const int64_t H = 16, D = 128, tokens = 16384;
  for (int64_t S : {2048, 4096, 8192, 16384})
    for (bool causal : {false, true}) {
      AttentionShape s;
      s.batch = tokens / S;
      s.heads = H;
      s.queries = s.keys = S;
      s.headDim = D;
      s.causal = causal;
      s.scale = 1.0f / std::sqrt(float(D));
      const size_t n = size_t(s.batch * H * S * D), rows = size_t(s.batch * H * S);
      DeviceBuffer q = randomBuffer<__nv_bfloat16>(n, 3), k = randomBuffer<__nv_bfloat16>(n, 4),
                   v = randomBuffer<__nv_bfloat16>(n, 5), dOut = randomBuffer<__nv_bfloat16>(n, 6),
                   out(n * 2), lse(rows * 4), dq(n * 2), dk(n * 2), dv(n * 2),
                   workspace(flashAttentionBackwardWorkspace(s));
      for (const DeviceBuffer *b : {&out, &lse, &dq, &dk, &dv, &workspace})
        check(b->status());
      auto fwd = [&] {
        check(flashAttentionForward(s, DType::BF16, q.data(), k.data(), v.data(), {}, out.data(),
                                    lse.as<float>()));
      };
      auto fwdBwd = [&] {
        fwd();
        check(flashAttentionBackward(s, DType::BF16, q.data(), k.data(), v.data(), {}, out.data(),
                                     lse.as<float>(), dOut.data(), nullptr, dq.data(), dk.data(),
                                     dv.data(), workspace.data()));
      };
      const double fwdFlops = 4.0 * s.batch * H * double(S) * S * D / (causal ? 2 : 1);
      const double msF = medianMs(repeat, fwd), msFB = medianMs(repeat, fwdBwd);
      const double tF = fwdFlops / (msF * 1e-3), tFB = 3.5 * fwdFlops / (msFB * 1e-3);
      std::printf("%-6lld %-7s %10.3f %8.1f %7.0f%% %10.3f %8.1f %7.0f%%\n", (long long)S,
                  causal ? "yes" : "no", msF, tF / 1e12, 100 * tF / peak, msFB, tFB / 1e12,
                  100 * tFB / peak);
      if (json)
        std::fprintf(json,
                     "{\"S\": %lld, \"causal\": %s, \"fwd_tflops\": %.2f, "
                     "\"fwd_bwd_tflops\": %.2f, \"gemm_tflops\": %.2f}\n",
                     (long long)S, causal ? "true" : "false", tF / 1e12, tFB / 1e12, peak / 1e12);
    }
  check(synchronize());
  if (json)
    std::fclose(json);
  return 0;
}
