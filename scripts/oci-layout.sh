# Sourced by the image scripts that rewrite an OCI image layout tar (image-index.sh, image-aot-layer.sh):
# the tar unpacked into a scratch directory, and its blobs read and written by digest.

# oci_open TAG IMAGE.tar: unpacks the layout into $oci under $work (removed on exit); TAG prefixes fail's
# messages. The layout must name one image. Installs jq when it is missing.
oci_open() {
  oci_tag="$1"
  command -v jq >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends jq >&2
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  oci="$work/oci"
  mkdir -p "$oci"
  tar -xf "$2" -C "$oci"
  [ "$(jq '.manifests | length' "$oci/index.json")" = 1 ] || fail "$2: not one image"
}

fail() { echo "[$oci_tag] $*" >&2; exit 1; }

# The path of a blob, by its digest.
blob() { echo "$oci/blobs/sha256/${1#sha256:}"; }

# Stores stdin as a blob; prints its digest and size.
put() {
  cat >"$work/new"
  local digest
  digest="$(sha256sum "$work/new" | cut -c1-64)"
  mv "$work/new" "$oci/blobs/sha256/$digest"
  echo "sha256:$digest $(stat -c %s "$oci/blobs/sha256/$digest")"
}
