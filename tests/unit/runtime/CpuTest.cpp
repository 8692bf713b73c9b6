// attn/Cpu.h: the CPU features compiled code may require, read with CPUID (and XGETBV for the
// registers the OS saves), checked against the kernel's own account of them (/proc/cpuinfo).
#include "attn/Cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <set>
#include <sstream>
#include <string>

namespace {

std::set<std::string> kernelFlags() {
  std::set<std::string> flags;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;)
        flags.insert(w);
      break;
    }
  return flags;
}

// Every feature attn::cpuHas knows, as LLVM spells it and as Linux does.
const std::pair<const char *, const char *> kNames[] = {
    {"sse3", "pni"},
    {"pclmul", "pclmulqdq"},
    {"ssse3", "ssse3"},
    {"fma", "fma"},
    {"sse4.1", "sse4_1"},
    {"sse4.2", "sse4_2"},
    {"movbe", "movbe"},
    {"popcnt", "popcnt"},
    {"aes", "aes"},
    {"avx", "avx"},
    {"f16c", "f16c"},
    {"bmi", "bmi1"},
    {"avx2", "avx2"},
    {"bmi2", "bmi2"},
    {"avx512f", "avx512f"},
    {"avx512dq", "avx512dq"},
    {"avx512ifma", "avx512ifma"},
    {"avx512cd", "avx512cd"},
    {"avx512bw", "avx512bw"},
    {"avx512vl", "avx512vl"},
    {"avx512vbmi", "avx512vbmi"},
    {"avx512vbmi2", "avx512_vbmi2"},
    {"gfni", "gfni"},
    {"vaes", "vaes"},
    {"vpclmulqdq", "vpclmulqdq"},
    {"avx512vnni", "avx512_vnni"},
    {"avx512bitalg", "avx512_bitalg"},
    {"avx512vpopcntdq", "avx512_vpopcntdq"},
    {"amx-bf16", "amx_bf16"},
    {"avx512fp16", "avx512_fp16"},
    {"amx-tile", "amx_tile"},
    {"amx-int8", "amx_int8"},
    {"avxvnni", "avx_vnni"},
    {"avx512bf16", "avx512_bf16"},
    {"lzcnt", "abm"},
};

TEST(Cpu, FeaturesAgreeWithTheKernel) {
  std::set<std::string> flags = kernelFlags();
  if (flags.empty())
    GTEST_SKIP() << "no /proc/cpuinfo flags (not Linux on x86)";
  // What the kernel lists, CPUID must report. The converse need not hold: a hypervisor can hide
  // a flag from the guest kernel's /proc/cpuinfo that CPUID still reports (seen: lzcnt, whose
  // "abm" flag an AMD EPYC VM's kernel did not list).
  // Under ATTN_MAX_CPU (.ci/run's pass without AVX-512) only what the level allows.
  std::string cap = attn::cpuLevelCap();
  unsetenv("ATTN_MAX_CPU");
  for (auto [name, flag] : kNames) {
    std::optional<bool> has = attn::cpuHas(name);
    ASSERT_TRUE(has.has_value()) << name << " is not testable";
    if (flags.count(flag))
      EXPECT_TRUE(*has) << name << " (Linux: " << flag << ") is listed by the kernel";
  }
  if (!cap.empty())
    setenv("ATTN_MAX_CPU", cap.c_str(), 1);
}

// ATTN_MAX_CPU=x86-64-vN: no feature above level N, the others as the CPU has them; any other
// value is an error that names the variable.
TEST(Cpu, LevelCapHidesTheFeaturesAboveIt) {
  const char *was = std::getenv("ATTN_MAX_CPU");
  std::string saved = was ? was : "";
  unsetenv("ATTN_MAX_CPU");
  std::map<std::string, bool> uncapped;
  for (auto [name, flag] : kNames)
    uncapped[name] = attn::cpuHas(name).value_or(false);
  setenv("ATTN_MAX_CPU", "x86-64-v3", 1);
  EXPECT_EQ(attn::cpuLevelCap(), "x86-64-v3");
  for (const char *above : {"avx512f", "avx512bw", "avx512vnni", "avx512bf16", "amx-tile"})
    EXPECT_FALSE(attn::cpuHas(above).value_or(true)) << above;
  for (const char *within : {"avx2", "fma", "bmi2", "sse4.2"})
    EXPECT_EQ(attn::cpuHas(within).value_or(false), uncapped[within]) << within;
  setenv("ATTN_MAX_CPU", "x86-64-v4", 1);
  EXPECT_EQ(attn::cpuHas("avx512f").value_or(false), uncapped["avx512f"]);
  EXPECT_FALSE(attn::cpuHas("avx512bf16").value_or(true)); // no x86-64 level includes it
  setenv("ATTN_MAX_CPU", "znver3", 1);
  try {
    attn::cpuHas("avx2");
    ADD_FAILURE() << "ATTN_MAX_CPU=znver3 was accepted";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("ATTN_MAX_CPU is 'znver3'"), std::string::npos)
        << e.what();
  }
  if (saved.empty())
    unsetenv("ATTN_MAX_CPU");
  else
    setenv("ATTN_MAX_CPU", saved.c_str(), 1);
}

TEST(Cpu, MissingListsOnlyWhatIsKnownAndAbsent) {
  // Names no check exists for require nothing; empty items are skipped.
  EXPECT_TRUE(attn::missingCpuFeatures("").empty());
  EXPECT_TRUE(attn::missingCpuFeatures("made-up-feature,,cx16").empty());
  EXPECT_FALSE(attn::cpuHas("made-up-feature").has_value());
  std::string present, absent;
  for (auto [name, flag] : kNames)
    (attn::cpuHas(name).value_or(false) ? present : absent) += std::string(name) + ",";
  EXPECT_TRUE(attn::missingCpuFeatures(present).empty()) << present;
  std::vector<std::string> missing = attn::missingCpuFeatures(present + absent);
  EXPECT_EQ(missing.size(), (size_t)std::count(absent.begin(), absent.end(), ','));
}

} // namespace
