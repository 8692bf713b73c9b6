#!/usr/bin/env bash
# The GPU checks of the CUDA backend, in one call on a machine with an NVIDIA GPU (the device
# machine: CUDA, CMake, ninja and PyTorch, but no MLIR, oneDNN or GoogleTest; docs/cuda.md).
# Builds tests/cuda as its own project from this tree, then runs, each under a timeout:
#   1. the ptxas budget (compile-only: every kernel for sm_90, no spills, no stack);
#   2. conformance against the definitions in double: the fused attention forward and backward,
#      then layer norm, cross-entropy and Adam, then the cuBLASLt matmuls, then the recurrent
#      cells, then what a --device cuda program calls (managed memory, products on strided
#      views, the generated kernels' launches); and, where scripts/gpu-e2e-prepare.sh's build/gpu-e2e.tar.gz travelled (carry),
#      models compiled with --device cuda trained on the GPU against the CPU's losses (each
#      model's ms per training step printed in the summary), and the
#      main job's translations (greedy, beam search, top-k sampling) from a CPU-trained
#      checkpoint against the CPU's;
#   3. the benchmarks: attn-bench-cuda-attention (TFLOP/s, fraction of cuBLAS's bf16 GEMM) and
#      PyTorch's FlashAttention-2 at the same sizes; the Transformer's and the LSTM's training
#      steps (the bundle's train-step executables, timed in step 2) against PyTorch eager
#      (tests/bench/transformer.py, recurrent-train-step.py, --device cuda); then
#      attn-bench-cuda-recurrent (the LSTM and GRU layers in f32) and PyTorch's cuDNN RNN,
#      with the ratios.
# Prints one summary last; the log (gpu-check.log) and the benchmarks' JSON go to $OUT (the
# device tool's folder, which returns at most 8 files) or /tmp/attn-gpu-check.
#
#   scripts/gpu-check.sh            # everything (about 3 minutes on an H200)
#   scripts/gpu-check.sh --no-bench # build and conformance only
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/attn-gpu-check}
mkdir -p "$out"
: >"$out/gpu-check.log"
rm -f "$out/steps.txt" "$out/steps.jsonl" "$out/ratios.txt"
build=${ATTN_GPU_BUILD:-/tmp/attn-gpu-build}
bench=1
[ "${1:-}" = --no-bench ] && bench=0
export PATH=/usr/local/cuda/bin:$PATH
summary=()
status=0
step() { # name timeout command...
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  local log="$out/step.log"
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  { echo "== $name: $*"; cat "$log"; } >>"$out/gpu-check.log"
  local result=ok
  case $rc in 0) ;; 77) result=skipped ;; 124) result="TIMED OUT after ${limit}s"; status=1 ;;
    *) result="FAILED (exit $rc)"; status=1 ;; esac
  summary+=("$(printf '%-18s %-22s %4ds' "$name" "$result" $((SECONDS - start)))")
  echo "== $name: $result"
  tail -n 25 "$log"
  rm -f "$log"
  return $rc
}

