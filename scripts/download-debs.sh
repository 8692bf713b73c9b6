#!/usr/bin/env bash
# Downloads Debian packages' .deb files into DIR with apt, installing nothing: the corpus
# scripts (po-corpus.sh, text-corpus.sh) extract text from them.
#
#   scripts/download-debs.sh DIR PACKAGE...
set -euo pipefail
dir=$1
shift
chown _apt "$dir" 2>/dev/null || true # apt downloads as its sandbox user
# apt-get download needs the package lists (a fresh machine may have none yet).
ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1 || apt-get update -qq
(cd "$dir" && apt-get download -qq "$@")
