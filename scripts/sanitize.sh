#!/usr/bin/env bash
# Builds attnc with AddressSanitizer and UndefinedBehaviorSanitizer (gcc) in build-asan/ and
# runs the unit, lit and conformance tests under them (the end-to-end tests train real models
# and take too long instrumented). Any report fails the run.
#
#   scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
# UBSan's vptr check is off: the compiler side is built without RTTI (as LLVM is) and the
# runtime with it, so a template both instantiate (std::shared_ptr's control block of a
# oneDNN handle) can end up with a vtable that has no type info, which the check reports as
# an "invalid vptr" although the object is sound.
flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
unit=(attn-dialect-tests attn-frontend-yaml-tests attn-runtime-tests attn-train-tests
      attn-checkpoint-tests attn-gradcheck-tests attn-recurrent-tests)
cmake --build build-asan -j2 --target "${unit[@]}" attnc attn-opt attn-docs-generated
# Leaks are not errors here: MLIR's and oneDNN's process-lifetime caches are never freed.
# allow_user_poisoning=0: see scripts/fuzz.sh (LLVM's header-inlined allocator poisons slabs
# that uninstrumented libMLIR allocates from).
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allow_user_poisoning=0 UBSAN_OPTIONS=print_stacktrace=1
export OMP_NUM_THREADS=1
cd build-asan
status=0
for t in "${unit[@]}"; do
  if ./bin/"$t" --gtest_brief=1 >"$t.log" 2>&1; then
    echo "sanitize: $t passed"
  else
    status=1
    echo "sanitize: $t FAILED; the end of build-asan/$t.log:"
    tail -n 40 "$t.log"
  fi
done
# runtime-api.test links a program against the runtime's libraries without the sanitizers'
# runtime, which cannot work in this build.
if LIT_FILTER_OUT=runtime-api ctest -R '^lit$' --output-on-failure >lit.log 2>&1; then
  echo "sanitize: lit passed"
else
  status=1
  echo "sanitize: lit FAILED; see build-asan/lit.log"
  tail -n 60 lit.log
fi
exit $status
