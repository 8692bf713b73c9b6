#!/usr/bin/env bash
# Standalone executables (`attnc compile --exe`, docs/deploy.md) against the attnc verbs:
#
#   check.sh ATTNC SOURCE_DIR WORK_DIR FAMILY      FAMILY: seq2seq transformer tag classify
#                                                          regress lm
#
# A few attnc training steps give a checkpoint; the executable compiled with it runs under
# `env -i` from a directory holding only it (and its weights file, for tag), and prints what
# the attnc verbs print on the same inputs; `train` through it gives attnc's losses bit for
# bit from fresh weights (--fresh), and continues from the compiled-in ones by default;
# taggers and classifiers label stdin lines as `run` labels them; `ldd` shows no LLVM or
# MLIR; bad input gets attnc's errors; attnc reads the
# checkpoints it writes.
set -euo pipefail
attnc=$1 src=$2 work=$3 family=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL ($family): $*"; exit 1; }
same() { cmp -s "$1" "$2" || { diff "$1" "$2" | head -20; fail "$3"; }; }
# attnc's lines name the checkpoint it read, the executable's its embedded weights.
origin() { sed -E -e 's/parameters from (the embedded weights|[^ ]+)/parameters from WEIGHTS/' \
                   -e 's/\((the embedded weights|[^,]+), step/(WEIGHTS, step/' "$1"; }
# The training losses and gradient norms of a run, step by step.
losses() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "loss" in r: print(r["step"], repr(r["loss"]), repr(r.get("grad_norm")), repr(r.get("valid_loss")))' "$1"; }

case $family in
  seq2seq)     model=dates-bahdanau steps=40 ;;
  transformer) model=reverse-transformer steps=20 ;;
  tag)         model=pos-tagger steps=30 weights=pos.safetensors ;;
  classify)    model=majority-classifier steps=30 ;;
  regress)     model=rnn-sine steps=30 ;;
  lm)          model=char-rnn steps=20 ;;
  *) fail "unknown family" ;;
esac
spec=$src/models/$model.yaml
"$attnc" train "$spec" --steps $steps --out "$work/run" > train.log
ckpt=$work/run/best.safetensors
"$attnc" compile "$spec" --ckpt run --exe -o bin/$model ${weights:+--weights-file $weights} > compile.log
if ldd bin/$model | grep -Ei 'llvm|mlir'; then fail "the executable links LLVM or MLIR"; fi

