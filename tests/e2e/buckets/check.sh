#!/usr/bin/env bash
# Length buckets (decode.buckets, docs/seq2seq.md): `attnc translate` with buckets gives the
# outputs it gives without them, on lines of every length (greedy and beam search), and so
# do batch buckets (decode.batch_buckets), greedy and sampled; as do
# `attnc run` and `attnc eval` on the validation pairs; it compiles
# each bucket once into the compile cache, and a bad bucket list is an error at its line.
#
#   check.sh ATTNC SOURCE_DIR WORK_DIR
set -euo pipefail
attnc=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
# Every translate here must succeed: two runs that fail alike would compare equal.
failed() { fail "translate $1 exited non-zero: $(tail -3 "$2")"; }
spec=$src/models/dates-bahdanau.yaml
"$attnc" train "$spec" --steps 60 --out run > train.log
# Dates of every length the data makes, and a few by hand (3 to 32 characters).
"$attnc" run "$spec" --ckpt run --count 200 | sed -n 's/^  \(.*\)  ->  .*$/\1/p' > lines.txt
printf '%s\n' '1/2/03' 'may 5 2001' 'Wednesday, September 24, 1997' 'x' '31 December 1999 (a Friday)' >> lines.txt
[ "$(wc -l < lines.txt)" -gt 100 ] || fail "too few lines: $(wc -l < lines.txt)"
for flags in "" "--beam 3 --nbest 2"; do
  "$attnc" translate --ckpt run $flags < lines.txt > plain.txt 2> plain.err ||
    failed "$flags" plain.err
  "$attnc" translate --ckpt run $flags --set 'decode.buckets=[8, 16, 24]' < lines.txt \
    > buckets.txt 2> buckets.err || failed "$flags with buckets" buckets.err
  cmp -s plain.txt buckets.txt || { diff plain.txt buckets.txt | head; fail "buckets changed the outputs ($flags)"; }
  cmp -s plain.err buckets.err || { diff plain.err buckets.err | head; fail "buckets changed the errors ($flags)"; }
done
# run and eval decode the validation pairs with the buckets too, with the same results.
"$attnc" run "$spec" --ckpt run --count 50 > run-plain.txt
"$attnc" run "$spec" --ckpt run --count 50 --cache-dir cache-run --set 'decode.buckets=[8, 16, 24]' > run-buckets.txt
# (and they are really used: run compiled the full program and the three buckets)
[ "$(find cache-run -name '*.entry' | wc -l)" -eq 4 ] || fail "run did not compile its buckets: $(find cache-run -name '*.entry' | wc -l) cache entries"
cmp -s run-plain.txt run-buckets.txt || { diff run-plain.txt run-buckets.txt | head; fail "buckets changed run's outputs"; }
"$attnc" eval --ckpt run > eval-plain.txt
"$attnc" eval --ckpt run --cache-dir cache-eval --set 'decode.buckets=[8, 16, 24]' > eval-buckets.txt
[ "$(find cache-eval -name '*.entry' | wc -l)" -ge 4 ] || fail "eval did not compile its buckets"
grep -q "exact match" eval-buckets.txt || fail "eval reported no decoding: $(cat eval-buckets.txt)"
cmp -s eval-plain.txt eval-buckets.txt || { diff eval-plain.txt eval-buckets.txt | head; fail "buckets changed eval's report"; }
# Each bucket's program is compiled once into the compile cache: a second run stores nothing.
"$attnc" translate --ckpt run --cache-dir cache --set 'decode.buckets=[8, 16]' < lines.txt > first.txt 2>&1 ||
  failed "with buckets [8, 16]" first.txt
entries=$(find cache -name '*.entry' | wc -l)
[ "$entries" -eq 3 ] || fail "expected 3 cache entries (the program and 2 buckets), got $entries"
"$attnc" translate --ckpt run --cache-dir cache --set 'decode.buckets=[8, 16]' < lines.txt > second.txt 2>&1 ||
  failed "with cached buckets [8, 16]" second.txt
