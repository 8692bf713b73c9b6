// The CUDA device as the runtime sees it: whether one is usable, errors as values, and device
// memory owned by RAII. Built only where the CUDA toolkit is found (runtime/cuda).
//
// The driver (libcuda.so.1) is never linked: the CUDA runtime, linked statically, opens it with
// dlopen at the first call. A binary built here therefore starts on any machine, and on one with
// no driver or no GPU, deviceUnavailable() says so instead of the loader refusing the binary.
#ifndef ATTN_CUDA_DEVICE_H
#define ATTN_CUDA_DEVICE_H

#include <cstddef>
#include <string>
#include <utility>

namespace attn::cuda {

// Empty where a CUDA device can be used; otherwise why not ("no CUDA driver", "no device").
std::string deviceUnavailable();

// The device's name and compute capability ("NVIDIA H200, sm_90"), for logs and benchmarks.
std::string deviceDescription();

// An error as a value: the kernels' entry points return one instead of throwing, so that a
// caller across a C boundary (the C API, compiled code) can turn it into a code and a message.
class Status {
public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }
  bool ok() const { return message_.empty(); }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return message_; }

private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::string message_;
};

// `bytes` of device memory from CUDA's stream-ordered pool (deviceAllocate below), freed with
// the object (deviceFree). Allocation failure leaves it empty and status() says why (out of
// memory names the size).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *data() const { return data_; }
  template <typename T> T *as() const { return static_cast<T *>(data_); }
  size_t bytes() const { return bytes_; }
  const Status &status() const { return status_; }

  Status upload(const void *host, size_t bytes);
  Status download(void *host, size_t bytes) const;

private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
  Status status_;
};

// Device memory from the device's stream-ordered pool: the allocation and the free are queued
// on the default stream (cudaMallocAsync, cudaFreeAsync), where the runtime queues all its
// work. A block is for the work queued there after its allocation, and goes back to the pool
// for the work queued after its free, without the host waiting (cudaMalloc and cudaFree wait
// for the whole device). The pool keeps what is freed (its release threshold is raised at the
// first allocation), so a training loop's calls, which ask the same sizes every step, reuse
// it. Work on another stream must wait for the default stream first. Null, and why in
// `status`, when the device has no `bytes` left; an empty block is a byte (a distinct address).
void *deviceAllocate(size_t bytes, Status &status);
void deviceFree(void *p);

// Waits for the device and reports the first error of any kernel launched before.
Status synchronize();

// Whether the GPU addresses `p`: device or managed memory (false for host memory, and for
// null).
bool deviceAddressable(const void *p);

} // namespace attn::cuda

#endif // ATTN_CUDA_DEVICE_H
