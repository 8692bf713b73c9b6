#!/usr/bin/env bash
# Builds attnc and runs every test (lit + GoogleTest + end-to-end) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j2
