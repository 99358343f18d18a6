#!/usr/bin/env bash
# Prepares the real parts the test tiers run against, idempotently and cached:
#   - Debian packages: etcd-server, keepalived, iproute2, iputils-ping (and python3-venv for moto)
#   - kube-apiserver and kubectl built from the Go module k8s.io/kubernetes at a pinned release
#   - moto's EC2 server in a virtualenv
#   - promtool, Prometheus' rule checker, taken out of Debian's prometheus package (nothing installed or started)
#   - as root (or with IPAM_REAL_NODE=1), the real-node tier: kubelet, kube-proxy, kube-scheduler and
#     kube-controller-manager from the same Go module, containerd + runc + CNI plugins from Debian, and a
#     static pause image (scripts/real-node/); IPAM_REAL_NODE=0 leaves it out
# Everything lands in $IPAM_TEST_CACHE (default: ${XDG_CACHE_HOME:-$HOME/.cache}/ipam-operators),
# laid out as fabric8 kube-api-test expects: k8s/<version>-linux-amd64/{etcd,kube-apiserver,kubectl}.
# Prints the environment variables the Maven test tiers read, as `export` lines, on stdout.
set -euo pipefail

K8S_VERSION="${IPAM_K8S_VERSION:-1.34.4}"
CACHE="${IPAM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipam-operators}"
ARCH_DIR="$CACHE/k8s/${K8S_VERSION}-linux-amd64"
MOTO_VENV="$CACHE/moto-venv"
# An exact pin keeps test runs reproducible; PyPI serves 5.1.22 (the last 5.1) and 5.2.x.
MOTO_VERSION="${IPAM_MOTO_VERSION:-5.1.22}"

log() { echo "[test-env] $*" >&2; }
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

install_debian_packages() {
  local missing=()
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v keepalived >/dev/null 2>&1 || missing+=(keepalived)
  command -v ip >/dev/null 2>&1 || missing+=(iproute2)
  command -v ping >/dev/null 2>&1 || missing+=(iputils-ping)
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    sudo_if_needed apt-get update -qq >&2
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
  # The etcd-server package starts a system etcd on 2379; our tests start their own on free ports.
  if command -v systemctl >/dev/null 2>&1; then systemctl stop etcd >/dev/null 2>&1 || true; fi
}

# k8s.io/kubernetes replaces its staging modules with local paths; Go ignores replace directives of
# dependencies, so a wrapper module must pin each staging module to its published v0.Y.Z tag.
build_kubernetes_binaries() {
  if [ -x "$ARCH_DIR/kube-apiserver" ] && [ -x "$ARCH_DIR/kubectl" ]; then
    log "kube-apiserver and kubectl $K8S_VERSION cached in $ARCH_DIR"
    return
  fi
  command -v go >/dev/null 2>&1 || { log "Go is required to build kube-apiserver"; exit 1; }
  local work staging_version gomod
  work="$CACHE/build/k8s-$K8S_VERSION"
  staging_version="v0.${K8S_VERSION#*.}"
  mkdir -p "$work" "$ARCH_DIR"
  log "building kube-apiserver and kubectl v$K8S_VERSION (first run: module download and a long compile)"
  gomod=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" \
    | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$gomod" ] || { log "could not download k8s.io/kubernetes@v$K8S_VERSION"; exit 1; }
  local go_line
  go_line=$(grep -m1 '^go ' "$gomod")
  {
    echo "module ipam-operators/test-env/kube-apiserver"
    echo
    echo "$go_line"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    grep -E '^\s*k8s\.io/[A-Za-z0-9._-]+ => \./staging/' "$gomod" \
      | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
  } >"$work/go.mod"
  cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy -e >&2 2>"$work/tidy.log" || true)
  (cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION \
      -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION" \
      -o "$ARCH_DIR/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl >&2)
  "$ARCH_DIR/kube-apiserver" --version >&2
}

# The real-node tier (scripts/real-node/): the node's Go binaries from a second wrapper module next to the
# apiserver's (same go.mod, so the shared packages come from the Go build cache), Debian's container runtime, and
# the sandbox ("pause") image, built from C with no registry.
real_node_wanted() {
  case "${IPAM_REAL_NODE:-}" in
    0|false) return 1 ;;
    1|true) return 0 ;;
    *) [ "$(id -u)" -eq 0 ] ;;
  esac
}

install_real_node_packages() {
  local missing=()
  command -v containerd >/dev/null 2>&1 || missing+=(containerd)
  [ -x /usr/sbin/runc ] || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null 2>&1 || missing+=(iptables)
  command -v conntrack >/dev/null 2>&1 || missing+=(conntrack)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages for the real node: ${missing[*]}"
    sudo_if_needed apt-get update -qq >&2
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
  # The containerd package may start a system containerd; the node starts its own on a private socket.
  if command -v systemctl >/dev/null 2>&1; then systemctl stop containerd >/dev/null 2>&1 || true; fi
}

