#!/bin/bash
# Brings up a real single-node Kubernetes on this machine (root, no systemd needed, cgroup v1 or hybrid):
# etcd + kube-apiserver + kube-controller-manager + kube-scheduler + containerd/runc + kubelet + kube-proxy.
# Everything lives under $IPAM_REAL_NODE_STATE; nothing listens on the machine's own interfaces: the apiserver and
# the kubelet bind $NODE_IP, an address on the port-less bridge ipamnode0; pods get 198.51.100.0/24 on bridge cni0
# with routes only to the Service range (203.0.113.0/24) and the node; no masquerade; pulls go to a closed port.
# One node per machine: the caller holds the machine-wide lock (test-support's RealNode does) and runs down.sh
# afterwards, which restores every host setting this script changes.
# Needs what scripts/test-env.sh prepares as root: containerd runc containernetworking-plugins iptables conntrack
# (Debian), etcd/kube-apiserver/kubectl/kubelet/kube-proxy/kube-scheduler/kube-controller-manager in $K8S_BIN and
# the pause image in $IPAM_REAL_NODE_IMAGES.
set -euo pipefail
S=${IPAM_REAL_NODE_STATE:-/var/tmp/ipam-real-node}
CACHE=${IPAM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipam-operators}
K8S_BIN=${K8S_BIN:-$CACHE/k8s/${IPAM_K8S_VERSION:-1.34.4}-linux-amd64}
IMAGES=${IPAM_REAL_NODE_IMAGES:-$CACHE/real-node/images}
HERE=$(cd "$(dirname "$0")" && pwd)
NODE_IP=192.0.2.1   # on bridge ipamnode0 (no ports; some kernels have no dummy links), reachable from pods via the cni0 gateway
NODE_NAME=${NODE_NAME:-node-1}
API_PORT=${API_PORT:-16443}
ETCD_PORT=${ETCD_PORT:-23790}
SVC_CIDR=203.0.113.0/24; SVC_IP=203.0.113.1
POD_CIDR=198.51.100.0/24
PAUSE_IMAGE=localhost/ipam-test/pause:1
for b in etcd kube-apiserver kubectl kubelet kube-proxy kube-scheduler kube-controller-manager; do
  [ -x "$K8S_BIN/$b" ] || { echo "[up] $K8S_BIN/$b missing: run scripts/test-env.sh as root" >&2; exit 3; }
done
[ -s "$IMAGES/pause.tar" ] || { echo "[up] $IMAGES/pause.tar missing: run scripts/test-env.sh as root" >&2; exit 3; }
for b in containerd ctr iptables /usr/sbin/runc /usr/lib/cni/bridge; do
  command -v "$b" >/dev/null || { echo "[up] $b missing: run scripts/test-env.sh as root" >&2; exit 3; }
done
export PATH=$K8S_BIN:$PATH
mkdir -p "$S"/{logs,pids,run,cni/net.d,cni/ipam,etcd,kubelet,pod-logs,volume-plugins,containerd}
t0=$(date +%s%N)
log() { local ms=$(( ($(date +%s%N) - t0) / 1000000 )); printf '[up %3d.%03ds] %s\n' $((ms / 1000)) $((ms % 1000)) "$*"; }
start() { # name cmd... ; runs in background, records the pid
  local n=$1; shift
  if [ -f "$S/pids/$n.pid" ] && kill -0 "$(cat "$S/pids/$n.pid")" 2>/dev/null; then return; fi
  setsid "$@" >"$S/logs/$n.log" 2>&1 < /dev/null & echo $! >"$S/pids/$n.pid"
}
wait_for() { # what seconds cmd...
  local what=$1 n=$2; shift 2
  for _ in $(seq $((n * 5))); do "$@" >/dev/null 2>&1 && { log "$what ready"; return; }; sleep 0.2; done
  log "timeout waiting for $what"; exit 1
}

# --- host state we change (restored by down.sh) ---
if [ ! -f "$S/host-state" ]; then
  date -u +%FT%TZ >"$S/started"   # down.sh removes only host files newer than this
  for k in net.ipv4.ip_forward vm.overcommit_memory kernel.panic kernel.panic_on_oops; do
    echo "$k=$(sysctl -n $k)"; done >"$S/host-state"
fi
ip link show ipamnode0 >/dev/null 2>&1 || { ip link add ipamnode0 type bridge; ip addr add "$NODE_IP/32" dev ipamnode0; ip link set ipamnode0 up; }
# Pods may only talk to this machine: nothing from cni0 is forwarded anywhere but cni0.
iptables -C FORWARD -i cni0 ! -o cni0 -j DROP 2>/dev/null || iptables -I FORWARD -i cni0 ! -o cni0 -j DROP
# kubelet wants its --cgroup-root to exist in every v1 hierarchy
for h in /sys/fs/cgroup/*/; do case $h in */unified/) continue;; esac; mkdir -p "${h}ipam-node"; done
# On cgroup v1 the whole node competes with each busy host process as one task of weight 1024: on a shared machine
# its pods starve (JVMs took minutes to start and were killed by their probes). Weigh it as four tasks.
[ -f /sys/fs/cgroup/cpu/ipam-node/cpu.shares ] && echo 4096 >/sys/fs/cgroup/cpu/ipam-node/cpu.shares

