#!/usr/bin/env bash
# Times scripts/demo.sh as a new user meets it (issue 38 item 1): a fresh Debian 12 (debootstrap's
# minbase, less than a standard install: the setup installs more) in a chroot on this machine,
# this repository cloned into it, then the demo from its first command to its last line: the
# packages it installs, its build and its run. Needs root and a reachable Debian mirror.
#   bench/fresh_demo.sh [OUT]      (OUT: default bench/results/debian12-2core/demo)
set -euo pipefail
OUT=$(realpath -m "${1:-$(dirname "$0")/results/debian12-2core/demo}")
REPO=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "fresh_demo.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "fresh_demo.sh: apt-get install debootstrap" >&2; exit 1; }
W=$(mktemp -d /tmp/outboard-fresh.XXXXXX)
R="$W/root"
cleanup() {
  for m in dev/shm dev/pts dev sys proc; do umount -l "$R/$m" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$OUT"
debootstrap --variant=minbase bookworm "$R" http://deb.debian.org/debian >"$W/debootstrap.log" 2>&1 ||
  { tail -20 "$W/debootstrap.log"; exit 1; }
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --bind /dev "$R/dev"
mount --bind /dev/pts "$R/dev/pts"
mount -t tmpfs tmpfs "$R/dev/shm"  # UCX's shared memory
cp /etc/resolv.conf "$R/etc/resolv.conf"
git clone -q "$REPO" "$R/root/outboard"
start=$(date +%s)
chroot "$R" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c \
  'cd /root/outboard && scripts/demo.sh' >"$OUT/demo.log" 2>&1 || { tail -30 "$OUT/demo.log"; exit 1; }
seconds=$(($(date +%s) - start))
echo "scripts/demo.sh on a fresh Debian 12 (minbase chroot), $(nproc) cores: $seconds s ($(git -C "$REPO" rev-parse --short HEAD))" |
  tee "$OUT/time.txt"
