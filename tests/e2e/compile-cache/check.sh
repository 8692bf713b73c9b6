#!/usr/bin/env bash
# The compile cache as a user meets it (docs/cli.md#the-compile-cache):
#
#   check.sh ATTNC SOURCE_DIR WORK_DIR
#
# A first run stores one entry; a second run loads it (no new store: the entry file keeps its
# inode) and prints the same; a corrupted and a truncated entry, another key's entry, and a
# FIFO, a link or a directory in an entry's place are reported, never loaded, and rebuilt;
# another spec is another entry; --no-compile-cache stores nothing.
set -euo pipefail
attnc=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
model=$src/models/rnn-sine.yaml
run() { "$attnc" run "$model" --count 4 --cache-dir cache "$@"; }
entries() { find cache -name '*.entry' | sort; }
fail() { echo "FAIL: $*"; exit 1; }

run > first.txt 2> first.err
[ "$(entries | wc -l)" -eq 1 ] || fail "expected one entry after the first run: $(entries)"
entry=$(entries)
inode=$(stat -c %i "$entry")

run > second.txt 2> second.err
cmp first.txt second.txt || fail "the cached program printed something else"
[ "$(stat -c %i "$entry")" = "$inode" ] || fail "the second run compiled and stored again"
[ ! -s second.err ] || { cat second.err; fail "the second run complained"; }

# A byte flipped in the middle of the object: the checksum catches it.
size=$(stat -c %s "$entry")
printf '\xff' | dd of="$entry" bs=1 seek=$((size / 2)) conv=notrunc status=none
run > third.txt 2> third.err
grep -q "compile cache: .*checksum does not match" third.err || { cat third.err; fail "no report of the damaged entry"; }
cmp first.txt third.txt || fail "output after the damaged entry differs"
[ "$(entries)" = "$entry" ] || fail "the damaged entry was not rebuilt"

# Truncated (a full disk, a killed copy): reported as such, rebuilt.
truncate -s $((size / 3)) "$entry"
run > fourth.txt 2> fourth.err
grep -q "compile cache: .*truncated" fourth.err || { cat fourth.err; fail "no report of the truncated entry"; }
cmp first.txt fourth.txt || fail "output after the truncated entry differs"
run > fifth.txt 2> fifth.err
[ ! -s fifth.err ] || { cat fifth.err; fail "the rebuilt entry does not load"; }

# Another spec compiles another program: a second entry.
run --set model.rnn.hidden=8 > /dev/null
[ "$(entries | wc -l)" -eq 2 ] || fail "a changed spec did not make a new entry: $(entries)"

# Another program's entry copied over this one's file: its key is in its checksum, so it is
# reported and rebuilt, never run as this model (a tanh MLP's entry once gave a relu MLP's
# eval the other model's loss).
other=$(entries | grep -v "^$entry\$")
cp "$other" "$entry"
run > seventh.txt 2> seventh.err
grep -q "compile cache: .*another program's entry" seventh.err ||
  { cat seventh.err; fail "no report of another key's entry"; }
cmp first.txt seventh.txt || fail "output after another key's entry differs"
# What is not a regular file at an entry's name (a FIFO would block a reader forever; a link
# to /dev/zero reads without end; a directory): reported, replaced, never read.
for kind in fifo link directory; do
  rm -f "$entry"
  case $kind in
    fifo) mkfifo "$entry" ;;
    link) ln -s /dev/zero "$entry" ;;
    directory) mkdir "$entry" && touch "$entry/x" ;;
  esac
  timeout 300 "$attnc" run "$model" --count 4 --cache-dir cache > $kind.txt 2> $kind.err ||
    { cat $kind.err; fail "run with a $kind for an entry failed (or hung)"; }
  grep -q "compile cache: .*not a compile-cache entry" $kind.err ||
    { cat $kind.err; fail "no report of the $kind"; }
  cmp first.txt $kind.txt || fail "output with a $kind for an entry differs"
  [ -f "$entry" ] && [ ! -L "$entry" ] || fail "the $kind was not replaced by an entry"
done

# --no-compile-cache neither reads nor writes.
"$attnc" run "$model" --count 4 --cache-dir nocache --no-compile-cache > sixth.txt
[ ! -e nocache ] || fail "--no-compile-cache wrote $(ls nocache)"
cmp first.txt sixth.txt || fail "output without the cache differs"
echo "PASS"
