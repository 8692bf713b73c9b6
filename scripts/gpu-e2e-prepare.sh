#!/usr/bin/env bash
# Prepares the end-to-end check of --device cuda for the GPU machine, which has CUDA but no MLIR
# or oneDNN, so no attnc. For each model below: the model compiled here ahead of time for the
# GPU (`attnc compile --device cuda --exe`) and the losses of the same training on the CPU
# (`attnc train`, whose losses the executable's `train` reproduces bit for bit on the CPU), and
# for the README's main job a trained checkpoint and its greedy translations on the CPU;
# once, the libraries the executables load that the GPU machine lacks (oneDNN, its OpenCL
# loader, OpenMP). All in build/gpu-e2e.tar.gz (about 43 MB), which scripts/gpu-check.sh
# unpacks and runs when it travels with the tree:
#
#   scripts/gpu-e2e-prepare.sh [STEPS]     # here (default 40 steps per model, as the e2e test on a GPU)
#   (device tool) run: scripts/gpu-check.sh, carry: ["build/gpu-e2e.tar.gz"]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-40}
attnc=$PWD/build/bin/attnc
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
echo "$steps" >"$stage/steps"
# name, then the spec and its overrides. The Transformer's attention: one head of 64, the GPU
# kernels' head dim (the spec's four heads have 16). The forecaster: two LSTM layers, and the
# same projected to 16 (oneDNN's LSTMP on the CPU). The tagger: masked (padded) GRU layers in
# both directions. The sine: a vanilla RNN layer. The dates models: the README's main job (its
# additive attention a kernel generated from its score region), Luong's local-p attention
# (its window and Gaussian, generated too) and the convolutional seq2seq (convolutions,
# GLU). The MLP: products and generated kernels alone. The two train-step specs: the models
# of tests/bench/transformer.py and recurrent-train-step.py, whose PyTorch steps gpu-check.sh
# times on the same GPU.
models=(
  "char-transformer models/char-transformer.yaml --set model.transformer.heads=1"
  "dates-bahdanau models/dates-bahdanau.yaml"
  "dates-local-predictive models/dates-local-predictive.yaml"
  "dates-convs2s models/dates-convs2s.yaml"
  "mlp-sine models/mlp-sine.yaml"
  "sines-forecast models/sines-forecast.yaml"
  "sines-forecast-projected models/sines-forecast.yaml --set model.rnn.projection=16"
  "pos-tagger models/pos-tagger.yaml"
  "rnn-sine models/rnn-sine.yaml"
  "transformer-train-step tests/bench/gpu/transformer-train-step.yaml"
  "lstm-train-step tests/bench/gpu/lstm-train-step.yaml"
)
# The models whose greedy decoding the GPU must reproduce: trained here to their spec's steps,
# their checkpoint and their outputs on the CPU (`attnc run --count 64`, the validation pairs)
# travel too. f32 on both sides (the additive attention's generated kernel sums in the CPU's
# order), so the tokens are expected equal.
decoded=(dates-bahdanau)
# The ways they decode (a name, the executable's verb and flags), each checked against the
# CPU's: greedy (run), beam search and top-k sampling (translate, on the same sources).
printf '%s\n' "decode run --count 64" "beam translate --beam 5" \
  "sample translate --sample --top-k 3 --temperature 3 --sample-seed 7" >"$stage/decodings"
for entry in "${models[@]}"; do
  read -r -a words <<<"$entry"
  name=${words[0]}
  dir=$stage/$name
  mkdir -p "$dir"
  # x86-64-v3: the GPU machine's CPU is not this one.
  "$attnc" compile "${words[@]:1}" --device cuda --cpu x86-64-v3 --exe -o "$dir/model"
  strip "$dir/model"
  "$attnc" train "${words[@]:1}" --steps "$steps" --no-compile-cache --out "$dir/cpu-run" \
    >/dev/null
  mv "$dir/cpu-run/metrics.jsonl" "$dir/cpu-metrics.jsonl"
  rm -rf "$dir/cpu-run"
  if [[ " ${decoded[*]} " == *" $name "* ]]; then
    "$attnc" train "${words[@]:1}" --no-compile-cache --out "$dir/decode-run" >/dev/null
    mv "$dir/decode-run/best.safetensors" "$dir/decode.safetensors"
    rm -rf "$dir/decode-run"
    # Each way of decoding, by the same program compiled for the CPU, on the 64 validation
    # sources (stdin; the first line of `run`, which names the checkpoint's path, left out).
    "$attnc" compile "${words[@]:1}" --exe -o "$dir/cpu-model" >/dev/null
    "$dir/cpu-model" run --ckpt "$dir/decode.safetensors" --count 64 | tail -n +2 |
      sed -e 's/^  //' -e 's/  ->  .*//' >"$dir/sources.txt"
    while read -r way verb flags; do
      # shellcheck disable=SC2086 # the flags are words
      "$dir/cpu-model" "$verb" --ckpt "$dir/decode.safetensors" $flags <"$dir/sources.txt" |
        { if [ "$verb" = run ]; then tail -n +2; else cat; fi; } >"$dir/cpu-$way.txt"
    done <"$stage/decodings"
    rm "$dir/cpu-model"
  fi
  for lib in $(ldd "$dir/model" | awk '/libdnnl|libOpenCL|libgomp/ { print $3 }'); do
    cp -L "$lib" "$stage/lib/"
  done
done
tar czf build/gpu-e2e.tar.gz -C "$stage" .
ls -la build/gpu-e2e.tar.gz
