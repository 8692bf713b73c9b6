// What `attnc --version` prints.
#pragma once

#include <string>

namespace attn::driver {

/// attnc's and LLVM's versions; oneDNN's, with the instruction set its kernels dispatch to
/// here (after ONEDNN_MAX_CPU_ISA's cap); and the CPU that `--cpu native` code is compiled for
/// (after ATTN_MAX_CPU's): one line each. .ci/run's pass without AVX-512 reads it.
std::string versionReport();

} // namespace attn::driver
