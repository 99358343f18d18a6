#!/usr/bin/env bash
# Runs every test of the suite, every tier: first prepares the real parts the tests run against
# (etcd, kube-apiserver built from source, moto, keepalived; cached after the first run), then
# `mvn verify` over all modules. Extra arguments go to Maven (for example: -pl ipam-core).
set -euo pipefail
cd "$(dirname "$0")/.."
env_exports="$(bash scripts/test-env.sh)"
eval "$env_exports"
# As root (CI), network-namespace tests must run: a skip there would hide a broken tier.
extra=()
if [ "$(id -u)" -eq 0 ]; then extra+=(-Dipam.test.requireNetns=true); fi
exec mvn -B -ntp verify "${extra[@]}" "$@"
