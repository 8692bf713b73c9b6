#!/usr/bin/env bash
# Data parallelism on this machine: steps/s of `attnc train` as 1 rank x T threads and as
# T ranks x 1 thread (mpirun, one core each), T = the number of cores, for the dates
# Transformer and the Bahdanau model at their spec's sizes, with the median time a step spends
# in the gradients' all-reduce. Both configurations train the same global batch (the same
# run: docs/distributed.md), so they are compared with each other (no PyTorch side). Each
# model's line also gives both as a fraction of the GEMM peak at N threads, measured in the
# same run by `attnc bench` (its calibration line is printed), with the train step's FLOPs
# counted from the compiled program.
#
#   tests/bench/data-parallel.sh [ATTNC] [STEPS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
attnc=${1:-$src/build/bin/attnc}
steps=${2:-80}
cores=${ATTN_BENCH_CORES:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# Steps/s from metrics.jsonl, between step 10 (past the first, which waits for compiles) and
# the step before the last (the last one also validates).
rate() {
  python3 - "$1" <<'PY'
import json, sys
rows = {r["step"]: r["time"] for r in map(json.loads, open(sys.argv[1] + "/metrics.jsonl"))}
last = max(rows) - 1
print(f"{(last - 10) / (rows[last] - rows[10]):.2f}")
PY
}

sets=(--set train.eval_every=1000000 --set train.checkpoint.every=1000000 --steps "$steps")
printf "%-18s %22s %22s %8s %18s %14s\n" model "1 rank x $cores threads" \
  "$cores ranks x 1 thread" ratio "all-reduce ms/step" "% of peak"
for model in dates-transformer dates-bahdanau; do
  spec=$src/models/$model.yaml
  # The peak at N threads and the step's FLOPs, from attnc's own benchmark.
  OMP_NUM_THREADS=$cores "$attnc" bench "$spec" --steps 1 --warmup 0 > "$work/bench.log" 2>&1
  calibration=$(grep '^calibration:' "$work/bench.log")
  peak=$(sed -n 's/^calibration:.* \([0-9.]*\) GFLOP\/s = the peak.*/\1/p' "$work/bench.log")
  gflop=$(sed -n 's/^  FLOPs per step: \([0-9.]*\) GFLOP.*/\1/p' "$work/bench.log" | head -1)
  echo "$model: $calibration ($cores threads); train step $gflop GFLOP" >&2
  OMP_NUM_THREADS=$cores "$attnc" train "$spec" "${sets[@]}" --out "$work/one" --overwrite \
    > "$work/one.log" 2>&1
  OMP_NUM_THREADS=1 mpirun -np "$cores" --bind-to core "$attnc" train "$spec" "${sets[@]}" \
    --out "$work/many" --overwrite > "$work/many.log" 2>&1
  one=$(rate "$work/one") many=$(rate "$work/many")
  reduce=$(sed -n "s/.*all-reduce took \([0-9.e+-]*\) ms per step.*/\1/p" "$work/many.log")
  printf "%-18s %16s steps/s %16s steps/s %7.2fx %18s %14s\n" "$model" "$one" "$many" \
    "$(python3 -c "print($many / $one)")" "$reduce" \
    "$(python3 -c "print(f'{100*$gflop*$one/$peak:.1f}% / {100*$gflop*$many/$peak:.1f}%')")"
done
