#!/usr/bin/env bash
# Runs every test of the suite, every tier: first prepares the real parts the tests run against
# (etcd, kube-apiserver built from source, moto, keepalived; cached after the first run), then
# `mvn install` over all modules, then builds and tests the outside projects of examples/ against the
# installed artifacts (scripts/test-examples.sh). Extra arguments go to Maven (for example:
# -pl ipam-core) and make it a plain `mvn verify` of what they select, without the examples.
set -euo pipefail
cd "$(dirname "$0")/.."
env_exports="$(bash scripts/test-env.sh)"
eval "$env_exports"
# As root (CI), network-namespace tests must run: a skip there would hide a broken tier. Root also
# builds the images' bases (mmdebstrap), so the OCI images are built and ImageIT runs them.
extra=()
if [ "$(id -u)" -eq 0 ]; then
  extra+=(-Dipam.test.requireNetns=true)
  base="$(bash scripts/image-base.sh)"
  extra+=("-Dipam.image.base=$base" -Djib.disableUpdateChecks=true
    "-Djib.baseImageCache=$(dirname "$base")/jib")
  # The arm64 base makes the images multi-arch; qemu-user starts the arm64 image in MultiArchImagesIT.
  # Its build needs binfmt_misc: where the kernel refuses it, the images stay amd64 and the log says so.
  if base_arm64="$(bash scripts/image-base.sh arm64)" && qemu="$(bash scripts/qemu-aarch64.sh)"; then
    extra+=("-Dipam.image.base.arm64=$base_arm64" "-Dipam.image.qemu=$qemu")
  else
    echo "[test] WARNING: no arm64 image base (see [image-base] above): images amd64 only, MultiArchImagesIT skipped" >&2
  fi
else
  echo "[test] not root: no image built, ImageIT skipped" >&2
fi
if [ "$#" -gt 0 ]; then
  # A partial run (-pl ..., -Dtest=...): no install, no examples.
  exec mvn -B -ntp verify "${extra[@]}" "$@"
fi
# The whole suite, then install: the examples are outside projects that find the artifacts (and the
# BOM) by their coordinates in the local repository, as a user's build would.
mvn -B -ntp install "${extra[@]}"
bash scripts/test-examples.sh
