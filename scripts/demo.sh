#!/usr/bin/env bash
# The main job: build if needed, train the default model (models/dates-bahdanau.yaml: dates in
# human formats to ISO dates, with Bahdanau attention) on its embedded data, then translate
# held-out and sample dates and draw where the model looked: one heatmap per sentence in
# runs/dates-bahdanau/attention/ (the loss curve is runs/dates-bahdanau/loss.png).
# Extra arguments go to `attnc train` (e.g. --steps 500).
set -euo pipefail
cd "$(dirname "$0")/.."
# One oneDNN/OpenMP thread: this model's kernels are small, so a second thread gains nothing
# (17.8 vs 19.6 steps/s), and spinning OpenMP threads slow tenfold when the machine is busy.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# attnc alone: the tests, benchmarks and GPU tests are scripts/test.sh's to build.
scripts/build.sh attnc
run=runs/dates-bahdanau
# --overwrite: each demo run trains the model afresh into the same directory.
build/bin/attnc train models/dates-bahdanau.yaml --out "$run" --overwrite "$@"
echo
build/bin/attnc run models/dates-bahdanau.yaml --ckpt "$run" --count 5 --plots "$run/attention"
echo
echo "dates-bahdanau: translating new dates (beam search of 4):"
samples=$'3 March 2021\n03/03/21\nWednesday, March 3rd 2021'
echo "$samples" |
  build/bin/attnc translate --ckpt "$run" --beam 4 --plots "$run/attention/samples" >"$run/samples.txt"
paste <(echo "$samples") <(head -n 3 "$run/samples.txt") | sed 's/^/  /; s/\t/  ->  /'
tail -n +4 "$run/samples.txt"
