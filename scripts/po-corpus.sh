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
here=$PWD
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
chown _apt "$debs" 2>/dev/null || true # apt downloads as its sandbox user
# apt-get download needs the package lists (a fresh machine may have none yet).
ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1 || apt-get update -qq
(cd "$debs" && apt-get download -qq $(python3 "$here/scripts/po-corpus.py" --packages))
python3 scripts/po-corpus.py "$debs" "$out"
