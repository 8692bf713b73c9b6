#!/usr/bin/env bash
# Deployment figures (issue 18), in one run at OMP_NUM_THREADS threads (default 1), of the
# dates Transformer:
#   - first compile: `attnc translate` and `attnc train` with an empty compile cache;
#   - `attnc translate` of one line with the cache warm;
#   - the standalone executable (`attnc compile --exe`): its size, its start-up (`info`) and
#     one translated line, and a `--lib` archive's size;
# and of dates-bahdanau compiled for data.max_len 64 (so that the dates, 15 characters on
# average, are a quarter of it): translation throughput of 10000 mixed-length lines (start-up included) with
# decode.buckets [16, 32] against the max-length program alone.
# Medians of 5 runs where a run takes under a second.
#
#   tests/bench/deploy.sh [BUILD_DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
attnc=$build/bin/attnc
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
spec=$src/models/dates-transformer.yaml
echo "2001-02-03" > line.txt

seconds() { # the wall time of "$@", in seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "print('%.3f' % ($t1 - $t0))"
}
median5() {
  local runs=()
  for _ in 1 2 3 4 5; do runs+=("$(seconds "$@")"); done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p
}
translate() { "$attnc" translate --ckpt run --cache-dir cache "$@" < line.txt; }

echo "deploy benchmark: dates-transformer, $OMP_NUM_THREADS thread(s), $(nproc --all) cores"
"$attnc" train "$spec" --steps 20 --out run --no-compile-cache > /dev/null
echo "first compile, attnc train (train step, no cache):   $(seconds "$attnc" train "$spec" --steps 1 --out run2 --cache-dir cold-train) s (one step included)"
echo "first compile, attnc translate (one line, no cache): $(seconds translate) s"
echo "attnc translate, one line, cache warm:              $(median5 translate) s"

echo "attnc compile --exe:                                 $(seconds "$attnc" compile "$spec" --ckpt run --exe -o dates --no-compile-cache) s"
echo "executable size:                                     $(du -k dates | cut -f1) KiB ($(ldd dates | grep -c '=>') shared libraries: $(ldd dates | awk '/=>/ {print $1}' | tr '\n' ' '))"
echo "executable start-up (info):                          $(median5 ./dates info) s"
run_exe() { ./dates translate < line.txt; }
echo "executable, one line translated:                     $(median5 run_exe) s"
"$attnc" compile "$spec" --ckpt run --lib -o libdates.a --no-compile-cache > /dev/null
echo "--lib archive size:                                  $(du -k libdates.a | cut -f1) KiB"

# Length buckets. Trained long enough to end its outputs (an untrained decoder runs to the
# maximum length whatever the input).
long=(--set data.max_len=64)
"$attnc" train "$src/models/dates-bahdanau.yaml" "${long[@]}" --steps 300 --out brun > /dev/null
# The machine's GEMM peak in this run, and the max-length program's greedy decoding (one
# compiled batch, all 66 steps: attnc bench decodes freshly initialised parameters) as a
# fraction of it.
"$attnc" bench "$src/models/dates-bahdanau.yaml" "${long[@]}" --steps 1 --warmup 0 --cache-dir cache |
  grep -E "^calibration|^greedy decoding|FLOPs per batch" | sed 's/^/buckets, attnc bench: /'
"$attnc" run "$src/models/dates-bahdanau.yaml" "${long[@]}" --ckpt brun --count 500 |
  sed -n 's/^  \(.*\)  ->  .*$/\1/p' > five-hundred.txt
for _ in $(seq 20); do cat five-hundred.txt; done > mixed.txt
lines=$(wc -l < mixed.txt)
mean=$(awk '{ n += length($0) } END { printf "%.1f", n / NR }' mixed.txt)
plain() { "$attnc" translate --ckpt brun --cache-dir cache < mixed.txt; }
bucketed() { "$attnc" translate --ckpt brun --cache-dir cache --set 'decode.buckets=[16, 32]' < mixed.txt; }
plain > /dev/null; bucketed > /dev/null # compiled once, into the cache
cmp -s <(plain) <(bucketed) && same="same outputs" || same="OUTPUTS DIFFER"
tp=$(seconds plain) tb=$(seconds bucketed)
python3 -c "print('buckets: %d lines (mean %s of at most 64 characters): one program %.0f sentences/s, buckets [16, 32] %.0f sentences/s: %.2fx (%s)' % ($lines, '$mean', $lines / $tp, $lines / $tb, $tp / $tb, '$same'))"