[ "$(find cache -name '*.entry' | wc -l)" -eq 3 ] || fail "the second run compiled again"
cmp -s first.txt second.txt || fail "the cached buckets translate differently"
# Batch buckets (decode.batch_buckets): a last batch of fewer lines runs in fewer rows, with
# the outputs (greedy and sampled) the full rows give, alone and with length buckets; every
# (length, rows) pair is compiled once: lengths {32, 16} x rows {50, 1, 8} is 6 programs.
for flags in "" "--set decode.sample=true"; do
  for lengths in "[]" "[16]"; do
    "$attnc" translate --ckpt run $flags --set "decode.buckets=$lengths" < lines.txt > rows-plain.txt 2> rows-plain.err ||
      failed "$flags $lengths" rows-plain.err
    "$attnc" translate --ckpt run $flags --set "decode.buckets=$lengths" --set 'decode.batch_buckets=[1, 8]' \
      --cache-dir cache-rows < lines.txt > rows-buckets.txt 2> rows-buckets.err ||
      failed "$flags $lengths with batch buckets" rows-buckets.err
    cmp -s rows-plain.txt rows-buckets.txt || { diff rows-plain.txt rows-buckets.txt | head; fail "batch buckets changed the outputs ($flags, lengths $lengths)"; }
    cmp -s rows-plain.err rows-buckets.err || { diff rows-plain.err rows-buckets.err | head; fail "batch buckets changed the errors ($flags, lengths $lengths)"; }
  done
done
[ "$(find cache-rows -name '*.entry' | wc -l)" -eq 6 ] || fail "expected 6 cache entries (the full program, 1 and 8 rows, each also for length 16), got $(find cache-rows -name '*.entry' | wc -l)"
cat > beam-rows.yaml <<YAML
decode:
  beam: 4
  batch_buckets: [1]
YAML
if "$attnc" check "$spec" -c beam-rows.yaml 2> beam-rows.err; then fail "batch buckets with beam search were accepted"; fi
grep -q "beam-rows.yaml:3:.*decode.batch_buckets are row counts of greedy decoding" beam-rows.err || fail "no located error: $(cat beam-rows.err)"
cat > bad.yaml <<YAML
decode:
  buckets: [16, 8]
YAML
if "$attnc" check "$spec" -c bad.yaml 2> bad.err; then fail "decreasing buckets were accepted"; fi
grep -q "bad.yaml:2:.*decode.buckets must increase" bad.err || fail "no located error: $(cat bad.err)"
# `attnc compile -o MODEL.o` carries the bucket programs: one object with every program's
# entries, a header listing them in attn_<model>_buckets, which a C program compiles against
# and links with (the object defines every entry the header declares).
"$attnc" compile "$spec" --set 'decode.buckets=[16]' --set 'decode.batch_buckets=[1]' -o obj/model.o > obj.log
nm obj/model.o > obj/symbols.txt
for entry in encode decode_step; do
  for prefix in "" s16_ b1_ s16_b1_; do
    grep -q " T attn_dates_bahdanau_${prefix}${entry}\$" obj/symbols.txt || fail "model.o has no attn_dates_bahdanau_${prefix}${entry}"
  done
done
cat > obj/probe.c <<'C'
#include "model.h"
#include "model.h" /* twice: the header is guarded */
#include <stdio.h>
int main(void) {
  int n = 0;
  for (const attn_program_info *const *p = attn_dates_bahdanau_buckets; *p; ++p)
    ++n;
  void (*entries[])(void **) = {attn_dates_bahdanau_encode, attn_dates_bahdanau_s16_b1_decode_step};
  printf("%d buckets, %d entries\n", n, (int)(sizeof entries / sizeof *entries));
  return 0;
}
C
cc -c -I"$src/runtime/include" -Iobj obj/probe.c -o obj/probe.o || fail "the header does not compile"
cc -r -nostdlib obj/probe.o obj/model.o -o obj/both.o || fail "the probe does not link with model.o"
nm -u obj/both.o > obj/undefined.txt
if grep -q " attn_dates_bahdanau_" obj/undefined.txt; then fail "model.o lacks entries its header declares: $(grep attn_dates_bahdanau_ obj/undefined.txt)"; fi
grep -q "attn_dates_bahdanau_buckets\[\] = {&attn_dates_bahdanau_s16_program, &attn_dates_bahdanau_s16_b1_program, &attn_dates_bahdanau_b1_program, 0}" obj/model.h \
  || fail "the header's bucket list: $(grep _buckets obj/model.h)"
echo "ok: buckets"
