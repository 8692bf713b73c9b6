#!/usr/bin/env bash
# Models compiled as libraries (`attnc compile --lib`, attn/capi.h) with the C and C++
# examples of examples/capi, built as docs/deploy.md builds them:
#
#   check.sh ATTNC SOURCE_DIR WORK_DIR
#
# The C example over a static library translates (and, for a tagger, labels) what attnc
# translate does and names a line it cannot read; the C++ example over a shared library trains
# with attnc train's losses, saves, and continues in a second process; neither links LLVM or
# MLIR.
set -euo pipefail
attnc=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
same() { cmp -s "$1" "$2" || { diff "$1" "$2" | head -20; fail "$3"; }; }
examples=$src/examples/capi
# Builds examples/capi/NAME.c with the link line `attnc compile --lib` printed (compile.log).
link_as_printed() {
  local line
  line=$(sed -n 's/^link a C program with: //p' compile.log)
  [ -n "$line" ] || fail "compile --lib printed no link line: $(cat compile.log)"
  [[ $line == "cc PROGRAM.c "* ]] || fail "the link line does not start with cc PROGRAM.c: $line"
  # shellcheck disable=SC2086 # the line's words are the flags
  cc "$examples/$1.c" ${line#cc PROGRAM.c } -o "$1" || fail "the printed link line fails: $line"
}

# A seq2seq model, static library, C example.
spec=$src/models/dates-bahdanau.yaml
"$attnc" train "$spec" --steps 40 --out run > train.log
mkdir c && cd c
"$attnc" compile "$spec" --ckpt ../run --lib -o libmodel.a > compile.log
link_as_printed translate
printf '%s\n' 'march 3, 1999' '2001-02-03' 'Tuesday, June 5 2012' '5/6/07' > in.txt
./translate < in.txt > c.txt
"$attnc" translate --ckpt ../run < in.txt > attnc.txt
same c.txt attnc.txt "the C example's translations differ from attnc translate"
printf '%s\n' '1 2' "$(printf '1%.0s' $(seq 40))" > bad.txt
if ./translate < bad.txt > bad.out 2> bad.err; then fail "an over-long line was accepted"; fi
grep -q "line 2: " bad.err || fail "no error naming line 2: $(cat bad.err)"
[ ! -s bad.out ] || fail "output despite the error: $(cat bad.out)"
./translate "$work/run/best.safetensors" < in.txt > ckpt.txt
same ckpt.txt attnc.txt "attnc_open with the checkpoint translates differently"
if ./translate "$work/nothing" < in.txt 2> open.err; then fail "a missing checkpoint opened"; fi
grep -q "nothing" open.err || fail "the open error does not name the path: $(cat open.err)"
cd ..

# Freshly initialised, shared library, C++ example: attnc train's losses.
mkdir cpp && cd cpp
"$attnc" compile "$spec" --lib -o libmodel.so > compile.log
c++ -std=c++17 "$examples/train.cpp" -I. -L. -lmodel -Wl,-rpath,'$ORIGIN' -o train
./train 4 "2001-02-03" > cpp.txt
"$attnc" train "$spec" --steps 4 --out attnc-run > /dev/null
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("step %d loss %s" % (r["step"], repr(r["loss"])))' attnc-run/metrics.jsonl > attnc.txt
python3 -c 'import sys
for l in open(sys.argv[1]):
    if l.startswith("step "):
        s, n, _, v = l.split(); print("step %s loss %s" % (n, repr(float(v))))' cpp.txt > losses.txt
same losses.txt attnc.txt "attnc_train_steps' losses differ from attnc train's"
grep -q "^2001-02-03 -> " cpp.txt || fail "no translation after training: $(cat cpp.txt)"
# Training survives the program's exit: 2 steps saved (attnc_save), then 2 more in a second
# process from that checkpoint, give the 4 steps of one run bit for bit; attnc reads it.
only_losses() { grep '^step ' "$1" | cut -d' ' -f2,4; }
./train --save first.safetensors 2 > first.txt
grep -q "^saved first.safetensors at step 2$" first.txt || fail "attnc_save: $(cat first.txt)"
./train --from first.safetensors --save second.safetensors 2 > second.txt
same <(cat <(only_losses first.txt) <(only_losses second.txt)) <(only_losses cpp.txt) \
  "2 + 2 steps over two processes differ from 4 steps in one"
ls -a | grep -q '\.tmp' && fail "attnc_save left a temporary file: $(ls -a)"
"$attnc" translate --ckpt second.safetensors <<< "2001-02-03" > attnc-saved.txt ||
  fail "attnc translate cannot read attnc_save's checkpoint"
"$attnc" eval --ckpt second.safetensors > eval-saved.txt
grep -q "second.safetensors, step 4" eval-saved.txt ||
  fail "attnc eval does not see attnc_save's step: $(cat eval-saved.txt)"
# A path below a regular file cannot be written (save creates missing directories).
if ./train --save first.txt/x.safetensors 1 > save.out 2> save.err; then fail "a save below a file succeeded"; fi
grep -q "first.txt/x.safetensors" save.err || fail "the save error does not name the path: $(cat save.err)"
cd ..

# A tagger: the C example labels lines as attnc translate does.
spec=$src/models/pos-tagger.yaml
"$attnc" train "$spec" --steps 20 --out tagger-run > /dev/null
mkdir tag && cd tag
"$attnc" compile "$spec" --ckpt ../tagger-run --lib -o libmodel.a > compile.log
link_as_printed translate
printf '%s\n' 'the old dog sees a fly' 'a cat runs' > in.txt
./translate < in.txt > c.txt
"$attnc" translate --ckpt ../tagger-run < in.txt > attnc.txt
same c.txt attnc.txt "the C example's tags differ from attnc translate"
cd ..

# A model with SentencePiece subwords: its static library needs SentencePiece beside it, and
# the line attnc prints says so.
mkdir bpe && cd bpe
python3 -c 'import random
r = random.Random(5); stems = ["walk", "talk", "jump", "call", "look", "play"]
for _ in range(600):
    w = [r.choice(stems) + r.choice(["", "s", "ed", "ing"]) for _ in range(r.randint(1, 3))]
    print(" ".join(w) + "\t" + " ".join(x.upper() for x in reversed(w)))' > pairs.tsv
printf '%s\n' 'name: bpe-lib' 'task: seq2seq' \
  'data: {path: pairs.tsv, valid: 50, max_len: 12, tokens: bpe, vocab_size: 40}' \
  'model: {embedding: {dim: 16}, rnn: {cell: gru, hidden: 32}}' \
  'train: {batch_size: 16, steps: 5}' 'decode: {batch: 8}' > bpe.yaml
"$attnc" train bpe.yaml --out run > train.log
"$attnc" compile bpe.yaml --ckpt run --lib -o libmodel.a > compile.log
grep -q -- "-lsentencepiece" compile.log || fail "no SentencePiece in the link line: $(cat compile.log)"
link_as_printed translate
printf '%s\n' 'walked playing' 'jumps calls looking' > in.txt
./translate < in.txt > c.txt
"$attnc" translate --ckpt run < in.txt > attnc.txt
same c.txt attnc.txt "the subword model's C example translates differently"
cd ..

for program in c/translate cpp/train tag/translate bpe/translate; do
  if ldd "$program" | grep -Ei 'llvm|mlir'; then fail "$program links LLVM or MLIR"; fi
done
echo "ok: C API"
