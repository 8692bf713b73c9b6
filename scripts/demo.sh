#!/usr/bin/env bash
# The main job: build if needed, train the default model (models/rnn-sine.yaml) on its
# embedded data, then run the trained model on validation windows it has not seen.
# Extra arguments go to `attnc train` (e.g. --steps 500).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build/bin/attnc train models/rnn-sine.yaml --out runs/rnn-sine "$@"
echo
build/bin/attnc run models/rnn-sine.yaml --ckpt runs/rnn-sine --count 8