# PyTorch at its best, as every benchmark here gives it: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
# unset, once with glibc's malloc and once with tcmalloc preloaded (where the machine has it:
# $ATTN_BENCH_TCMALLOC, else Debian's libtcmalloc-minimal4); the faster run's --json is kept
# as JSON, its "malloc" naming which.
torch_best() { # name json command...
  local name=$1 json=$2
  shift 2
  rm -f "$json" "$json.glibc" "$json.tcmalloc"
  step "$name" 240 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$@" --json "$json.glibc"
  local tc=${ATTN_BENCH_TCMALLOC:-/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4}
  [ -f "$tc" ] && step "$name-tcmalloc" 240 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    LD_PRELOAD="$tc" "$@" --json "$json.tcmalloc"
  python3 - "$json" <<'PY'
import json, sys
runs = []
for malloc in ("glibc", "tcmalloc"):
    try:
        runs.append(dict(json.load(open(f"{sys.argv[1]}.{malloc}")), malloc=malloc))
    except (OSError, ValueError):
        pass
if runs:
    json.dump(min(runs, key=lambda r: r["ms_per_step"]), open(sys.argv[1], "w"))
PY
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
if step configure 120 cmake -S tests/cuda -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  step build 300 cmake --build "$build" -j "$(nproc)"; then
  step ptxas 120 ctest --test-dir "$build" -R attn-cuda-ptxas-budget --output-on-failure
  step attention 180 "$build/bin/attn-cuda-attention-test"
  step train-kernels 120 "$build/bin/attn-cuda-train-kernels-test"
  step matmul 120 "$build/bin/attn-cuda-matmul-test"
  step recurrent 120 "$build/bin/attn-cuda-recurrent-kernels-test"
  # What a --device cuda program calls besides the kernels: managed memory, the products on
  # strided views, a PTX module's launch through the mgpu* calls.
  step program 120 "$build/bin/attn-cuda-program-test"
  # --device cuda end to end, when scripts/gpu-e2e-prepare.sh's bundle travelled with the tree:
  # each executable trains on this GPU, to the CPU's losses within 2% per step (its generated
  # kernels, products and recurrent layers in f32, a dot-product attention in bf16).
  if [ -f build/gpu-e2e.tar.gz ]; then
    e2e=$build/gpu-e2e
    rm -rf "$e2e" && mkdir -p "$e2e" && tar xzf build/gpu-e2e.tar.gz -C "$e2e"
    for dir in "$e2e"/*/; do
      [ -x "$dir/model" ] || continue
      name=$(basename "$dir")
      step "$name" 240 env LD_LIBRARY_PATH="$e2e/lib" "$dir/model" train \
        --steps "$(cat "$e2e/steps")" --out "$dir/gpu-run" &&
        step "$name-losses" 30 python3 - "$dir/cpu-metrics.jsonl" "$dir/gpu-run/metrics.jsonl" "$name" "$out/steps" <<'PY'
import json, statistics, sys
cpu, gpu = ([json.loads(l) for l in open(f) if '"loss"' in l] for f in sys.argv[1:3])
bad = [(i + 1, c["loss"], g["loss"]) for i, (c, g) in enumerate(zip(cpu, gpu))
       if abs(g["loss"] - c["loss"]) > 0.02 * abs(c["loss"])]
print(f"{len(gpu)} GPU steps against {len(cpu)} CPU steps; last loss {gpu[-1]['loss']:.4f} against {cpu[-1]['loss']:.4f}")
for step, c, g in bad[:10]:
    print(f"  step {step}: GPU {g:.5f}, CPU {c:.5f}")
# A step's wall time: the median gap between the second half's records ("time": seconds since
# the run started; the first steps load the kernels).
def ms(records):
    times = [r["time"] for r in records[len(records) // 2:]]
    return 1e3 * statistics.median(b - a for a, b in zip(times, times[1:])) if len(times) > 2 else float("nan")
line = f"{sys.argv[3]:<24} {ms(gpu):9.3f} ms/step on the GPU ({ms(cpu):.3f} on the CPU of the machine that prepared the bundle)"
print(line)
open(sys.argv[4] + ".txt", "a").write(line + "\n")
open(sys.argv[4] + ".jsonl", "a").write(json.dumps({"model": sys.argv[3], "gpu_ms": ms(gpu)}) + "\n")
sys.exit(1 if bad or len(cpu) != len(gpu) or not cpu else 0)
PY
      # Decoding with the checkpoint trained on the CPU (greedy, beam search, top-k
      # sampling, chosen on the GPU): the CPU's translations.
      if [ -f "$dir/cpu-decode.txt" ]; then
        while read -r way verb flags; do
          step "$name-$way" 120 bash -c 'LD_LIBRARY_PATH="$1/lib" "$2/model" "$4" --ckpt "$2/decode.safetensors" $5 <"$2/sources.txt" | { if [ "$4" = run ]; then tail -n +2; else cat; fi; } >"$2/gpu-$3.txt" && diff "$2/cpu-$3.txt" "$2/gpu-$3.txt" && echo "$(wc -l <"$2/gpu-$3.txt") translations, as on the CPU"' _ "$e2e" "$dir" "$way" "$verb" "$flags" </dev/null
        done <"$e2e/decodings"
      fi
    done
  fi
  if [ $bench = 1 ]; then
    step bench 240 "$build/bin/attn-bench-cuda-attention" --json "$out/attnc.json"
    step torch 240 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 tests/bench/cuda-attention.py --json "$out/torch.json"
    if [ -s "$out/attnc.json" ] && [ -s "$out/torch.json" ]; then
      python3 - "$out/attnc.json" "$out/torch.json" <<'PY' | tee "$out/ratios.txt"
import json, sys
ours = [json.loads(l) for l in open(sys.argv[1])]
theirs = {(r["S"], r["causal"]): r for r in map(json.loads, open(sys.argv[2]))}
print(f"{'S':>6} {'causal':>6} {'fwd TF/s':>9} {'torch':>7} {'ratio':>6} {'f+b TF/s':>9} {'torch':>7} {'ratio':>6} {'of GEMM':>8}")
for r in ours:
    t = theirs.get((r["S"], r["causal"]))
    if not t:
        continue
    print(f"{r['S']:>6} {str(r['causal']):>6} {r['fwd_tflops']:9.1f} {t['fwd_tflops']:7.1f} "
          f"{r['fwd_tflops'] / t['fwd_tflops']:6.2f} {r['fwd_bwd_tflops']:9.1f} {t['fwd_bwd_tflops']:7.1f} "
          f"{r['fwd_bwd_tflops'] / t['fwd_bwd_tflops']:6.2f} {100 * r['fwd_tflops'] / r['gemm_tflops']:7.0f}%")
PY
    fi
    # The LSTM and GRU layers (f32) against PyTorch's cuDNN RNN at the same sizes.
    step bench-rnn 240 "$build/bin/attn-bench-cuda-recurrent" --json "$out/attnc-rnn.json"
    step torch-rnn 240 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 tests/bench/cuda-recurrent.py --json "$out/torch-rnn.json"
    if [ -s "$out/attnc-rnn.json" ] && [ -s "$out/torch-rnn.json" ]; then
      python3 - "$out/attnc-rnn.json" "$out/torch-rnn.json" <<'PY' | tee -a "$out/ratios.txt"
import json, sys
ours = [json.loads(l) for l in open(sys.argv[1])]
theirs = {(r["cell"], r["H"]): r for r in map(json.loads, open(sys.argv[2]))}
print(f"{'cell':>5} {'H':>5} {'f+b ms':>8} {'cuDNN':>8} {'cuDNN/attnc':>11} {'TF/s':>6} {'of f32 GEMM':>11}")
for r in ours:
    t = theirs.get((r["cell"], r["H"]))
    if t:
        print(f"{r['cell']:>5} {r['H']:>5} {r['fwd_bwd_ms']:8.3f} {t['fwd_bwd_ms']:8.3f} "
              f"{t['fwd_bwd_ms'] / r['fwd_bwd_ms']:11.2f} {r['tflops']:6.2f} "
              f"{100 * r['tflops'] / r['gemm_tflops']:10.0f}%")
PY
    fi
    # Training steps against PyTorch eager on the same GPU: the bundled train-step specs'
    # executables (their ms/step from the end-to-end run above, which includes each step's
    # batch) against tests/bench's PyTorch models at the same sizes, each as a fraction of the
    # f32 GEMM rate attn-bench-cuda-recurrent measured just before (the products are f32 on
    # both sides: no TF32 in cuBLASLt's or PyTorch's matmuls; cuDNN's LSTM keeps PyTorch's
    # default, which allows TF32).
    if [ -d "${e2e:-}/transformer-train-step" ]; then
      torch_best torch-transformer "$out/torch-transformer.json" python3 \
        tests/bench/transformer.py --mode train --device cuda --src-len 64 --tgt-len 65 \
        --vocab 66 --d-model 256 --heads 4 --ffn 1024 --layers 2 --batch 32
      torch_best torch-lstm "$out/torch-lstm.json" python3 tests/bench/recurrent-train-step.py \
        --cell lstm --device cuda --input 1 --hidden 256 --length 50 --batch 32
      python3 - "$out" <<'PY' | tee -a "$out/ratios.txt"
import json, os, sys
out = sys.argv[1]
ours = {r["model"]: r["gpu_ms"] for r in map(json.loads, open(os.path.join(out, "steps.jsonl")))}
try:
    peak = json.loads(open(os.path.join(out, "attnc-rnn.json")).readline())["gemm_tflops"] * 1e12
except (OSError, ValueError, KeyError):
    peak = float("nan")
# A training step's FLOPs: 3x the forward's products (the backward's two per product).
B = 32
d, ffn, S, T, V, L = 256, 1024, 64, 65, 66, 2  # transformer.py's sizes above
enc = B * S * (2 * 4 * d * d + 2 * 2 * d * ffn) + 4 * B * S * S * d
dec = (B * T * (2 * 4 * d * d + 2 * 2 * d * d + 2 * 2 * d * ffn) + B * S * 2 * 2 * d * d
       + 4 * B * T * T * d + 4 * B * T * S * d)
transformer = 3 * (L * (enc + dec) + B * T * 2 * d * V)
I, H, steps = 1, 256, 50  # recurrent-train-step.py's sizes above
lstm = 3 * 2 * B * steps * (I + H) * 4 * H
print(f"f32 GEMM peak of this run: {peak / 1e12:.1f} TFLOP/s")
print("training step          attnc ms  of peak  torch ms  of peak  torch/attnc")
for name, torch_json, flops in (("transformer-train-step", "torch-transformer.json", transformer),
                                ("lstm-train-step", "torch-lstm.json", lstm)):
    try:
        a = ours[name]
        t = json.load(open(os.path.join(out, torch_json)))
        pct = lambda ms: 100 * flops / (ms * 1e-3) / peak  # noqa: E731
        print(f"{name:<22} {a:9.3f} {pct(a):7.1f}% {t['ms_per_step']:9.3f} {pct(t['ms_per_step']):7.1f}% "
              f"{t['ms_per_step'] / a:12.2f}  (torch with {t['malloc']})")
    except (OSError, ValueError, KeyError) as e:
        print(f"{name:<22} no figure ({e})")
PY
    fi
  fi
fi
echo
echo "gpu-check summary ($(head -n 2 "$out/gpu.txt" | tail -n 1); log: $out/gpu-check.log)"
printf '  %s\n' "${summary[@]}"
[ -f "$out/steps.txt" ] && sed 's/^/  /' "$out/steps.txt"
[ -f "$out/ratios.txt" ] && sed 's/^/  /' "$out/ratios.txt"
exit $status
