// What the GPU test programs share (flash-attention-test.cpp, train-kernels-test.cpp,
// matmul-test.cpp): plain programs, since the GPU machine has no GoogleTest. Each failure is
// printed and counted; device memory comes uploaded or poisoned with NaN, so that an element
// a kernel forgets to write shows. main() ends with finish(): exit 0 pass, 1 fail; 77 (ctest's
// SKIP_RETURN_CODE) comes from skipWithoutDevice() when there is no GPU.
#ifndef ATTN_TESTS_CUDA_GPUTEST_H
#define ATTN_TESTS_CUDA_GPUTEST_H

#include "attn/cuda/Device.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>
#include <vector>

namespace attn::cuda::testing {

inline int &failureCount() {
  static int failures = 0;
  return failures;
}

inline void fail(const std::string &what) {
  std::printf("    FAIL %s\n", what.c_str());
  ++failureCount();
}

// Whether `st` is ok; a failure naming `what` otherwise.
inline bool check(const Status &st, const std::string &what) {
  if (!st.ok())
    fail(what + ": " + st.message());
  return st.ok();
}

// Prints why and returns true (the caller returns 77) where no GPU can be used; else prints
// the device.
inline bool skipWithoutDevice() {
  if (std::string why = deviceUnavailable(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return true;
  }
  std::printf("device: %s\n", deviceDescription().c_str());
  return false;
}

inline int finish() {
  std::printf("%s (%d failures)\n", failureCount() ? "FAILED" : "passed", failureCount());
  return failureCount() ? 1 : 0;
}

inline DeviceBuffer uploaded(const void *host, size_t bytes) {
  DeviceBuffer buf(bytes);
  if (check(buf.status(), "allocate"))
    check(buf.upload(host, bytes), "upload");
  return buf;
}

template <typename T> DeviceBuffer uploaded(const std::vector<T> &host) {
  return uploaded(host.data(), host.size() * sizeof(T));
}

// `bytes` of device memory, every byte 0xff: NaN in bf16, f16 and f32.
inline DeviceBuffer poisoned(size_t bytes) {
  DeviceBuffer buf(bytes);
  if (check(buf.status(), "allocate"))
    check(cudaMemset(buf.data(), 0xff, bytes) == cudaSuccess ? Status()
                                                             : Status::error("cudaMemset failed"),
          "poison");
  return buf;
}

inline DeviceBuffer poisonedFloats(size_t count) { return poisoned(count * sizeof(float)); }

template <typename T> std::vector<T> downloaded(const DeviceBuffer &buf, size_t count) {
  std::vector<T> host(count);
  check(buf.download(host.data(), count * sizeof(T)), "download");
  return host;
}

} // namespace attn::cuda::testing

#endif // ATTN_TESTS_CUDA_GPUTEST_H
