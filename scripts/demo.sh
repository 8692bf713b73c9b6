#!/usr/bin/env bash
# The main job: build if needed, then compile the default model (models/rnn-sine.yaml) and run
# it on its embedded data. Extra arguments go to `attnc run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/bin/attnc run models/rnn-sine.yaml "$@"
