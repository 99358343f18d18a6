#!/bin/bash
# Stops what up.sh started and removes every trace of it from the host: processes (by recorded PID, plus
# the containerd shims and container processes that belong to this node's socket/cgroup), mounts,
# links, iptables rules/chains, cgroups, sysctls, and the state. Safe to run at any time, also on the remains of
# a crashed run (test-support runs it before each start); runs to the end whatever fails.
# Usage: down.sh [--keep-state]
set -uo pipefail
S=${IPAM_REAL_NODE_STATE:-/var/tmp/ipam-real-node}
CACHE=${IPAM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipam-operators}
K8S_BIN=${K8S_BIN:-$CACHE/k8s/${IPAM_K8S_VERSION:-1.34.4}-linux-amd64}
export PATH=$K8S_BIN:$PATH
CTR="ctr --address $S/run/containerd.sock -n k8s.io"
stop() { # name: SIGTERM, then SIGKILL after 10 s
  local f="$S/pids/$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$f"
}

# 1. nothing may recreate pods, then the node agent goes
stop kube-controller-manager; stop kube-scheduler; stop kubelet; stop kube-proxy
# 2. every container/sandbox of this containerd (CRI namespace k8s.io), then containerd and its shims
if [ -S "$S/run/containerd.sock" ] && $CTR version >/dev/null 2>&1; then
  for c in $($CTR containers ls -q); do
    $CTR tasks kill -s SIGKILL "$c" >/dev/null 2>&1
    for _ in $(seq 25); do $CTR tasks ls -q 2>/dev/null | grep -qx "$c" || break
      $CTR tasks delete -f "$c" >/dev/null 2>&1 && break; sleep 0.2; done
    $CTR containers delete "$c" >/dev/null 2>&1
  done
fi
stop containerd
for p in $(ls /proc | grep -E '^[0-9]+$'); do # shims started for our socket only
  { tr "\0" " " <"/proc/$p/cmdline"; } 2>/dev/null | grep -q -- "-address $S/run/containerd.sock" && kill -9 "$p" 2>/dev/null
done
# any process left in this node's cgroup subtree is one of our containers
for h in /sys/fs/cgroup/*/ipam-node; do
  [ -d "$h" ] && find "$h" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | while read -r p; do kill -9 "$p" 2>/dev/null; done
done
# 3. control plane
stop kube-apiserver; stop etcd
# 4. mounts under $S (pod volumes, overlay rootfs, netns), deepest first
findmnt -rn -o TARGET | grep "^$S/" | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
# 5. cgroups, deepest first
for h in /sys/fs/cgroup/*/ipam-node; do [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null; done
# 6. network: links, iptables (kube-proxy's own cleanup, kubelet canaries, CNI portmap, our FORWARD guard)
ip link del cni0 2>/dev/null
# ipamnode0 and the interfaces tests add for the node's hostNetwork pods (named ipamnode-*)
for l in $(ip -br link | awk '$1 ~ /^ipamnode/ {sub(/@.*/, "", $1); print $1}'); do ip link del "$l" 2>/dev/null; done
kube-proxy --cleanup >/dev/null 2>&1
iptables -D FORWARD -i cni0 ! -o cni0 -j DROP 2>/dev/null
for ipt in iptables ip6tables; do
  for t in mangle nat filter; do
    for ch in $($ipt -t $t -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/{print $2}'); do $ipt -t $t -F "$ch" 2>/dev/null; done
    $ipt -t $t -S 2>/dev/null | grep -E '^-A [A-Z]+ .*-j (KUBE-|CNI-)' | sed 's/^-A/-D/' | while read -r r; do eval $ipt -t $t "$r"; done
    for ch in $($ipt -t $t -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/{print $2}'); do $ipt -t $t -X "$ch" 2>/dev/null; done
  done
done
# 7. sysctls the kubelet / CNI bridge changed
[ -f "$S/host-state" ] && while IFS= read -r kv; do sysctl -qw "$kv"; done <"$S/host-state" && rm -f "$S/host-state"
# 8. fixed host paths the kubelet, containerd shims and libcni use no matter what
for d in /var/log/pods; do [ -d $d ] && [ -f "$S/started" ] && find $d -mindepth 1 -maxdepth 1 -newer "$S/started" -exec rm -rf {} + ; rmdir $d 2>/dev/null; done
[ -d /var/lib/cni/results ] && [ -f "$S/started" ] && find /var/lib/cni/results -maxdepth 1 \( -name "test-*" -o -name "cni-loopback-*" \) -newer "$S/started" -delete; rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null
rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint 2>/dev/null
rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null
rm -rf /run/containerd/fifo /run/containerd/s /run/containerd/runc/k8s.io 2>/dev/null; rmdir /run/containerd/runc /run/containerd 2>/dev/null
# 9. state
if [ "${1:-}" != "--keep-state" ]; then
  rm -rf "$S"/{etcd,containerd,kubelet,pod-logs,volume-plugins,cni,run,pids,pki,admin.kubeconfig,resolv.conf,started}
fi
# 10. what is left is reported (stdout) and makes the exit status 1
left=$( { ip -br link | grep -E '^(cni0 |ipamnode)'; iptables-save 2>/dev/null | grep -E 'KUBE-|CNI-|cni0';
  findmnt -rn -o TARGET | grep "^$S/"; ls -d /sys/fs/cgroup/*/ipam-node 2>/dev/null; } || true)
if [ -n "$left" ]; then echo "[down] left behind:"; echo "$left"; exit 1; fi
echo "[down] done, nothing left"
