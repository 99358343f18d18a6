#!/bin/bash
# Imports an image tar (docker-archive or OCI layout, e.g. Jib's) into the test node's containerd (CRI
# namespace k8s.io) and adds the name the kubelet will ask for: CRI normalizes "ipam-operators/ipam:tag" to
# "docker.io/ipam-operators/ipam:tag", but `ctr import` of an OCI tar keeps the bare ref.name annotation.
# Usage: load-image.sh IMAGE.tar...
set -euo pipefail
S=${IPAM_REAL_NODE_STATE:-/var/tmp/ipam-real-node}
CTR="ctr --address $S/run/containerd.sock -n k8s.io"
for tar in "$@"; do
  for name in $($CTR images import "$tar" | sed -n 's/^unpacking \(.*\) (sha256:.*/\1/p'); do
    first=${name%%/*}
    if [ "$first" = "$name" ]; then full=docker.io/library/$name          # busybox:1
    elif [[ $first == *.* || $first == *:* || $first == localhost ]]; then full=$name  # has a registry host
    else full=docker.io/$name; fi                                         # ipam-operators/ipam:tag
    [ "$full" = "$name" ] || $CTR images tag --force "$name" "$full" >/dev/null
    echo "loaded $full"
  done
done
