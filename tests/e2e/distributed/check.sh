#!/usr/bin/env bash
# Data-parallel training under mpirun, as a user runs it (docs/distributed.md).
#
#   check.sh ATTNC SOURCE_DIR WORK_DIR MODE
#
# MODE
#   seq2seq | transformer  2 ranks train K steps; losses, validation losses, parameters and
#                          optimizer state match one process on the same global batch
#                          (compare.py, 1e-5 relative). Dropout and scheduled sampling are
#                          on: their draws are per global example, so they must match too.
#   resume                 2 ranks train 8 steps, one process resumes to K: the same run
#                          as one process for K steps.
#   killed                 rank 0 (the writer) is SIGKILLed mid-run: mpirun ends the other
#                          rank with a non-zero status within 60 s; the checkpoint loads.
#   hung                   rank 1 is SIGSTOPped: rank 0 names it within --rank-timeout
#                          (5 s here), and every rank ends with a non-zero status.
#   interrupted            Ctrl-C (SIGINT) to mpirun: every rank ends within 60 s; the
#                          checkpoint loads.
set -euo pipefail
attnc=$1 src=$2 work=$3 mode=$4
mkdir -p "$work"
cd "$work"

command -v mpirun >/dev/null || { echo "mpirun not found (apt-get install openmpi-bin)"; exit 1; }
# CI runs as root, which Open MPI refuses unless told twice. Containers often forbid the
# cross-memory attach that Open MPI's shared-memory transport uses for large messages.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMP_NUM_THREADS=1
mpi=(mpirun -np 2 --oversubscribe)
compare=(python3 "$src/tests/e2e/distributed/compare.py" --rtol 1e-5)

K=12
case $mode in
  seq2seq | resume | killed | hung | interrupted)
    model=$src/models/dates-bahdanau.yaml
    sets=(--set model.rnn.layers=2 --set model.rnn.dropout=0.2
          --set 'train.teacher_forcing={schedule: linear, slope: 0.05, min: 0.5}'
          --set train.eval_every=4 --set train.checkpoint.every=4 --set data.train=2000) ;;
  transformer)
    # Adam (epsilon 1e-9) turns the rounding of gradients near zero into whole steps of
    # lr, and the Transformer's grow from about step 8: one process on 1 and on 2 threads
    # differs by 3e-4 at step 12. Six steps show what data parallelism adds (nothing).
    K=6
    model=$src/models/dates-transformer.yaml
    sets=(--set model.transformer.dropout=0.1 --set train.eval_every=3
          --set train.checkpoint.every=3 --set data.train=2000)
    # The key projection's bias gets no gradient in exact arithmetic (softmax ignores a
    # shift of every score by q . b_k), so its Adam state and value are rounding noise in
    # any two runs that sum in another order (one process on 1 and 2 threads, too).
    compare+=(--ignore '\.k\.bias') ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac

train() { "$attnc" train "$model" "${sets[@]}" --overwrite "$@"; }

case $mode in
  seq2seq | transformer)
    train --steps $K --out one
    "${mpi[@]}" "$attnc" train "$model" "${sets[@]}" --overwrite --steps $K --out two | tee two.log
    # Piped, the ranks' progress is plain lines, not redrawn in place (docs/distributed.md).
    if grep -q $'\r' two.log; then echo "FAIL: carriage returns in mpirun's piped output"; exit 1; fi
    grep -q "^step $K/$K " two.log || { echo "FAIL: no plain progress line for step $K"; exit 1; }
    "${compare[@]}" one two ;;

  resume)
    train --steps $K --out one
    # Stopped at a validation step, as the one-process run validates there too.
    "${mpi[@]}" "$attnc" train "$model" "${sets[@]}" --overwrite --steps 8 --out half
    "$attnc" train "$model" "${sets[@]}" --resume --steps $K --out half
    "${compare[@]}" one half ;;

  killed | hung | interrupted)
    rm -rf run && mkdir run
    "${mpi[@]}" "$attnc" train "$model" "${sets[@]}" --steps 100000 --out run \
      --rank-timeout 5 > log 2>&1 &
    launcher=$!
    # The ranks are mpirun's children; their environment says which is which.
    rank_pid() {
      for pid in $(pgrep -P "$launcher"); do
        tr '\0' '\n' < /proc/$pid/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
          { echo "$pid"; return; }
      done
    }
    for _ in $(seq 600); do [ -f run/last.safetensors ] && break; sleep 0.2; done
    [ -f run/last.safetensors ] || { cat log; echo "no checkpoint after 120 s"; exit 1; }
    sleep 1 # mid-run, between checkpoints or in one
    ranks=$(pgrep -P "$launcher" | tr '\n' ' ')
    case $mode in
      killed) victim=$(rank_pid 0); kill -KILL "$victim" ;;
      hung) victim=$(rank_pid 1); kill -STOP "$victim" ;;
      interrupted) victim=$(rank_pid 1); kill -INT "$launcher" ;;
    esac
    limit=60
    start=$SECONDS status=0
    for _ in $(seq $((limit * 10))); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$launcher" 2>/dev/null; then
      kill -KILL "$launcher" "$victim" 2>/dev/null || true
      cat log; echo "FAIL: the run still runs $limit s after the $mode rank"
      exit 1
    fi
    wait "$launcher" || status=$?
    kill -KILL "$victim" 2>/dev/null || true
    echo "mpirun ended with status $status after $((SECONDS - start)) s"
    tail -n 20 log
    [ "$status" -ne 0 ] || { echo "FAIL: mpirun ended with status 0"; exit 1; }
    # Every rank is gone (or a zombie about to be reaped) within a few seconds of mpirun.
    running() {
      for pid in $ranks; do
        [ "$pid" = "$victim" ] && continue
        state=$(awk '{print $3}' /proc/$pid/stat 2>/dev/null || true)
        [ -n "$state" ] && [ "$state" != Z ] && { echo "$pid"; return; }
      done
    }
    for _ in $(seq 50); do [ -z "$(running)" ] && break; sleep 0.1; done
    [ -z "$(running)" ] || { echo "FAIL: rank process $(running) outlived mpirun"; exit 1; }
    if [ "$mode" = hung ]; then
      grep -q "rank 1 did not complete the all-reduce .* and does not answer" log ||
        { echo "FAIL: no message naming rank 1"; exit 1; }
    fi
    "$attnc" eval --ckpt run/last.safetensors ;;
esac
echo "PASS: $mode"
