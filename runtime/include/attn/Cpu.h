// Which x86 instruction-set features this CPU (and its operating system) provides. A compiled
// program records the features it was compiled for (attn_program_info::cpu_features), and
// attn::Program refuses to run it where one is missing: a clear error instead of SIGILL.
#ifndef ATTN_CPU_H
#define ATTN_CPU_H

#include <optional>
#include <string>
#include <vector>

namespace attn {

/// Whether this CPU has `feature` (LLVM's spelling: "avx2", "avx512f", "amx-tile"), with the
/// operating system's support for its registers; nullopt for a feature this runtime cannot
/// test (then nothing is required of it).
std::optional<bool> cpuHas(const std::string &feature);

/// The features of the comma-separated `features` that this CPU lacks.
std::vector<std::string> missingCpuFeatures(const std::string &features);

} // namespace attn

#endif // ATTN_CPU_H
