// The launches of the compiler's generated kernels (docs/cuda.md, "Generated kernels").
//
// attnc compiles each loop nest of a `--device cuda` program to PTX (gpu-module-to-binary)
// and lowers its gpu.launch_func with MLIR's gpu-to-llvm, whose LLVM 19 translation calls, at
// every launch:
//
//   module = mgpuModuleLoadJIT(ptx, optLevel)         (mgpuModuleLoad(cubin, size) for a cubin)
//   kernel = mgpuModuleGetFunction(module, name)
//   stream = mgpuStreamCreate()
//   mgpuLaunchKernel(kernel, grid x y z, block x y z, sharedBytes, stream, params, extra, n)
//   mgpuStreamSynchronize(stream); mgpuStreamDestroy(stream); mgpuModuleUnload(module)
//
// These are the functions of MLIR's CUDA runtime wrappers, with the same signatures; attnc's
// runtime links no MLIR, so it defines them here, on the CUDA runtime's library API (no driver
// API, which would need the driver linked or opened by hand). Where MLIR's wrappers load and
// unload the module at each launch, a module is loaded once, at its first launch (the driver
// compiles the PTX for the GPU there), and kept with its kernels for the process. Its key is
// the PTX itself, not its address: a JIT-compiled program's memory may be reused by the next
// program's, whose PTX at the same address is another module.
//
// A buffer that only the generated kernels and the runtime's GPU calls touch is device memory
// (attn-device-buffers: gpu.alloc -> mgpuMemAlloc, below), from CUDA's stream-ordered pool.
//
// Launches are asynchronous, in order on the default stream, which the runtime's other GPU
// calls (cuBLASLt, the offloaded kernels) use too. So mgpuStreamSynchronize, which the
// synchronous form of gpu-to-llvm's lowering calls after every launch, does not wait: the host
// waits in attn_rt_cuda_synchronize, which attn-gpu-host-sync places where the host touches
// memory. CUDA_LAUNCH_BLOCKING=1 makes every launch wait, and stops at the kernel that fails.
//
// A failure (the PTX does not load, a launch or a kernel fails) prints
// "attn runtime: <kernel>: <why>" and aborts, as the runtime's other kernels do: compiled code
// cannot take an error. A kernel's failure shows at the next wait, which names the kernel
// launched last.
#include "attn/cuda/Device.h"
#include "attn/cuda/Offload.h"
#include "runtime/cuda/Fail.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace {

using attn::cuda::internal::fail;

struct Kernels {
  std::mutex mutex;
  std::deque<std::string> images;                              // the keys' text
  std::unordered_map<std::string_view, cudaLibrary_t> modules; // by image
  std::map<std::pair<cudaLibrary_t, std::string>, cudaKernel_t> kernels;
  std::unordered_map<const void *, std::string> names; // kernel -> name
  std::string lastLaunched;                            // for a failed sync
};

Kernels &kernels() {
  static Kernels *k = new Kernels(); // never destroyed: the process may launch while exiting
  return *k;
}

// `image`: PTX (with its terminating NUL) or a cubin.
cudaLibrary_t load(std::string_view image) {
  Kernels &k = kernels();
  std::lock_guard<std::mutex> lock(k.mutex);
  if (auto it = k.modules.find(image); it != k.modules.end())
    return it->second;
  char log[4096] = {0};
  cudaJitOption options[] = {cudaJitErrorLogBuffer, cudaJitErrorLogBufferSizeBytes};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof log))};
  // From a copy kept for the process: lazy loading may read the image at a later launch.
  const std::string &kept = k.images.emplace_back(image);
  cudaLibrary_t library = nullptr;
  if (cudaError_t err =
          cudaLibraryLoadData(&library, kept.data(), options, values, 2, nullptr, nullptr, 0);
      err != cudaSuccess)
    fail("generated kernels", std::string("loading their PTX: ") + cudaGetErrorString(err) +
                                  (log[0] ? std::string(": ") + log : std::string()));
  k.modules.emplace(kept, library);
  return library;
}

} // namespace

