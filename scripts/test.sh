#!/usr/bin/env bash
# Runs every test of the suite, every tier: first prepares the real parts the tests run against
# (etcd, kube-apiserver built from source, moto, keepalived; cached after the first run), then
# `mvn verify` over all modules. Extra arguments go to Maven (for example: -pl ipam-core).
set -euo pipefail
cd "$(dirname "$0")/.."
env_exports="$(bash scripts/test-env.sh)"
eval "$env_exports"
# As root (CI), network-namespace tests must run: a skip there would hide a broken tier. Root also
# builds the image's base (mmdebstrap), so the OCI image is built and ImageIT runs it.
extra=()
if [ "$(id -u)" -eq 0 ]; then
  extra+=(-Dipam.test.requireNetns=true)
  base="$(bash scripts/image-base.sh)"
  extra+=("-Dipam.image.base=$base" -Djib.disableUpdateChecks=true
    "-Djib.baseImageCache=$(dirname "$base")/jib")
else
  echo "[test] not root: no image built, ImageIT skipped" >&2
fi
exec mvn -B -ntp verify "${extra[@]}" "$@"
