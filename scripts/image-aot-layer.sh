#!/usr/bin/env bash
# Adds an AOT cache to an OCI image tar as Jib wrote it: one more layer with /app/aot/operator.aot (what the
# image's `ipam operator` maps, see distribution/src/main/jib/usr/local/bin/ipam), its diff_id and a history
# entry in the config, the manifest and index.json rewritten; Jib's layers stay as they are. The tar is
# replaced in place. Same image and cache, same bytes (file times as Jib's, sorted names, no gzip time).
# Usage: image-aot-layer.sh IMAGE.tar CACHE.aot
set -euo pipefail
if [ "$#" -ne 2 ]; then
  echo "usage: $0 IMAGE.tar CACHE.aot" >&2; exit 2
fi
image="$1" cache="$2"
. "$(dirname "$0")/oci-layout.sh"
oci_open image-aot "$image"
mkdir -p "$work/layer/app/aot"
manifest_digest="$(jq -r '.manifests[0].digest' "$oci/index.json")"
manifest="$(blob "$manifest_digest")"
config_digest="$(jq -r .config.digest "$manifest")"
config="$(blob "$config_digest")"
if jq -e '.history[-1].created_by | startswith("scripts/image-aot-layer.sh")' "$config" >/dev/null; then
  fail "$image: has an AOT cache layer already"
fi

cp "$cache" "$work/layer/app/aot/operator.aot"
chmod 755 "$work/layer/app" "$work/layer/app/aot"
chmod 644 "$work/layer/app/aot/operator.aot"
# Jib's layers: entries without "./", owner 0, time 1970-01-01T00:00:01Z.
tar --sort=name --mtime=@1 --owner=0 --group=0 --numeric-owner --format=pax \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -C "$work/layer" -cf "$work/layer.tar" app
diff_id="sha256:$(sha256sum "$work/layer.tar" | cut -c1-64)"
layer="$(gzip -n -6 <"$work/layer.tar" | put)"
size="$(stat -c %s "$cache")"
new_config="$(jq -cj --arg d "$diff_id" --arg by "scripts/image-aot-layer.sh: AOT cache of ipam operator, $size bytes" \
  '.rootfs.diff_ids += [$d] | .history += [{created: "1970-01-01T00:00:00Z", created_by: $by, comment: "aot cache"}]' \
  "$config" | put)"
new_manifest="$(jq -cj --arg cd "${new_config% *}" --argjson cs "${new_config#* }" \
  --arg ld "${layer% *}" --argjson ls "${layer#* }" \
  '.config.digest = $cd | .config.size = $cs
   | .layers += [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: $ld, size: $ls}]' \
  "$manifest" | put)"
rm -f "$manifest" "$config"
jq -cj --arg d "${new_manifest% *}" --argjson s "${new_manifest#* }" \
  '.manifests[0].digest = $d | .manifests[0].size = $s' "$oci/index.json" >"$work/index.json"
mv "$work/index.json" "$oci/index.json"

# Jib's own tar layout: blobs first, then oci-layout and index.json; ustar entries owned by 0, time 0.
(cd "$oci" && { find blobs -type f | LC_ALL=C sort; echo oci-layout; echo index.json; }) >"$work/files"
tar --format=ustar --no-recursion --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u=rw,go=r \
  -C "$oci" -T "$work/files" -cf "$image.tmp"
mv "$image.tmp" "$image"
echo "[image-aot] $image: AOT cache layer ${layer% *} ($size bytes)" >&2
