#!/usr/bin/env bash
# The tests whose code paths depend on the CPU (ctest label cpu-features: the bf16 and int8
# kernels and their skips, the flash and recurrent kernels, a train step of each model
# through the JIT, the executables against the JIT, the precision gates), run again as on a
# CPU without AVX-512 (an AMD Zen 3): oneDNN capped at AVX2 (ONEDNN_MAX_CPU_ISA) and attnc's
# own CPU checks and code generation at x86-64-v3 (ATTN_MAX_CPU). .ci/run runs it after
# scripts/test.sh, so that the path without AVX-512 is tested on every submission whatever
# CPU CI has. On a CPU without AVX-512 it repeats what scripts/test.sh ran.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
export ONEDNN_MAX_CPU_ISA=AVX2 ATTN_MAX_CPU=x86-64-v3
version=$(build/bin/attnc --version)
echo "$version"
# Both caps must hold, or this pass tests the AVX-512 path a second time.
grep -q "effective ISA AVX2$" <<<"$version" ||
  { echo "test-without-avx512: oneDNN does not report AVX2 as its effective ISA" >&2; exit 1; }
grep -q "native compiles for x86-64-v3 " <<<"$version" ||
  { echo "test-without-avx512: attnc does not compile --cpu native for x86-64-v3" >&2; exit 1; }
cd build
ctest -L cpu-features --output-on-failure -j2
