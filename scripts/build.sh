#!/usr/bin/env bash
# Configures (once) and builds attnc into build/ with Ninja, two jobs (the machine's cores):
# every target, or only the targets named as arguments (scripts/demo.sh: attnc).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build -j2 ${1:+--target "$@"}
