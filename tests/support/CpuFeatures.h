// Tests of kernels and programs that need a CPU feature (bf16 products: AVX512_BF16; int8:
// AVX512_VNNI) skip where it is missing, asked as attnc asks before it compiles such a program
// (attn::cpuHas, which honours ATTN_MAX_CPU: .ci/run's emulated pass without AVX-512).
#pragma once

#include "attn/Cpu.h"

#include <gtest/gtest.h>

#define ATTN_SKIP_WITHOUT_CPU(feature, isa)                                                     \
  do {                                                                                           \
    if (!::attn::cpuHas(feature).value_or(false))                                               \
      GTEST_SKIP() << "this CPU has no " isa " instructions (" feature ")";                     \
  } while (0)

#define ATTN_SKIP_WITHOUT_BF16() ATTN_SKIP_WITHOUT_CPU("avx512bf16", "AVX512_BF16")
#define ATTN_SKIP_WITHOUT_VNNI() ATTN_SKIP_WITHOUT_CPU("avx512vnni", "AVX512_VNNI")
