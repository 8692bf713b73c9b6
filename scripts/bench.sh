#!/usr/bin/env bash
# Runs every benchmark of tests/bench at one and at two threads and keeps their outputs in
# bench-results/<benchmark>-<threads>t.txt, and their rows as one markdown table in
# bench-results/table.md (docs/benchmarks.md's current table is that file, pasted). PyTorch
# comes from Debian (python3-torch, with OpenBLAS), and tcmalloc for its second run
# (libtcmalloc-minimal4): installed here when missing. Run it on an otherwise idle machine:
# two-thread figures collapse when anything else is busy.
#
#   scripts/bench.sh                       # all of them
#   scripts/bench.sh transformer           # the ones whose name contains "transformer"
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh python3-torch python3-numpy libopenblas0-openmp libtcmalloc-minimal4
scripts/build.sh
mkdir -p bench-results
for b in matmul-softmax rnn-sine-train-step recurrent-train-step attention-train-step tagger-train-step \
  transformer attention-kernels convs2s; do
  [[ "$b" == *"${1:-}"* ]] || continue
  for t in 1 2; do
    out="bench-results/$b-${t}t.txt"
    echo "bench: $b, $t thread(s) -> $out"
    OMP_NUM_THREADS=$t "build/bin/attn-bench-$b" >"$out" 2>&1 || echo "bench: $b exited with $? (see $out)"
  done
done
scripts/bench-table.py bench-results >bench-results/table.md &&
  echo "bench: the table -> bench-results/table.md"
# Deployment: executables, compile times, length buckets (one thread).
if [[ "deploy" == *"${1:-}"* ]]; then
  echo "bench: deploy -> bench-results/deploy-1t.txt"
  OMP_NUM_THREADS=1 tests/bench/deploy.sh >bench-results/deploy-1t.txt 2>&1 ||
    echo "bench: deploy exited with $? (see bench-results/deploy-1t.txt)"
fi
# Data parallelism compares thread and rank counts itself (1 rank x N threads, N ranks x 1).
if [[ "data-parallel" == *"${1:-}"* ]]; then
  echo "bench: data-parallel -> bench-results/data-parallel.txt"
  tests/bench/data-parallel.sh >bench-results/data-parallel.txt 2>&1 ||
    echo "bench: data-parallel exited with $? (see bench-results/data-parallel.txt)"
fi
