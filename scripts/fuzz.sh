#!/usr/bin/env bash
# Builds attnc's libFuzzer harnesses (tests/fuzz: the YAML frontend, the safetensors reader,
# the data-file readers) with clang-14, ASan and UBSan in build-fuzz/, and runs each for a
# while, at most 1 GiB of memory and 10 s per input.
#
#   scripts/fuzz.sh                 # every harness for 60 s
#   scripts/fuzz.sh spec 600        # one harness (spec | safetensors | data | all) for 600 s
#
# Seeds: tests/fuzz/corpus/<harness> (and models/ for spec, tests/reference/*.safetensors for
# safetensors); what a run learns stays in build-fuzz/corpus-<harness>. A crash leaves its
# input in build-fuzz/crash-<harness>-*: add it to tests/fuzz/corpus/<harness> (the
# regression tests replay that folder) once it is fixed. Exits non-zero when a harness fails.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
seconds=${2:-60}
case "$which" in
  all) targets=(spec safetensors data) ;;
  spec | safetensors | data) targets=("$which") ;;
  *) echo "fuzz: unknown harness '$which' (spec, safetensors, data, all)" >&2; exit 2 ;;
esac

scripts/setup-deps.sh clang-14 libclang-rt-14-dev

if [ ! -f build-fuzz/build.ninja ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
fi
cmake --build build-fuzz -j2 --target "${targets[@]/#/attn-fuzz-}"

status=0
for t in "${targets[@]}"; do
  work="build-fuzz/corpus-$t"
  mkdir -p "$work"
  seeds=("tests/fuzz/corpus/$t")
  case "$t" in
    spec) seeds+=(models) ;;
    safetensors) cp -n tests/reference/*.safetensors "$work/" ;;
  esac
  [ -d "tests/fuzz/corpus/$t" ] || seeds=("${seeds[@]:1}")
  echo "fuzz: $t for $seconds s"
  # allow_user_poisoning=0: LLVM's BumpPtrAllocator, inlined from its headers into the
  # instrumented harness, poisons a new slab that uninstrumented libMLIR then allocates
  # attribute storage from without unpoisoning it; reading that storage was reported as a
  # use-after-poison (a false positive: ASan cannot see libMLIR's allocations either way).
  if ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 "build-fuzz/bin/attn-fuzz-$t" -max_total_time="$seconds" \
    -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 -artifact_prefix="build-fuzz/crash-$t-" \
    "$work" "${seeds[@]}" >"build-fuzz/fuzz-$t.log" 2>&1; then
    runs=$(awk '/stat::number_of_executed_units/ {print $2}' "build-fuzz/fuzz-$t.log")
    echo "fuzz: $t: no finding in ${runs:-?} executions"
  else
    status=1
    echo "fuzz: $t FAILED; the end of build-fuzz/fuzz-$t.log:"
    tail -n 40 "build-fuzz/fuzz-$t.log"
  fi
done
exit $status
