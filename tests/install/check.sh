#!/bin/sh
# Installs the build into a temporary prefix and builds two programs outside the tree against
# that copy only: one with CMake (find_package(attnc CONFIG)), one with pkg-config (attnc.pc).
# Both run the rnn-sine model compiled ahead of time (OBJECT_DIR: rnn_sine.o, rnn_sine.h).
# Usage: check.sh BUILD_DIR SOURCE_DIR OBJECT_DIR
set -eu
build=$1 src=$2 objects=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/attn/abi.h"
test ! -e "$prefix/include/attn/plot" # the plot library is not part of the runtime

cmake -S "$src/tests/install/consumer" -B "$tmp/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DMODEL_DIR="$objects" >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/cmake" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
mkdir "$tmp/run1" "$tmp/run2"
"$tmp/cmake/consumer" "$tmp/run1"

flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs attnc)
# shellcheck disable=SC2086 # the flags are words
g++ -std=c++17 -O1 -I"$objects" "$src/tests/install/consumer/main.cpp" "$objects/rnn_sine.o" \
  $flags -o "$tmp/pkg-config-consumer"
"$tmp/pkg-config-consumer" "$tmp/run2"
# With SentencePiece subwords (attnc-subwords.pc): the same program links them too.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs attnc-subwords)
# shellcheck disable=SC2086 # the flags are words
g++ -std=c++17 -O1 -I"$objects" "$src/tests/install/consumer/main.cpp" "$objects/rnn_sine.o" \
  $flags -o "$tmp/pkg-config-subwords"
ldd "$tmp/pkg-config-subwords" | grep -q libsentencepiece

# Nothing the programs link comes from the build tree or MLIR.
for exe in "$tmp/cmake/consumer" "$tmp/pkg-config-consumer"; do
  ! ldd "$exe" | grep -E 'libMLIR|libLLVM'
done
"$prefix/bin/attnc" --help >/dev/null
# The installed attnc links executables against the installed runtime, not this build's
# (CXX logs the link line).
printf '#!/bin/sh\necho "$@" >> "%s"\nexec c++ "$@"\n' "$tmp/link.log" > "$tmp/cxx"
chmod +x "$tmp/cxx"
CXX=$tmp/cxx "$prefix/bin/attnc" compile "$src/models/rnn-sine.yaml" --exe -o "$tmp/rnn-sine" \
  --no-compile-cache >/dev/null
grep -q "$prefix/lib/libAttnRuntimeExe.a" "$tmp/link.log"
! grep -q "$build" "$tmp/link.log"
"$tmp/rnn-sine" run --count 2 | grep -q "rnn-sine: forward on 2 examples"
echo "install check: ok"
