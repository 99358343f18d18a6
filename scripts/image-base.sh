#!/usr/bin/env bash
# Builds the base of the ipam-operators images, with no Docker and no registry: a Debian root file
# system (the machine's own apt sources, suite of the machine) with keepalived and CA certificates,
# a Java runtime made by jlink, a non-root user 65532, packed as a docker-archive tar that Jib reads
# as `tar://`. Cached per recipe, JDK and package versions. Prints the tar's path on stdout. Needs
# root (mmdebstrap --mode=root).
#
# Usage: image-base.sh [amd64|arm64]. amd64 (the default): the runtime is jlinked from a JDK 25 or
# newer (IPAM_IMAGE_JDK=<java home>, else the newest under /usr/lib/jvm), so that the images can carry
# an AOT cache (distribution/README.md, "AOT cache"); with none, from the JDK that builds the project
# (no cache then). arm64: the root file system is installed under qemu-user emulation (binfmt_misc,
# registered for the build only), the runtime jlinked from Debian's arm64 jmods by Debian's amd64
# jlink of the same version (jlink makes a runtime only from jmods of its own version).
#
# Why keepalived is in the base: the keepalived DaemonSet runs the same image as the operator (its
# config reloader is an `ipam` subcommand), so a cluster mirrors one image.
set -euo pipefail
log() { echo "[image-base] $*" >&2; }

arch="${1:-amd64}"
case "$arch" in amd64|arm64) ;; *) log "unknown architecture $arch (amd64 or arm64)"; exit 1 ;; esac
if [ "$(id -u)" -ne 0 ]; then
  log "needs root (mmdebstrap --mode=root)"; exit 1
fi
scripts="$(cd "$(dirname "$0")" && pwd)"
cache="${IPAM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipam-operators}/images"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

if ! command -v mmdebstrap >/dev/null; then
  log "installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >&2
fi

