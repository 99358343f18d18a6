#!/usr/bin/env bash
# Records the public API of ipam-core for its API line (ipam.api.line in ipam-core/pom.xml): builds
# ipam-core and keeps its jar as ipam-core/api-baseline/ipam-core-<line>.jar, which japicmp then
# compares every build with. Run it once per line: when a line starts (a breaking change, with the
# version moved to that line). A line's baseline is never rewritten: the script refuses.
set -euo pipefail
cd "$(dirname "$0")/.."
line="$(sed -n 's#.*<ipam.api.line>\(.*\)</ipam.api.line>.*#\1#p' ipam-core/pom.xml)"
out="ipam-core/api-baseline/ipam-core-$line.jar"
if [ -e "$out" ]; then
  echo "$out exists: API line $line has its baseline. A breaking change starts a new line (README, \"API stability\")." >&2
  exit 1
fi
mvn -B -ntp -q -pl ipam-core -am package -DskipTests -Djapicmp.skip=true -Dmaven.javadoc.skip=true
jar="$(ls ipam-core/target/ipam-core-*.jar | grep -v -e '-sources' -e '-javadoc' -e '-tests' | head -1)"
cp "$jar" "$out"
echo "recorded $out from $jar"