extern "C" {

void *mgpuModuleLoadJIT(void *ptx, int /*optLevel: the driver's default*/) {
  const char *text = static_cast<const char *>(ptx);
  return load(std::string_view(text, std::strlen(text) + 1));
}

void *mgpuModuleLoad(void *image, size_t size) {
  return load(std::string_view(static_cast<const char *>(image), size));
}

void mgpuModuleUnload(void * /*module: kept for the process*/) {}

void *mgpuModuleGetFunction(void *module, const char *name) {
  Kernels &k = kernels();
  std::lock_guard<std::mutex> lock(k.mutex);
  auto library = static_cast<cudaLibrary_t>(module);
  auto key = std::make_pair(library, std::string(name));
  if (auto it = k.kernels.find(key); it != k.kernels.end())
    return it->second;
  cudaKernel_t kernel = nullptr;
  if (cudaError_t err = cudaLibraryGetKernel(&kernel, library, name); err != cudaSuccess)
    fail(name, std::string("not in its module: ") + cudaGetErrorString(err));
  k.kernels.emplace(key, kernel);
  k.names.emplace(kernel, name);
  return kernel;
}

// The default stream: ordered with the runtime's other GPU calls (cuBLASLt, the offloaded
// kernels), which use it too.
void *mgpuStreamCreate() { return nullptr; }

void mgpuStreamDestroy(void * /*stream*/) {}

// See the top of the file: the host waits in attn_rt_cuda_synchronize.
void mgpuStreamSynchronize(void * /*stream*/) {}

// attn-device-buffers' buffers (gpu.alloc, gpu.dealloc), which only the GPU touches: from the
// device's stream-ordered pool (attn/cuda/Device.h), on the one stream. A block freed after a
// kernel's last use is handed out again to work queued after the free, with no wait; after a
// program's first step its allocations are the pool's, as bufferAlloc's are its free lists'
// on the CPU. 256-byte aligned.
void *mgpuMemAlloc(uint64_t bytes, void * /*stream: the default*/, bool /*hostShared: never*/) {
  attn::cuda::Status status;
  void *p = attn::cuda::deviceAllocate(bytes, status);
  if (!p)
    fail("device memory", status.message());
  return p;
}

void mgpuMemFree(void *p, void * /*stream: the default*/) { attn::cuda::deviceFree(p); }

// attn-constants-to-buffers' copies of a program's constants (its host memory) into its
// buffers, queued on the stream.
void mgpuMemcpy(void *to, void *from, size_t bytes, void *stream) {
  if (cudaError_t err =
          cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream));
      err != cudaSuccess)
    fail("a constant's copy", cudaGetErrorString(err));
}

void attn_rt_cuda_synchronize(void) {
  if (cudaError_t err = cudaStreamSynchronize(nullptr); err != cudaSuccess) {
    Kernels &k = kernels();
    std::lock_guard<std::mutex> lock(k.mutex);
    fail(k.lastLaunched.empty() ? "the GPU" : k.lastLaunched,
         std::string("failed on the GPU (or a GPU call after it did): ") + cudaGetErrorString(err) +
             "; CUDA_LAUNCH_BLOCKING=1 stops at the failing kernel");
  }
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t sharedBytes,
                      void *stream, void **params, void ** /*extra*/, size_t /*paramsCount*/) {
  std::string name;
  {
    Kernels &k = kernels();
    std::lock_guard<std::mutex> lock(k.mutex);
    auto it = k.names.find(function);
    name = it == k.names.end() ? "a generated kernel" : it->second;
    k.lastLaunched = name;
  }
  const dim3 grid{unsigned(gridX), unsigned(gridY), unsigned(gridZ)};
  const dim3 block{unsigned(blockX), unsigned(blockY), unsigned(blockZ)};
  // A cudaKernel_t is launched as a function symbol (cudaLibraryGetKernel).
  if (cudaError_t err = cudaLaunchKernel(function, grid, block, params, size_t(sharedBytes),
                                         static_cast<cudaStream_t>(stream));
      err != cudaSuccess)
    fail(name, "launching " + std::to_string(gridX) + " x " + std::to_string(gridY) + " x " +
                   std::to_string(gridZ) + " blocks of " + std::to_string(blockX) +
                   " threads: " + cudaGetErrorString(err));
}

} // extern "C"