# Alone in a directory, with an empty environment (but the thread count: a gradient norm's
# reduction order depends on it; and the CPU caps of .ci/run's pass without AVX-512, which
# attnc ran under too).
mkdir alone && cp bin/* alone/
run_alone() {
  local program=$1
  shift
  (cd "$work/alone" && env -i ${OMP_NUM_THREADS:+OMP_NUM_THREADS=$OMP_NUM_THREADS} \
     ${ATTN_MAX_CPU:+ATTN_MAX_CPU=$ATTN_MAX_CPU} \
     ${ONEDNN_MAX_CPU_ISA:+ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA} ./$program "$@")
}
exe() { run_alone $model "$@"; }
exe info > info.txt 2>&1 || fail "info: $(cat info.txt)"
grep -q "^$model: " info.txt || fail "info does not name the model: $(cat info.txt)"
grep -q "^runs on this CPU: yes" info.txt || fail "info does not say it runs here: $(cat info.txt)"
# Compiled for "native" under ATTN_MAX_CPU: for that level.
if [ -n "${ATTN_MAX_CPU:-}" ]; then
  grep -q "for the CPU $ATTN_MAX_CPU" info.txt || fail "native under ATTN_MAX_CPU: $(cat info.txt)"
fi
# On a CPU that lacks its instructions (here one capped below them), info says so and fails.
if (cd alone && env -i ATTN_MAX_CPU=x86-64-v2 ./$model info > ../info-v2.txt 2>&1); then
  fail "info on a CPU that cannot run it exited 0: $(cat info-v2.txt)"
fi
grep -q "^runs on this CPU: no, it lacks .*avx2" info-v2.txt || fail "info-v2: $(cat info-v2.txt)"

# `run` with the checkpoint (both name the same file) and with the built-in weights.
exe run --ckpt "$ckpt" > exe-run.txt
"$attnc" run "$spec" --ckpt "$ckpt" > attnc-run.txt
same exe-run.txt attnc-run.txt "run --ckpt differs from attnc run"
exe run > exe-run-embedded.txt
same <(origin exe-run-embedded.txt) <(origin attnc-run.txt) "run with the built-in weights differs"
exe eval > exe-eval.txt
"$attnc" eval --ckpt "$ckpt" > attnc-eval.txt
same <(origin exe-eval.txt) <(origin attnc-eval.txt) "eval differs"

case $family in
  seq2seq|transformer)
    if [ $family = seq2seq ]; then
      printf '%s\n' 'march 3, 1999' '2001-02-03' 'Tuesday, June 5 2012' '5/6/07' 'dec 31 1999' > in.txt
      long=$(printf '1%.0s' $(seq 40))
    else
      printf '%s\n' '1 2 3' '4 5 6 7 8' '9 9 1 2' '3 1 4 1 5 9 2 6' > in.txt
      long=$(seq -s ' ' 12)
    fi
    for flags in "" "--scores" "--sample --sample-seed 5 --temperature 0.7"; do
      exe translate $flags < in.txt > exe-tr.txt
      "$attnc" translate --ckpt "$ckpt" $flags < in.txt > attnc-tr.txt
      same exe-tr.txt attnc-tr.txt "translate $flags differs"
    done
    # Beam search runs in the compiled decoder's rows, and `attnc translate --beam 3` compiles
    # its decoder for 3 (docs/deploy.md): an executable compiled for that beam gives the same
    # n-best lists and scores to the last digit on every CPU. (One compiled for the default
    # decode.batch rows searches in those: on CPUs whose product kernels sum in a row count's
    # own order, such as oneDNN's AVX2 ones, its scores differ in the sixth digit.)
    "$attnc" compile "$spec" --ckpt run --exe -o beam3/$model --set decode.beam=3 > /dev/null
    cp beam3/$model alone/$model.beam3
    run_alone $model.beam3 translate --nbest 2 < in.txt > exe-tr.txt
    "$attnc" translate --ckpt "$ckpt" --beam 3 --nbest 2 < in.txt > attnc-tr.txt
    same exe-tr.txt attnc-tr.txt "translate --beam 3 --nbest 2 differs"
    exe translate --beam 3 < in.txt > exe-beam-rows.txt ||
      fail "beam 3 in the decoder's default rows: $(cat exe-beam-rows.txt)"
    # An over-long line: an empty output line, an error naming it, exit 1 (as attnc).
    printf '%s\n' '1 2' "$long" > bad.txt
    if exe translate < bad.txt > bad.out 2> bad.err; then fail "an over-long line exited 0"; fi
    [ "$(wc -l < bad.out)" = 2 ] && [ -z "$(sed -n 2p bad.out)" ] || fail "bad line output: $(cat bad.out)"
    grep -q "error: stdin:2: " bad.err || fail "no error naming line 2: $(cat bad.err)"
    # Input without a newline (/dev/zero): a located error within the line limit, from both,
    # not a hang or a buffer without bound.
    if timeout 60 "$attnc" translate --ckpt "$ckpt" < /dev/zero > zero.out 2> zero.err; then
      fail "attnc translate < /dev/zero exited 0"
    fi
    grep -q "error: stdin:1: the line is longer than 1048576 bytes" zero.err ||
      fail "attnc translate < /dev/zero: $(head -c 300 zero.err)"
    if timeout 60 bash -c "cd '$work/alone' && ./$model translate < /dev/zero" > zero.out 2> zero.err; then
      fail "the executable's translate < /dev/zero exited 0"
    fi
    grep -q "error: stdin:1: the line is longer than" zero.err ||
      fail "the executable's translate < /dev/zero: $(head -c 300 zero.err)"
    # A token the model has never seen: answered, and named on stderr with its line.
    if [ $family = seq2seq ]; then unk='2001@02@03'; else unk='1 x 2'; fi
    printf '%s\n' '1 2' "$unk" > unk.txt
    exe translate < unk.txt > unk.out 2> unk.err || fail "a line with an unknown token failed: $(cat unk.err)"
    [ "$(wc -l < unk.out)" = 2 ] || fail "unknown-token output: $(cat unk.out)"
    grep -q "warning: stdin:2: read as <unk> .*'[@x]'" unk.err || fail "no warning naming the token: $(cat unk.err)"
    # Length buckets built in (decode.buckets): the same outputs.
    if [ $family = seq2seq ]; then
      "$attnc" compile "$spec" --ckpt run --exe -o bucketed --set 'decode.buckets=[8, 16, 24]' > /dev/null
      ./bucketed translate < in.txt > bucketed.txt
      "$attnc" translate --ckpt "$ckpt" < in.txt > attnc-tr.txt
      same bucketed.txt attnc-tr.txt "the bucketed executable translates differently"
    fi
    if exe translate --beam 0 < in.txt 2> usage.err; then fail "--beam 0 was accepted"; fi
    grep -q -- "--beam" usage.err || fail "no message for --beam 0: $(cat usage.err)"
    ;;
  tag|classify)
    # translate labels lines: the validation sources of `run` get the labels run printed
    # (forEachPrediction over the encoded split there, task::Labeller over each line here).
    sed -n 's/^  \(.*\)  ->  \(.*\)   (.*$/\1/p' attnc-run.txt > sources.txt
    sed -n 's/^  \(.*\)  ->  \(.*\)   (.*$/\2/p' attnc-run.txt > labels.txt
    [ -s sources.txt ] || fail "no sources in: $(cat attnc-run.txt)"
    exe translate < sources.txt > exe-labels.txt
    "$attnc" translate --ckpt "$ckpt" < sources.txt > attnc-labels.txt
    same attnc-labels.txt labels.txt "attnc translate labels differ from attnc run's"
    same exe-labels.txt labels.txt "the executable's labels differ from attnc run's"
    ;;
esac
if [ $family = tag ]; then
  # A checkpoint of another model under the same name (the seed's GRU: the same tensors,
  # other equations) is refused, given with --ckpt or as the weights file beside it.
  "$attnc" train "$spec" --steps 2 --set model.rnn.gru_form=seed --out "$work/seed" > /dev/null
  if exe translate --ckpt "$work/seed" < sources.txt > /dev/null 2> seed.err; then
    fail "a checkpoint of other equations was accepted"
  fi
  grep -q "model.rnn.gru_form: seed in the checkpoint, pytorch in this model" seed.err ||
    fail "no message naming gru_form: $(cat seed.err)"
  cp alone/$weights kept.safetensors && cp "$work/seed/last.safetensors" alone/$weights
  if exe translate < sources.txt > /dev/null 2> beside.err; then
    fail "a weights file of other equations was accepted"
  fi
  grep -q "trained as another model" beside.err || fail "weights file: $(cat beside.err)"
  cp kept.safetensors alone/$weights
  # A data.path the spec gives relative is read from the executable's working directory
  # (docs/deploy.md), not from where the spec was compiled.
  mkdir -p tsv/elsewhere
  printf 'the cat\tDET NOUN\na dog\tDET NOUN\nthe dog runs\tDET NOUN VERB\na cat sits\tDET NOUN VERB\n' > tsv/tags.tsv
  printf '%s\n' 'name: tsv-tagger' 'task: tag' 'data: {path: tags.tsv, valid: 2, max_len: 4}' \
    'model: {embedding: {dim: 4}, rnn: {cell: gru, hidden: 4}}' 'train: {steps: 1, batch_size: 2}' > tsv/tags.yaml
  "$attnc" compile tsv/tags.yaml --exe -o tsv/tagexe > /dev/null
  if (cd tsv/elsewhere && ../tagexe eval > out.txt 2> err.txt); then fail "eval without tags.tsv here succeeded"; fi
  grep -q "tags.tsv: error: cannot open file" tsv/elsewhere/err.txt || fail "eval elsewhere: $(cat tsv/elsewhere/err.txt)"
  cp tsv/tags.tsv tsv/elsewhere/
  (cd tsv/elsewhere && ../tagexe eval > out.txt) || fail "eval beside its tags.tsv failed"
fi
case $family in
  regress)
    printf '%s\n' "$(seq -s ' ' 0.1 0.1 1.6)" "$(seq -s ' ' 1.6 -0.1 0.1)" > numbers.txt
    exe run --ckpt "$ckpt" --input "$work/numbers.txt" --output "$work/exe-raw.txt" > exe-in.txt
    "$attnc" run "$spec" --ckpt "$ckpt" --input numbers.txt --output attnc-raw.txt > attnc-in.txt
    same exe-in.txt <(sed "s|numbers.txt|$work/numbers.txt|" attnc-in.txt) "run --input differs"
    same exe-raw.txt attnc-raw.txt "run --output differs"
    ;;
  lm)
    exe run --ckpt "$ckpt" --count 60 --prime "It " --sample-seed 3 --temperature 0.5 > exe-lm.txt
    "$attnc" run "$spec" --ckpt "$ckpt" --count 60 --prime "It " --sample-seed 3 --temperature 0.5 > attnc-lm.txt
    same exe-lm.txt attnc-lm.txt "sampling differs"
    ;;
esac

# Training through the executable from fresh weights: attnc's losses, bit for bit; attnc reads
# its checkpoint.
exe train --fresh --steps 6 --out "$work/exe-train" > exe-train.txt
grep -q "starting from freshly initialised weights" exe-train.txt || fail "--fresh: $(head -3 exe-train.txt)"
"$attnc" train "$spec" --steps 6 --out attnc-train > attnc-train.txt
same <(losses exe-train/metrics.jsonl) <(losses attnc-train/metrics.jsonl) "train losses differ"
# Without --fresh it continues from the weights compiled in (run's best, step $steps): the
# same losses as from that checkpoint with --ckpt, and a first loss below the fresh run's.
exe train --steps 3 --out "$work/exe-continue" > exe-continue.txt
grep -q "starting from .* (step $steps) with a fresh optimizer" exe-continue.txt ||
  fail "train does not say where it starts: $(head -3 exe-continue.txt)"
exe train --ckpt "$ckpt" --steps 3 --out "$work/exe-ckpt" > /dev/null
same <(losses exe-continue/metrics.jsonl) <(losses exe-ckpt/metrics.jsonl) \
  "train from the compiled-in weights differs from train --ckpt of the same checkpoint"
python3 -c 'import json,sys
first = lambda p: next(json.loads(l)["loss"] for l in open(p) if "loss" in json.loads(l))
sys.exit(0 if first(sys.argv[1]) < first(sys.argv[2]) else 1)' exe-continue/metrics.jsonl exe-train/metrics.jsonl ||
  fail "continued training does not start below fresh training's first loss"
if exe train --fresh --ckpt "$ckpt" --steps 1 --out "$work/x" 2> both.err; then fail "--fresh with --ckpt was accepted"; fi
"$attnc" eval --ckpt exe-train > /dev/null || fail "attnc cannot read the executable's checkpoint"
if exe train --steps 6 --out "$work/exe-train" > again.txt 2>&1; then
  fail "a second train over a run was accepted"
fi
grep -q "holds a run" again.txt || fail "a second train failed for another reason: $(cat again.txt)"
# --weights-file may not name the executable itself.
if "$attnc" compile "$spec" --exe -o bin/x --weights-file x 2> self.err; then fail "--weights-file x -o bin/x was accepted"; fi
echo "ok ($family): $model"
