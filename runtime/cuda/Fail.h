// How the CUDA runtime's entry points that compiled code calls report a failure (offload.cu,
// program.cpp, launch.cpp): compiled code cannot take an error, so they print
// "attn runtime: <what>: <why>" and abort, as the CPU kernels do (runtime/cpu/Memref.h).
#ifndef ATTN_CUDA_FAIL_H
#define ATTN_CUDA_FAIL_H

#include <cstdio>
#include <cstdlib>
#include <string>

namespace attn::cuda::internal {

[[noreturn]] inline void fail(const std::string &what, const std::string &why) {
  std::fprintf(stderr, "attn runtime: %s: %s\n", what.c_str(), why.c_str());
  std::fflush(stderr);
  std::abort();
}

} // namespace attn::cuda::internal

#endif // ATTN_CUDA_FAIL_H
