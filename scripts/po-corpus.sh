#!/usr/bin/env bash
# A real English-German translation corpus from Debian's message catalogues (see
# scripts/po-corpus.py): downloads the packages' .deb files with apt (nothing is installed),
# extracts their German catalogues and writes OUT/{train,valid,test}.tsv and OUT/MANIFEST.
# models/po-en-de-transformer.yaml trains on corpora/po-en-de, the default OUT.
#
#   scripts/po-corpus.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-corpora/po-en-de}
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
# shellcheck disable=SC2046 # the package names are words
scripts/download-debs.sh "$debs" $(python3 scripts/po-corpus.py --packages)
python3 scripts/po-corpus.py "$debs" "$out"
