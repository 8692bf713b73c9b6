#!/usr/bin/env bash
# Plain English text from Debian's documentation packages (see scripts/text-corpus.py): downloads
# the packages' .deb files with apt (nothing is installed) and writes OUT/{train,valid}.txt and
# OUT/MANIFEST. models/debian-docs-transformer.yaml learns from corpora/debian-docs, the default OUT.
#
#   scripts/text-corpus.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-corpora/debian-docs}
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
# shellcheck disable=SC2046 # the package names are words
scripts/download-debs.sh "$debs" $(python3 scripts/text-corpus.py --packages)
python3 scripts/text-corpus.py "$debs" "$out"
