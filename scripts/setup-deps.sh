#!/usr/bin/env bash
# Installs attnc's build dependencies from Debian's packages (bookworm), and the packages named
# as arguments (scripts/fuzz.sh's clang, scripts/bench.sh's PyTorch). Idempotent: quiet and
# quick when everything is already there. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache python3
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  libdnnl-dev ocl-icd-opencl-dev libyaml-cpp-dev libgtest-dev
  libcli11-dev nlohmann-json3-dev libpng-dev zlib1g-dev
  pkg-config libcairo2-dev fonts-dejavu-core libsentencepiece-dev
  libopenmpi-dev openmpi-bin
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
