#!/usr/bin/env bash
# Runs the README's two commands (scripts/test.sh, then scripts/demo.sh) on a really fresh
# Debian bookworm system: a minimal debootstrap chroot holding nothing but the repo's tracked
# files (as they are in the work tree). A package this machine once got by hand hides a
# missing install step from CI; here it cannot.
#
#   scripts/fresh-check.sh            # both commands
#   scripts/fresh-check.sh test       # only scripts/test.sh (or: demo)
#
# Needs root. The pristine system is made once (debootstrap --variant=minbase from the apt
# source this machine is configured with, about half a minute) and cached as a tarball under
# $ATTN_FRESH_CACHE (default /var/cache/attnc-fresh); every run unpacks a new copy of it into
# a temporary directory, which is removed afterwards ($ATTN_FRESH_KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

[ "$(id -u)" -eq 0 ] || { echo "fresh-check: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
commands=("${@:-test demo}")
read -r -a commands <<<"${commands[*]}"
for c in "${commands[@]}"; do
  case "$c" in test | demo) ;; *) echo "fresh-check: unknown command '$c' (test, demo)" >&2; exit 2 ;; esac
done

# The Debian mirror this machine's apt uses: deb822 sources first, then the one-line format.
mirror=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}

cache=${ATTN_FRESH_CACHE:-/var/cache/attnc-fresh}
base="$cache/bookworm-minbase.tar"
start=$(date +%s)
if [ ! -f "$base" ]; then
  if ! command -v debootstrap >/dev/null; then
    echo "fresh-check: installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
  fi
  echo "fresh-check: making a minimal bookworm system from $mirror (cached in $base)"
  mkdir -p "$cache"
  staging=$(mktemp -d "$cache/debootstrap.XXXXXX")
  debootstrap --variant=minbase bookworm "$staging" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { echo "fresh-check: debootstrap failed, see $cache/debootstrap.log" >&2; rm -rf "$staging"; exit 1; }
  tar -C "$staging" -cf "$base.tmp" .
  mv "$base.tmp" "$base" # atomic: a half-written tarball is never taken for the cache
  rm -rf "$staging"
fi

root=$(mktemp -d /tmp/attnc-fresh.XXXXXX)
cleanup() {
  for m in dev/pts dev sys proc; do
    mountpoint -q "$root/$m" && umount -l "$root/$m"
  done
  if [ "${ATTN_FRESH_KEEP:-0}" = 1 ]; then
    echo "fresh-check: kept $root"
  else
    rm -rf "$root"
  fi
}
trap cleanup EXIT
tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/src"
git ls-files -z | tar --null -T - -cf - | tar -C "$root/src" -xf -
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
echo "fresh-check: system ready in $(($(date +%s) - start)) s; running ${commands[*]} in $root/src"

status=0
for c in "${commands[@]}"; do
  t0=$(date +%s)
  # A clean environment, as a new user's login shell would have (CI adds only CI=true).
  if chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb /bin/bash -c "cd /src && scripts/$c.sh"; then
    echo "fresh-check: scripts/$c.sh passed in $(($(date +%s) - t0)) s"
  else
    status=$?
    echo "fresh-check: scripts/$c.sh FAILED (exit $status) after $(($(date +%s) - t0)) s"
    break
  fi
done
echo "fresh-check: $([ $status -eq 0 ] && echo passed || echo FAILED) in $(($(date +%s) - start)) s in all"
exit $status