. /etc/os-release
suite="${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}"
packages="keepalived,iproute2,procps,curl,ca-certificates,tzdata,netbase,libstdc++6,zlib1g"   # ip: the reloader's route lookup; kill (procps): the reloader's SIGHUP to keepalived; curl: keepalived's health checks of Local Services; the last two: the JVM
modules="java.base,java.compiler,java.desktop,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec,jdk.httpserver,jdk.management,jdk.unsupported,jdk.zipfs"
versions="$(apt-cache policy keepalived ca-certificates libc6 libssl3 2>/dev/null | grep -E '^[a-z]|Candidate' | tr -d ' \n')"
# The feature version of the JDK at $1 (0 when it is none).
feature() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null || true; }
# The JDK whose jlink makes the amd64 runtime: IPAM_IMAGE_JDK, else the newest JDK >= 25 under /usr/lib/jvm.
image_jdk() {
  local home best="" best_feature=0 f
  if [ -n "${IPAM_IMAGE_JDK:-}" ]; then
    [ -x "$IPAM_IMAGE_JDK/bin/jlink" ] || { log "IPAM_IMAGE_JDK=$IPAM_IMAGE_JDK has no bin/jlink"; exit 1; }
    echo "$IPAM_IMAGE_JDK"; return
  fi
  for home in /usr/lib/jvm/*/; do
    home="${home%/}"
    [ -x "$home/bin/jlink" ] && [ ! -L "$home" ] || continue
    f="$(feature "$home")"
    if [ "${f:-0}" -ge 25 ] && [ "${f:-0}" -gt "$best_feature" ]; then best="$home" best_feature="$f"; fi
  done
  if [ -n "$best" ]; then echo "$best"; return; fi
  log "WARNING: no JDK 25 or newer under /usr/lib/jvm (nor IPAM_IMAGE_JDK): the amd64 runtime is jlinked from the build JDK, and the images get no AOT cache"
  dirname "$(dirname "$(readlink -f "$(command -v javac)")")"
}

if [ "$arch" = amd64 ]; then
  java_home="$(image_jdk)"
  jdk="$("$java_home/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p')"
  key="$( (cat "$0"; echo "$suite $jdk $modules $versions") | sha256sum | cut -c1-16)"
  out="$cache/base-$key.tar"
else
  jdk="debian-$(apt-cache policy openjdk-17-jdk-headless 2>/dev/null | sed -n 's/^ *Candidate: //p')"
  key="$( (cat "$0"; echo "$arch $suite $jdk $modules $versions") | sha256sum | cut -c1-16)"
  out="$cache/base-$arch-$key.tar"
fi
if [ -s "$out" ]; then
  log "cached: $out"; echo "$out"; exit 0
fi

work="$(mktemp -d)"
cleanup=("rm -rf '$work'")
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT
rootfs="$work/rootfs"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1767225600}"   # 2026-01-01: same inputs, same bytes
mmdebstrap_root=(mmdebstrap --quiet --mode=root --variant=essential
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --include="$packages"
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/info/*')

# Runs arm64 binaries through qemu-aarch64-static for this build: an own binfmt_misc entry (F: the
# interpreter is opened now, so the chroot needs no copy of it), removed again on exit.
emulate_arm64() {
  local qemu binfmt=/proc/sys/fs/binfmt_misc name="ipam-operators-aarch64"
  qemu="$(bash "$scripts/qemu-aarch64.sh")"
  if ! mountpoint -q "$binfmt"; then
    mount -t binfmt_misc binfmt_misc "$binfmt"
    cleanup+=("umount '$binfmt'")
  fi
  [ ! -e "$binfmt/$name" ] || echo -1 >"$binfmt/$name"
  printf ':%s:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:%s:F\n' \
    "$name" "$qemu" >"$binfmt/register"
  cleanup=("echo -1 >'$binfmt/$name'" "${cleanup[@]}")
}

if [ "$arch" = amd64 ]; then
  log "Debian $suite root file system with $packages"
  "${mmdebstrap_root[@]}" "$suite" "$rootfs" >&2
  log "Java runtime by jlink from $java_home ($jdk)"
  compress=2
  [ "$(feature "$java_home")" -lt 21 ] || compress=zip-6   # jlink 21 and newer name the levels
  "$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
    --compress="$compress" --output "$rootfs/opt/java" >&2
  find "$rootfs/opt/java" -name '*.so' -exec strip --strip-unneeded {} + 2>/dev/null || true
else
  log "Debian's openjdk-17-jdk-headless, amd64 (jlink) and arm64 (jmods)"
  jdks="$work/jdks"
  mmdebstrap --quiet --mode=root --variant=extract --architectures=amd64,arm64 \
    --include=openjdk-17-jdk-headless:amd64,openjdk-17-jdk-headless:arm64 "$suite" "$jdks" >&2
  emulate_arm64
  log "Debian $suite arm64 root file system with $packages (emulated)"
  "${mmdebstrap_root[@]}" --architectures=arm64 --skip=check/qemu "$suite" "$rootfs" >&2
  jlink="$jdks/usr/lib/jvm/java-17-openjdk-amd64/bin/jlink"
  jmods="$jdks/usr/lib/jvm/java-17-openjdk-arm64/jmods"
  jdk="$("$jdks/usr/lib/jvm/java-17-openjdk-amd64/bin/java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java.runtime.version = //p')"
  log "Java runtime by jlink ($jdk) from $jmods"
  # --strip-java-debug-attributes: --strip-debug would also strip native code, with the host's (amd64) strip.
  "$jlink" --module-path "$jmods" --add-modules "$modules" --strip-java-debug-attributes --no-man-pages \
    --no-header-files --compress=2 --output "$rootfs/opt/java" >&2
fi

echo 'ipam:x:65532:65532:ipam-operators:/home/ipam:/usr/sbin/nologin' >>"$rootfs/etc/passwd"
echo 'ipam:x:65532:' >>"$rootfs/etc/group"
mkdir -p "$rootfs/home/ipam" && chown 65532:65532 "$rootfs/home/ipam"
rm -rf "$rootfs"/var/cache/* "$rootfs"/var/log/* "$rootfs"/tmp/* "$rootfs"/run/* "$rootfs"/dev/* "$rootfs"/proc/* "$rootfs"/sys/*
chmod 1777 "$rootfs/tmp"

log "docker-archive tar"
layer="$work/layer.tar"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner --format=pax \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -C "$rootfs" -cf "$layer" .
diff_id="sha256:$(sha256sum "$layer" | cut -d' ' -f1)"
gzip -n -9 "$layer"
archive="$work/archive"
mkdir -p "$archive"
mv "$layer.gz" "$archive/layer.tar.gz"
created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
cat >"$archive/config.json" <<EOF
{"architecture":"$arch","os":"linux","created":"$created",
 "config":{"Env":["PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","JAVA_HOME=/opt/java"],"User":"65532:65532","WorkingDir":"/home/ipam"},
 "rootfs":{"type":"layers","diff_ids":["$diff_id"]},
 "history":[{"created":"$created","created_by":"scripts/image-base.sh: Debian $suite $arch, $packages, jlink $jdk"}]}
EOF
echo '[{"Config":"config.json","RepoTags":["ipam-operators/base:'"$key"'"],"Layers":["layer.tar.gz"]}]' >"$archive/manifest.json"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --numeric-owner -C "$archive" -cf "$out.tmp" config.json manifest.json layer.tar.gz
mv "$out.tmp" "$out"
log "built $out ($(du -h "$out" | cut -f1))"
echo "$out"
