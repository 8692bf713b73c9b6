// The CUDA device through the CUDA runtime (linked statically; it loads libcuda.so.1 itself).
#include "attn/cuda/Device.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace attn::cuda {

std::string deviceUnavailable() {
  // The runtime would say "driver version is insufficient" where there is no driver at all.
  if (void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))
    dlclose(driver);
  else
    return std::string("no CUDA driver (") + dlerror() + ")";
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice ||
      err == cudaErrorInitializationError)
    return std::string("no usable CUDA driver or device (") + cudaGetErrorString(err) + ")";
  if (err != cudaSuccess)
    return std::string("CUDA is not usable: ") + cudaGetErrorString(err);
  if (count == 0)
    return "no CUDA device";
  // The kernels are sm_90 machine code with no PTX (runtime/cuda/CMakeLists.txt): another
  // architecture would fail at the first launch with "no kernel image".
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
      major != 9)
    return "attnc's GPU kernels are built for sm_90 (Hopper), and this GPU is sm_" +
           std::to_string(major) + std::to_string(minor);
  // Device memory comes from the stream-ordered pool (deviceAllocate).
  int pools = 0;
  if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess ||
      !pools)
    return "the CUDA device (or its driver) has no stream-ordered memory pools";
  return {};
}

std::string deviceDescription() {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return "no CUDA device";
  return std::string(prop.name) + ", sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs";
}

void *deviceAllocate(size_t bytes, Status &status) {
  static const bool kept = [] {
    cudaMemPool_t pool = nullptr;
    int device = 0;
    uint64_t keep = UINT64_MAX;
    bool set = cudaGetDevice(&device) == cudaSuccess &&
               cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
               cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess;
    if (!set) // not left for the next cudaGetLastError(), which would blame a kernel
      (void)cudaGetLastError();
    return set;
  }();
  (void)kept; // without it the pool gives memory back at each wait: slower, not wrong
  void *p = nullptr;
  if (cudaError_t err = cudaMallocAsync(&p, bytes ? bytes : 1, cudaStream_t(nullptr));
      err != cudaSuccess) {
    (void)cudaGetLastError();
    status = Status::error("attn::cuda: allocating " + std::to_string(bytes) +
                           " bytes of device memory: " + cudaGetErrorString(err));
    return nullptr;
  }
  return p;
}

void deviceFree(void *p) {
  // (A failure, at the process's exit once CUDA has shut down, is left for no one.)
  if (p && cudaFreeAsync(p, cudaStream_t(nullptr)) != cudaSuccess)
    (void)cudaGetLastError();
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0)
    return;
  data_ = deviceAllocate(bytes, status_);
  if (!data_)
    bytes_ = 0;
}

DeviceBuffer::~DeviceBuffer() { deviceFree(data_); }

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    deviceFree(data_);
    data_ = other.data_;
    bytes_ = other.bytes_;
    status_ = std::move(other.status_);
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

static Status copy(void *dst, const void *src, size_t bytes, size_t capacity, cudaMemcpyKind kind,
                   const char *what) {
  if (bytes > capacity)
    return Status::error(std::string("attn::cuda: ") + what + " of " + std::to_string(bytes) +
                         " bytes into/out of a buffer of " + std::to_string(capacity));
  cudaError_t err = cudaMemcpy(dst, src, bytes, kind);
  if (err != cudaSuccess)
    return Status::error(std::string("attn::cuda: ") + what + ": " + cudaGetErrorString(err));
  return {};
}

Status DeviceBuffer::upload(const void *host, size_t bytes) {
  return copy(data_, host, bytes, bytes_, cudaMemcpyHostToDevice, "upload");
}

Status DeviceBuffer::download(void *host, size_t bytes) const {
  return copy(host, data_, bytes, bytes_, cudaMemcpyDeviceToHost, "download");
}

Status synchronize() {
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    return Status::error(std::string("attn::cuda: a kernel failed: ") + cudaGetErrorString(err));
  return {};
}

bool deviceAddressable(const void *p) {
  cudaPointerAttributes a{};
  if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeManaged || a.type == cudaMemoryTypeDevice;
}

} // namespace attn::cuda
