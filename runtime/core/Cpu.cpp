#include "attn/Cpu.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace attn {
namespace {

#if defined(__x86_64__) || defined(__i386__)
enum Reg { EAX, EBX, ECX, EDX };
enum State : uint64_t {
  kNone = 0,
  kAvxState = 0x6,     // XCR0: SSE and AVX registers
  kAvx512State = 0xe6, // + opmask and the upper ZMM registers
  kAmxState = 0x60000, // XTILECFG, XTILEDATA
};

// CPUID leaf, subleaf, register, bit; the register state the OS must save (XCR0); and the
// lowest x86-64 level (psABI: v2, v3, v4) that includes the feature, 5 for none of them.
struct Feature {
  const char *name;
  unsigned leaf, subleaf;
  Reg reg;
  int bit;
  uint64_t state;
  int level;
};

// The features LLVM's x86 back end enables for a CPU that change what it may emit.
constexpr Feature kFeatures[] = {
    {"sse3", 1, 0, ECX, 0, kNone, 2},
    {"pclmul", 1, 0, ECX, 1, kNone, 5},
    {"ssse3", 1, 0, ECX, 9, kNone, 2},
    {"fma", 1, 0, ECX, 12, kAvxState, 3},
    {"sse4.1", 1, 0, ECX, 19, kNone, 2},
    {"sse4.2", 1, 0, ECX, 20, kNone, 2},
    {"movbe", 1, 0, ECX, 22, kNone, 3},
    {"popcnt", 1, 0, ECX, 23, kNone, 2},
    {"aes", 1, 0, ECX, 25, kNone, 5},
    {"avx", 1, 0, ECX, 28, kAvxState, 3},
    {"f16c", 1, 0, ECX, 29, kAvxState, 3},
    {"bmi", 7, 0, EBX, 3, kNone, 3},
    {"avx2", 7, 0, EBX, 5, kAvxState, 3},
    {"bmi2", 7, 0, EBX, 8, kNone, 3},
    {"avx512f", 7, 0, EBX, 16, kAvx512State, 4},
    {"avx512dq", 7, 0, EBX, 17, kAvx512State, 4},
    {"avx512ifma", 7, 0, EBX, 21, kAvx512State, 5},
    {"avx512cd", 7, 0, EBX, 28, kAvx512State, 4},
    {"avx512bw", 7, 0, EBX, 30, kAvx512State, 4},
    {"avx512vl", 7, 0, EBX, 31, kAvx512State, 4},
    {"avx512vbmi", 7, 0, ECX, 1, kAvx512State, 5},
    {"avx512vbmi2", 7, 0, ECX, 6, kAvx512State, 5},
    {"gfni", 7, 0, ECX, 8, kNone, 5},
    {"vaes", 7, 0, ECX, 9, kAvxState, 5},
    {"vpclmulqdq", 7, 0, ECX, 10, kAvxState, 5},
    {"avx512vnni", 7, 0, ECX, 11, kAvx512State, 5},
    {"avx512bitalg", 7, 0, ECX, 12, kAvx512State, 5},
    {"avx512vpopcntdq", 7, 0, ECX, 14, kAvx512State, 5},
    {"amx-bf16", 7, 0, EDX, 22, kAmxState, 5},
    {"avx512fp16", 7, 0, EDX, 23, kAvx512State, 5},
    {"amx-tile", 7, 0, EDX, 24, kAmxState, 5},
    {"amx-int8", 7, 0, EDX, 25, kAmxState, 5},
    {"avxvnni", 7, 1, EAX, 4, kAvxState, 5},
    {"avx512bf16", 7, 1, EAX, 5, kAvx512State, 5},
    {"lzcnt", 0x80000001, 0, ECX, 5, kNone, 3},
};

bool has(const Feature &f) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f.leaf, f.subleaf, &r[EAX], &r[EBX], &r[ECX], &r[EDX]))
    return false;
  if (!((r[f.reg] >> f.bit) & 1))
    return false;
  if (f.state == kNone)
    return true;
  // The OS saves the registers only if it enabled them in XCR0 (read with xgetbv, allowed
  // when CPUID.1:ECX.OSXSAVE is set).
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1))
    return false;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  uint64_t xcr0 = ((uint64_t)hi << 32) | lo;
  return (xcr0 & f.state) == f.state;
}
#endif

} // namespace

std::string cpuLevelCap() {
  const char *cap = std::getenv("ATTN_MAX_CPU");
  if (!cap || !*cap)
    return "";
  for (const char *level : {"x86-64-v2", "x86-64-v3", "x86-64-v4"})
    if (std::strcmp(cap, level) == 0)
      return cap;
  throw std::runtime_error(std::string("ATTN_MAX_CPU is '") + cap +
                           "': expected x86-64-v2, x86-64-v3 or x86-64-v4 (or unset)");
}

std::optional<bool> cpuHas(const std::string &feature) {
#if defined(__x86_64__) || defined(__i386__)
  std::string cap = cpuLevelCap();
  int maxLevel = cap.empty() ? 5 : cap.back() - '0';
  for (const Feature &f : kFeatures)
    if (feature == f.name)
      return f.level <= maxLevel && has(f);
#else
  (void)feature;
#endif
  return std::nullopt;
}

std::vector<std::string> missingCpuFeatures(const std::string &features) {
  std::vector<std::string> missing;
  std::stringstream list(features);
  for (std::string f; std::getline(list, f, ',');)
    if (!f.empty() && cpuHas(f) == false)
      missing.push_back(f);
  return missing;
}

} // namespace attn
