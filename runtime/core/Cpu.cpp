#include "attn/Cpu.h"

#include <cstdint>
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

// CPUID leaf, subleaf, register, bit; and the register state the OS must save (XCR0).
struct Feature {
  const char *name;
  unsigned leaf, subleaf;
  Reg reg;
  int bit;
  uint64_t state;
};

// The features LLVM's x86 back end enables for a CPU that change what it may emit.
constexpr Feature kFeatures[] = {
    {"sse3", 1, 0, ECX, 0, kNone},
    {"pclmul", 1, 0, ECX, 1, kNone},
    {"ssse3", 1, 0, ECX, 9, kNone},
    {"fma", 1, 0, ECX, 12, kAvxState},
    {"sse4.1", 1, 0, ECX, 19, kNone},
    {"sse4.2", 1, 0, ECX, 20, kNone},
    {"movbe", 1, 0, ECX, 22, kNone},
    {"popcnt", 1, 0, ECX, 23, kNone},
    {"aes", 1, 0, ECX, 25, kNone},
    {"avx", 1, 0, ECX, 28, kAvxState},
    {"f16c", 1, 0, ECX, 29, kAvxState},
    {"bmi", 7, 0, EBX, 3, kNone},
    {"avx2", 7, 0, EBX, 5, kAvxState},
    {"bmi2", 7, 0, EBX, 8, kNone},
    {"avx512f", 7, 0, EBX, 16, kAvx512State},
    {"avx512dq", 7, 0, EBX, 17, kAvx512State},
    {"avx512ifma", 7, 0, EBX, 21, kAvx512State},
    {"avx512cd", 7, 0, EBX, 28, kAvx512State},
    {"avx512bw", 7, 0, EBX, 30, kAvx512State},
    {"avx512vl", 7, 0, EBX, 31, kAvx512State},
    {"avx512vbmi", 7, 0, ECX, 1, kAvx512State},
    {"avx512vbmi2", 7, 0, ECX, 6, kAvx512State},
    {"gfni", 7, 0, ECX, 8, kNone},
    {"vaes", 7, 0, ECX, 9, kAvxState},
    {"vpclmulqdq", 7, 0, ECX, 10, kAvxState},
    {"avx512vnni", 7, 0, ECX, 11, kAvx512State},
    {"avx512bitalg", 7, 0, ECX, 12, kAvx512State},
    {"avx512vpopcntdq", 7, 0, ECX, 14, kAvx512State},
    {"amx-bf16", 7, 0, EDX, 22, kAmxState},
    {"avx512fp16", 7, 0, EDX, 23, kAvx512State},
    {"amx-tile", 7, 0, EDX, 24, kAmxState},
    {"amx-int8", 7, 0, EDX, 25, kAmxState},
    {"avxvnni", 7, 1, EAX, 4, kAvxState},
    {"avx512bf16", 7, 1, EAX, 5, kAvx512State},
    {"lzcnt", 0x80000001, 0, ECX, 5, kNone},
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

std::optional<bool> cpuHas(const std::string &feature) {
#if defined(__x86_64__) || defined(__i386__)
  for (const Feature &f : kFeatures)
    if (feature == f.name)
      return has(f);
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