build_real_node_binaries() {
  local b missing=0
  for b in kubelet kube-proxy kube-scheduler kube-controller-manager; do [ -x "$ARCH_DIR/$b" ] || missing=1; done
  if [ $missing -eq 0 ]; then
    log "kubelet, kube-proxy, kube-scheduler, kube-controller-manager $K8S_VERSION cached in $ARCH_DIR"
    return
  fi
  local apiserver_work="$CACHE/build/k8s-$K8S_VERSION" work="$CACHE/build/k8s-node-$K8S_VERSION"
  mkdir -p "$work"
  cp "$apiserver_work/go.mod" "$apiserver_work/go.sum" "$work/"
  sed -i 's|^module .*|module ipam-operators/test-env/kube-node|' "$work/go.mod"
  cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
  log "building kubelet, kube-proxy, kube-scheduler, kube-controller-manager v$K8S_VERSION (first run: 9-15 min on 2 cores)"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy -e >"$work/tidy.log" 2>&1 || true)
  (cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION \
      -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION" \
      -o "$ARCH_DIR/" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager >&2)
  "$ARCH_DIR/kubelet" --version >&2
}

build_pause_image() {
  local dir="$CACHE/real-node/images"
  [ -s "$dir/pause.tar" ] && return
  log "building the node's sandbox image (static pause)"
  mkdir -p "$dir/pause-root"
  gcc -Os -static -o "$dir/pause-root/pause" "$REAL_NODE_SCRIPTS/pause.c"
  strip "$dir/pause-root/pause"
  python3 "$REAL_NODE_SCRIPTS/mkimage.py" localhost/ipam-test/pause:1 "$dir/pause-root" "$dir/pause.tar.tmp" '["/pause"]' >&2
  mv "$dir/pause.tar.tmp" "$dir/pause.tar"
}

link_etcd() {
  ln -sf "$(command -v etcd)" "$ARCH_DIR/etcd"
}

install_moto() {
  # The stamp records the requested version, so changing the pin reinstalls.
  if [ -x "$MOTO_VENV/bin/moto_server" ] && [ "$(cat "$MOTO_VENV/.moto-version" 2>/dev/null)" = "$MOTO_VERSION" ]; then
    log "moto server $MOTO_VERSION cached in $MOTO_VENV"
    return
  fi
  log "installing moto[server] $MOTO_VERSION into $MOTO_VENV"
  python3 -m venv "$MOTO_VENV" >&2
  "$MOTO_VENV/bin/pip" install -q "moto[server]==$MOTO_VERSION" >&2
  echo "$MOTO_VERSION" >"$MOTO_VENV/.moto-version"
}

# promtool only: the package is downloaded and unpacked into the cache, so no Prometheus service is installed
# or started; the stamp records the package version, so a new Debian revision replaces it.
install_promtool() {
  local dir="$CACHE/prometheus" version
  version=$(apt-cache policy prometheus 2>/dev/null | sed -n 's/^ *Candidate: //p')
  if [ -z "$version" ] || [ "$version" = "(none)" ]; then
    sudo_if_needed apt-get update -qq >&2
    version=$(apt-cache policy prometheus 2>/dev/null | sed -n 's/^ *Candidate: //p')
  fi
  if [ -x "$dir/promtool" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$version" ]; then
    log "promtool $version cached in $dir"
    return
  fi
  log "unpacking promtool from Debian's prometheus $version"
  local work="$CACHE/build/prometheus"
  rm -rf "$work" && mkdir -p "$work" "$dir"
  (cd "$work" && apt-get download -qq "prometheus=$version" >&2 2>/dev/null \
    || sudo_if_needed sh -c "cd '$work' && apt-get download -qq 'prometheus=$version'" >&2)
  dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
  install -m 0755 "$work/root/usr/bin/promtool" "$dir/promtool"
  rm -rf "$work"
  echo "$version" >"$dir/.version"
  "$dir/promtool" --version >&2
}

start=$(date +%s)
mkdir -p "$CACHE"
# One run at a time per cache (concurrent runs would race on the build and the venv).
exec 9>"$CACHE/.test-env.lock"
flock 9
install_debian_packages
build_kubernetes_binaries
link_etcd
install_moto
install_promtool
# The node's parts under a lock of their own: their first build is long, and the tiers above must not wait for it.
flock -u 9
REAL_NODE_SCRIPTS="$(cd "$(dirname "$0")" && pwd)/real-node"
if real_node_wanted; then
  exec 8>"$CACHE/.real-node.lock"
  flock 8
  install_real_node_packages
  build_real_node_binaries
  build_pause_image
  flock -u 8
fi
log "ready in $(( $(date +%s) - start ))s"

echo "export KUBE_API_TEST_DIR='$CACHE'"
echo "export KUBE_API_TEST_OFFLINE_MODE=true"
echo "export KUBE_API_TEST_API_SERVER_VERSION='$K8S_VERSION'"
echo "export IPAM_MOTO_SERVER='$MOTO_VENV/bin/moto_server'"
echo "export IPAM_KEEPALIVED='$(command -v keepalived)'"
echo "export IPAM_PROMTOOL='$CACHE/prometheus/promtool'"
if real_node_wanted; then
  echo "export IPAM_REAL_NODE_SCRIPTS='$REAL_NODE_SCRIPTS'"
  echo "export IPAM_REAL_NODE_IMAGES='$CACHE/real-node/images'"
fi
