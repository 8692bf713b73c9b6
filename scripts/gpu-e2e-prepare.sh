#!/usr/bin/env bash
# Prepares the end-to-end check of --device cuda for the GPU machine, which has CUDA but no MLIR
# or oneDNN, so no attnc: a model compiled here ahead of time for the GPU
# (`attnc compile --device cuda --exe`), the libraries it loads that the GPU machine lacks
# (oneDNN, its OpenCL loader, OpenMP), and the losses of the same training on the CPU
# (`attnc train`, whose losses the executable's `train` reproduces bit for bit on the CPU).
# scripts/gpu-check.sh trains the executable on the GPU and compares, when the folder travels:
#
#   scripts/gpu-e2e-prepare.sh [STEPS]     # writes build/gpu-e2e (about 55 MB)
#   (device tool) run: scripts/gpu-check.sh, carry: ["build/gpu-e2e"]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-100}
dir=build/gpu-e2e
attnc=build/bin/attnc
# One head of 64: the GPU kernels' head dim (the spec's four heads have 16).
model=(models/char-transformer.yaml --set model.transformer.heads=1)
rm -rf "$dir"
mkdir -p "$dir/lib"
# x86-64-v3: the GPU machine's CPU is not this one.
"$attnc" compile "${model[@]}" --device cuda --cpu x86-64-v3 --exe -o "$dir/generate"
"$attnc" train "${model[@]}" --steps "$steps" --no-compile-cache --out "$dir/cpu-run" >/dev/null
mv "$dir/cpu-run/metrics.jsonl" "$dir/cpu-metrics.jsonl"
rm -rf "$dir/cpu-run"
echo "$steps" >"$dir/steps"
for lib in $(ldd "$dir/generate" | awk '/libdnnl|libOpenCL|libgomp/ { print $3 }'); do
  cp -L "$lib" "$dir/lib/"
done
du -sh "$dir"
