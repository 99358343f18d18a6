#!/usr/bin/env bash
# Makes one multi-arch image (linux/amd64 and linux/arm64) as an OCI image layout tar, from the amd64 image
# Jib built (an OCI layout tar) and the arm64 base of scripts/image-base.sh (a docker-archive tar).
# The arm64 image is the amd64 one with its base layer swapped: the same application layers (byte for
# byte: jars, classes and the `ipam` script are the same on both), the arm64 base's layer, diff_id,
# history entry and architecture in its config. An AOT cache's layer (scripts/image-aot-layer.sh, always
# the last) stays on amd64 only: the arm64 base's runtime (17) cannot read it. index.json names one image
# index (with the annotations of Jib's index.json) whose two manifests carry their platforms. Same inputs,
# same bytes.
# Usage: image-index.sh AMD64_IMAGE.tar ARM64_BASE.tar OUT.tar
set -euo pipefail
if [ "$#" -ne 3 ]; then
  echo "usage: $0 AMD64_IMAGE.tar ARM64_BASE.tar OUT.tar" >&2; exit 2
fi
image="$1" base="$2" out="$3"
. "$(dirname "$0")/oci-layout.sh"
oci_open image-index "$image"
mkdir -p "$work/base"
tar -xf "$base" -C "$work/base"
descriptor="$(jq -c '.manifests[0]' "$oci/index.json")"
manifest="$(blob "$(jq -r .digest <<<"$descriptor")")"
config="$(blob "$(jq -r .config.digest "$manifest")")"
[ "$(jq -r .architecture "$config")" = amd64 ] || fail "$image: not an amd64 image"
# The base is the first layer and the first history entry of Jib's image.
jq -e '.history[0].created_by | startswith("scripts/image-base.sh")' "$config" >/dev/null \
  || fail "$image: its first layer is not image-base.sh's"
base_config="$work/base/$(jq -r '.[0].Config' "$work/base/manifest.json")"
[ "$(jq '.[0].Layers | length' "$work/base/manifest.json")" = 1 ] || fail "$base: not one layer"
[ "$(jq -r .architecture "$base_config")" = arm64 ] || fail "$base: not an arm64 base"

aot="$(jq '.history[-1].created_by | startswith("scripts/image-aot-layer.sh")' "$config")"

# put's output as assignments: a failed jq fails the script (set -e), a process substitution would not.
layer="$(put <"$work/base/$(jq -r '.[0].Layers[0]' "$work/base/manifest.json")")"
arm_config="$(jq -cj --slurpfile base "$base_config" \
  '.architecture = $base[0].architecture | .rootfs.diff_ids[0] = $base[0].rootfs.diff_ids[0]
   | .history[0] = $base[0].history[0]
   | if $aot then .rootfs.diff_ids |= .[:-1] | .history |= .[:-1] else . end' --argjson aot "$aot" "$config" | put)"
arm_manifest="$(jq -cj --arg cd "${arm_config% *}" --argjson cs "${arm_config#* }" \
  --arg ld "${layer% *}" --argjson ls "${layer#* }" \
  --argjson aot "$aot" '.config.digest = $cd | .config.size = $cs | .layers[0].digest = $ld
   | .layers[0].size = $ls | if $aot then .layers |= .[:-1] else . end' "$manifest" | put)"
index="$(jq -ncj --argjson amd "$descriptor" --arg ad "${arm_manifest% *}" --argjson asize "${arm_manifest#* }" \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: [
     {mediaType: $amd.mediaType, digest: $amd.digest, size: $amd.size, platform: {architecture: "amd64", os: "linux"}},
     {mediaType: $amd.mediaType, digest: $ad, size: $asize, platform: {architecture: "arm64", os: "linux"}}]}' | put)"
jq -ncj --argjson amd "$descriptor" --arg d "${index% *}" --argjson s "${index#* }" \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: [
     {mediaType: "application/vnd.oci.image.index.v1+json", digest: $d, size: $s}
     + (if $amd.annotations then {annotations: $amd.annotations} else {} end)]}' >"$oci/index.json"

mkdir -p "$(dirname "$out")"
(cd "$oci" && { echo oci-layout; echo index.json; find blobs -type f | LC_ALL=C sort; }) >"$work/files"
tar --format=ustar --no-recursion --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u=rw,go=r \
  -C "$oci" -T "$work/files" -cf "$out.tmp"
mv "$out.tmp" "$out"
echo "[image-index] $out: $(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"] // "?"' \
  "$oci/index.json") amd64 and arm64" >&2
