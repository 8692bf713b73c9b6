// What the GPU benchmarks share (cuda-attention.cu, cuda-recurrent.cu): their command line,
// errors, random device buffers and the timing protocol (the median of --repeat runs by CUDA
// events after warm-up). Not BenchSupport.h: that one links the compiler, and these run on the
// GPU machine, which has no MLIR.
#ifndef ATTN_TESTS_BENCH_CUDABENCH_CUH
#define ATTN_TESTS_BENCH_CUDABENCH_CUH

#include "attn/cuda/Device.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace attn::cuda::bench {

inline const char *&programName() {
  static const char *name = "attn-bench-cuda";
  return name;
}

[[noreturn]] inline void die(const std::string &what) {
  std::fprintf(stderr, "%s: %s\n", programName(), what.c_str());
  std::exit(1);
}

inline void check(const Status &st) {
  if (!st.ok())
    die(st.message());
}

inline void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess)
    die(std::string(what) + ": " + cudaGetErrorString(err));
}

struct Args {
  FILE *json = nullptr; // --json FILE: one line per measurement
  int repeat;           // --repeat N
};

// The command line, `repeat` its default. False (the caller exits 77, ctest's skip) where no
// GPU can be used, after saying why.
inline bool parseArgs(int argc, char **argv, const char *name, int repeat, Args &args) {
  programName() = name;
  args.repeat = repeat;
  const char *jsonPath = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      jsonPath = argv[++i];
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      args.repeat = std::max(1, std::atoi(argv[++i]));
    else
      die(std::string("unknown argument ") + argv[i] + " (--json FILE, --repeat N)");
  }
  if (std::string why = deviceUnavailable(); !why.empty()) {
    std::printf("%s: skipped: %s\n", name, why.c_str());
    return false;
  }
  if (jsonPath && !(args.json = std::fopen(jsonPath, "w")))
    die(std::string("cannot write ") + jsonPath);
  return true;
}

// Uniform values in [-scale, scale) from a hash of the index: random-looking, never all zero.
template <typename T> __global__ void fillRandom(T *x, size_t n, uint32_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    x[i] = T(scale * (float(h & 0xffffff) / float(1 << 23) - 1.0f));
  }
}

// n random elements of type T on the device.
template <typename T> DeviceBuffer randomBuffer(size_t n, uint32_t seed, float scale = 1.0f) {
  DeviceBuffer b(n * sizeof(T));
  check(b.status());
  fillRandom<T><<<1024, 256>>>(b.as<T>(), n, seed, scale);
  check(cudaGetLastError(), "fill");
  return b;
}

// The median of `repeat` timed runs of f, in ms, after three untimed ones.
template <typename F> double medianMs(int repeat, F &&f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i)
    f();
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<float> ms(repeat);
  for (int i = 0; i < repeat; ++i) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    check(cudaEventSynchronize(stop), "timed run");
    cudaEventElapsedTime(&ms[i], start, stop);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[repeat / 2];
}

} // namespace attn::cuda::bench

#endif // ATTN_TESTS_BENCH_CUDABENCH_CUH
