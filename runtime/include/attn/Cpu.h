// Which x86 instruction-set features this CPU (and its operating system) provides. A compiled
// program records the features it was compiled for (attn_program_info::cpu_features), and
// attn::Program refuses to run it where one is missing: a clear error instead of SIGILL.
#ifndef ATTN_CPU_H
#define ATTN_CPU_H

#include <optional>
#include <string>
#include <vector>

namespace attn {

/// The x86-64 level that the environment variable ATTN_MAX_CPU caps this CPU at: "x86-64-v2",
/// "x86-64-v3" (AVX2, FMA) or "x86-64-v4" (AVX-512 F/BW/CD/DQ/VL); "" when it is unset. Under a
/// cap attnc treats this CPU as one of that level: cpuHas reports no feature above it, and
/// code compiled for "native" is compiled for the level. With ONEDNN_MAX_CPU_ISA, oneDNN's own
/// cap, this emulates an older CPU (docs/precision.md). Throws std::runtime_error for any other
/// value.
std::string cpuLevelCap();

/// Whether this CPU has `feature` (LLVM's spelling: "avx2", "avx512f", "amx-tile"), with the
/// operating system's support for its registers and within ATTN_MAX_CPU's level; nullopt for a
/// feature this runtime cannot test (then nothing is required of it).
std::optional<bool> cpuHas(const std::string &feature);

/// The features of the comma-separated `features` that this CPU lacks.
std::vector<std::string> missingCpuFeatures(const std::string &features);

} // namespace attn

#endif // ATTN_CPU_H
