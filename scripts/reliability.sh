#!/usr/bin/env bash
# The long reliability run (docs/reliability.md): the crash, fault, control-plane, stale-cache and Lease runs of
# distribution (the members of its `reliability` Maven profile, which sets 10 kills, a 10 % fault rate and 3 seeds)
# and the seeded EC2 fault run of controller-egressip (AwsEgressIT), nothing else. About 40-60 minutes on 2 cores.
# Extra arguments go to Maven, e.g. -Dipam.reliability.seed=N to replay one seed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The profile's <include> lines are the list of distribution's members (one place to add a run).
members="$(sed -n '/<id>reliability<\/id>/,/<\/includes>/p' distribution/pom.xml \
  | sed -n 's|.*<include>\*\*/\(.*\)\.java</include>.*|\1|p' | paste -sd, -)"
if [ -z "$members" ]; then
  echo "[reliability] no members found in distribution/pom.xml's reliability profile" >&2
  exit 2
fi
echo "[reliability] distribution: $members; controller-egressip: AwsEgressIT#seeded*" >&2
exec bash scripts/test.sh -pl distribution,controller-egressip -am -Preliability -Dipam.reliability.long=true \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false \
  "-Dit.test=$members,AwsEgressIT#seeded*" "$@"
