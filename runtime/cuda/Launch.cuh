// Host side of the CUDA runtime's launches, shared by its .cu files: shared memory past the
// default 48 KB allowed per kernel, then the launch, then its error as a Status naming it.
#ifndef ATTN_RUNTIME_CUDA_LAUNCH_CUH
#define ATTN_RUNTIME_CUDA_LAUNCH_CUH

#include "attn/cuda/Device.h"

#include <cuda_runtime.h>

#include <string>
#include <utility>

namespace attn::cuda {

// The last launch's error, naming `what` was launched.
inline Status launched(const char *what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess)
    return {};
  return Status::error(std::string("attn::cuda: launching ") + what + ": " +
                       cudaGetErrorString(err));
}

// kernel<<<grid, block, shared, stream>>>(args...), with `shared` bytes of dynamic shared
// memory allowed first when past 48 KB (the attribute is the kernel's, set per launch: cheap
// next to the kernels this is used for).
template <typename... Params, typename... Args>
Status launch(const char *what, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared,
              cudaStream_t stream, Args &&...args) {
  if (shared > 48 * 1024) {
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared));
    if (err != cudaSuccess)
      return Status::error(std::string("attn::cuda: ") + what + " needs " + std::to_string(shared) +
                           " bytes of shared memory per block: " + cudaGetErrorString(err));
  }
  kernel<<<grid, block, shared, stream>>>(std::forward<Args>(args)...);
  return launched(what);
}

} // namespace attn::cuda

#endif // ATTN_RUNTIME_CUDA_LAUNCH_CUH
