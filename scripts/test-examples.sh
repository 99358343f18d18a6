#!/usr/bin/env bash
# Builds the outside projects of examples/ (each a standalone Maven project, not a module of this
# build) against the artifacts `mvn install` put in the local repository, offline: everything they
# use (the BOM, ipam-core, the conformance kit, the egress controller, JUnit, the plugins) is there
# after the install. Each runs its own tests; embed-core also runs its program.
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(sed -n '0,/<version>/s#.*<version>\(.*\)</version>.*#\1#p' pom.xml)"
bom="$(sed -n '0,/<version>/s#.*<version>\(.*\)</version>.*#\1#p' bom/pom.xml)"
if [ "$version" != "$bom" ]; then
  echo "[examples] bom/pom.xml is at $bom, the project at $version: they are released together" >&2
  exit 1
fi
for example in embed-core custom-provider; do
  echo "[examples] $example against ipam-operators $version" >&2
  mvn -B -ntp -o -f "examples/$example/pom.xml" verify "-Dipam.version=$version"
done
