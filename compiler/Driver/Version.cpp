#include "compiler/Driver/Version.h"

#include "compiler/Target/Object.h"

#include "attn/Cpu.h"
#include "attn/cpu/Matmul.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/TargetParser/Host.h"

namespace attn::driver {

std::string versionReport() {
  std::string host = llvm::sys::getHostCPUName().str(), cap = attn::cpuLevelCap();
  std::string report = "attnc " ATTN_VERSION ", LLVM " LLVM_VERSION_STRING "\n";
  report += attn::cpu::oneDnnDescription() + "\n";
  report += "CPU " + host + ": --cpu native compiles for " + target::cpuName("native");
  if (!cap.empty())
    report += " (ATTN_MAX_CPU caps it)";
  return report;
}

} // namespace attn::driver