# --- PKI and kubeconfig (one system:masters client cert for every component: a test node, not a production cluster) ---
"$HERE/pki.sh" "$S/pki" "$NODE_IP" "$SVC_IP"
KC=$S/admin.kubeconfig
cat >"$KC" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "https://$NODE_IP:$API_PORT", certificate-authority: $S/pki/ca.crt}}]
users: [{name: admin, user: {client-certificate: $S/pki/admin.crt, client-key: $S/pki/admin.key}}]
contexts: [{name: test, context: {cluster: test, user: admin}}]
current-context: test
EOF

# --- etcd + kube-apiserver ---
start etcd etcd --name test --data-dir "$S/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" \
  --initial-cluster "test=http://127.0.0.1:$((ETCD_PORT + 10))"
start kube-apiserver kube-apiserver --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" --cert-dir "$S/pki" \
  --tls-cert-file "$S/pki/apiserver.crt" --tls-private-key-file "$S/pki/apiserver.key" \
  --client-ca-file "$S/pki/ca.crt" --service-cluster-ip-range "$SVC_CIDR" \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$S/pki/sa.pub" \
  --service-account-signing-key-file "$S/pki/sa.key" --authorization-mode Node,RBAC --allow-privileged=true \
  --kubelet-preferred-address-types InternalIP \
  --kubelet-client-certificate "$S/pki/admin.crt" --kubelet-client-key "$S/pki/admin.key" --profiling=false

# --- containerd (runc, cgroupfs, overlayfs), CNI bridge, local pause image ---
cat >"$S/containerd/config.toml" <<EOF
version = 2
root = "$S/containerd/root"
state = "$S/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$S/run/containerd.sock"
[ttrpc]
  address = "$S/run/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$S/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  # This VM withholds CAP_SYS_RESOURCE even from root: runc cannot lower oom_score_adj (kubelet asks -998 for
  # sandboxes, -997 for Guaranteed pods) and fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "${SNAPSHOTTER:-overlayfs}"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "$S/containerd/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$S/containerd/certs.d"   # pulls from the usual registries go to a closed local port
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$S/cni/net.d"
EOF
cat >"$S/cni/net.d/10-test.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "test", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$S/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]],
            "routes": [{"dst": "$SVC_CIDR"}, {"dst": "$NODE_IP/32"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
# No image may come from a registry (images are imported; pods use imagePullPolicy Never/IfNotPresent); should a
# pull happen anyway it hits 127.0.0.1:9 instead of the Internet. containerd 1.6 has no "_default" hosts entry,
# so this covers the registries listed here only.
for r in docker.io registry.k8s.io k8s.gcr.io gcr.io quay.io ghcr.io mcr.microsoft.com public.ecr.aws; do
  mkdir -p "$S/containerd/certs.d/$r"
  printf 'server = "http://127.0.0.1:9"\n[host."http://127.0.0.1:9"]\n  capabilities = ["pull", "resolve"]\n' \
    >"$S/containerd/certs.d/$r/hosts.toml"
done
start containerd containerd --config "$S/containerd/config.toml"
CTR="ctr --address $S/run/containerd.sock -n k8s.io"
wait_for containerd 30 $CTR version
$CTR images ls -q | grep -qx "$PAUSE_IMAGE" || $CTR images import "$IMAGES/pause.tar" >/dev/null
log "pause image imported"

wait_for kube-apiserver 60 kubectl --kubeconfig "$KC" get --raw /readyz

# --- controller-manager, scheduler ---
start kube-controller-manager kube-controller-manager --kubeconfig "$KC" --leader-elect=false \
  --service-account-private-key-file "$S/pki/sa.key" --root-ca-file "$S/pki/ca.crt" \
  --controllers '*' --bind-address 127.0.0.1 --secure-port 0 --use-service-account-credentials=false
start kube-scheduler kube-scheduler --kubeconfig "$KC" --leader-elect=false --bind-address 127.0.0.1 --secure-port 0

# --- kubelet ---
echo "nameserver $NODE_IP" >"$S/resolv.conf"
cat >"$S/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $S/pki/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$S/run/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /ipam-node
failCgroupV1: false
failSwapOn: false
podLogsDir: $S/pod-logs
volumePluginDir: $S/volume-plugins
resolvConf: $S/resolv.conf   # no real DNS for pods: nothing may leave this machine
clusterDomain: cluster.local
serializeImagePulls: false
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
maxPods: 30
EOF
start kubelet kubelet --config "$S/kubelet/config.yaml" --kubeconfig "$KC" --root-dir "$S/kubelet" \
  --cert-dir "$S/kubelet/pki" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1

# --- kube-proxy (iptables mode) so that pods reach the apiserver through the kubernetes Service ---
start kube-proxy kube-proxy --kubeconfig "$KC" --hostname-override "$NODE_NAME" --proxy-mode iptables \
  --cluster-cidr "$POD_CIDR" --nodeport-addresses "$NODE_IP/32" --conntrack-max-per-core 0 \
  --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
  --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256

wait_for "node" 90 kubectl --kubeconfig "$KC" wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
wait_for "default ServiceAccount" 30 kubectl --kubeconfig "$KC" get serviceaccount default
log "up: export KUBECONFIG=$KC"
