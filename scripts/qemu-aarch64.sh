#!/usr/bin/env bash
# Prints the path of a qemu-aarch64-static (Debian's qemu-user-static, unpacked into the test cache, not
# installed): image-base.sh runs the arm64 base's maintainer scripts with it, and the image tests start the
# arm64 image with it. Cached per package version.
set -euo pipefail
log() { echo "[qemu] $*" >&2; }

cache="${IPAM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipam-operators}/qemu"
mkdir -p "$cache"
exec 8>"$cache/.lock"
flock 8

version="$(apt-cache policy qemu-user-static 2>/dev/null | sed -n 's/^ *Candidate: //p' | tr ':~+' '---')"
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
  log "no qemu-user-static in the apt sources (apt-get update?)"; exit 1
fi
out="$cache/$version/qemu-aarch64-static"
if [ ! -x "$out" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  log "fetching qemu-user-static $version"
  (cd "$work" && apt-get download -q qemu-user-static) >&2
  dpkg-deb -x "$work"/qemu-user-static_*.deb "$work/x"
  mkdir -p "$(dirname "$out")"
  cp "$work/x/usr/bin/qemu-aarch64-static" "$out.tmp"
  mv "$out.tmp" "$out"
fi
echo "$out"
