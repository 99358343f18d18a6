package org.ipamoperators.cli.operator;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.ipamoperators.egressip.EgressSettings;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.egressip.plan.Orphans;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code ipam operator}'s settings of the egressip controller, each with an environment fallback. Provider settings
 * without an option here ({@code azure.*}, a custom provider's) are read from their {@code IPAM_*} variables.
 */
final class EgressOptions {
  @Option(names = "--platform", paramLabel = "TYPE", defaultValue = "${env:IPAM_PLATFORM:-}",
      description = "egressip: the platform type as OpenShift names it (AWS, BareMetal, VSphere, None...) when there is no"
          + " Infrastructure object to read it from (env IPAM_PLATFORM)")
  String platform;

  @Option(names = "--aws-region", paramLabel = "REGION", defaultValue = "${env:IPAM_AWS_REGION:-}",
      description = "egressip: AWS region when the Infrastructure gives none (env IPAM_AWS_REGION)")
  String awsRegion;

  @Option(names = "--aws-endpoint", paramLabel = "URL", defaultValue = "${env:IPAM_AWS_ENDPOINT:-}",
      description = "egressip: EC2 endpoint override, such as a VPC endpoint (env IPAM_AWS_ENDPOINT)")
  String awsEndpoint;

  @Option(names = "--operator-namespace", paramLabel = "NAMESPACE", defaultValue = "${env:IPAM_OPERATOR_NAMESPACE:-}",
      description = "egressip: namespace of the old operator's cloud credentials Secret (env IPAM_OPERATOR_NAMESPACE;"
          + " default: the client's namespace)")
  String operatorNamespace;

  @Option(names = "--node-network-provider", paramLabel = "NAME", defaultValue = "${env:IPAM_NODE_NETWORK_PROVIDER:-}",
      description = "egressip: the NodeNetwork provider to use, when several serve the platform or to use one whatever"
          + " the platform (env IPAM_NODE_NETWORK_PROVIDER; default: the one that serves the platform)")
  String provider;

  @Option(names = "--egressip-writers", paramLabel = "N", defaultValue = "${env:IPAM_EGRESSIP_WRITERS:-8}",
      description = "egressip: namespaces published in parallel (env IPAM_EGRESSIP_WRITERS; default: ${DEFAULT-VALUE})")
  int writers;

  @Option(names = "--egressip-incremental", paramLabel = "BOOLEAN", arity = "0..1", fallbackValue = "true",
      defaultValue = "${env:IPAM_EGRESSIP_INCREMENTAL:-true}",
      description = "egressip: plan only what changed in a pass; false plans every pass in full (env"
          + " IPAM_EGRESSIP_INCREMENTAL; default: ${DEFAULT-VALUE})")
  boolean incremental;

  @Option(names = "--egressip-full-plan-seconds", paramLabel = "SECONDS",
      defaultValue = "${env:IPAM_EGRESSIP_FULL_PLAN_SECONDS:-300}",
      description = "egressip: how often a pass also plans in full and compares with the incremental plan (env"
          + " IPAM_EGRESSIP_FULL_PLAN_SECONDS; default: ${DEFAULT-VALUE})")
  long fullPlanSeconds;

  @Option(names = "--egressip-orphan-grace-seconds", paramLabel = "SECONDS",
      defaultValue = "${env:IPAM_EGRESSIP_ORPHAN_GRACE_SECONDS:-30}",
      description = "egressip: how long an address of ours nobody claims must stay on an interface before it is taken"
          + " off (env IPAM_EGRESSIP_ORPHAN_GRACE_SECONDS; default: ${DEFAULT-VALUE})")
  long orphanGraceSeconds;

  @Option(names = "--egressip-orphan-grace-passes", paramLabel = "N",
      defaultValue = "${env:IPAM_EGRESSIP_ORPHAN_GRACE_PASSES:-2}",
      description = "egressip: passes in a row that must see such an address first, at least 2 (env"
          + " IPAM_EGRESSIP_ORPHAN_GRACE_PASSES; default: ${DEFAULT-VALUE})")
  int orphanGracePasses;

  @Option(names = "--provider-dir", paramLabel = "DIR",
      description = "egressip: a directory of NodeNetwork provider jars, found beside the built-in providers"
          + " (env IPAM_PROVIDER_DIR; the egressip image sets /opt/ipam/providers)")
  Path providerDir;

  Path providerDir() {
    return providerDir;
  }

  /** The settings; a bad one throws with its option and variable named. */
  EgressSettings settings() {
    if (writers < 1) {
      throw new TypeConversionException("--egressip-writers (env IPAM_EGRESSIP_WRITERS) must be 1 or more");
    }
    if (fullPlanSeconds < 1) {
      throw new TypeConversionException("--egressip-full-plan-seconds (env IPAM_EGRESSIP_FULL_PLAN_SECONDS) must be"
          + " 1 or more");
    }
    if (orphanGraceSeconds < 0 || orphanGracePasses < 2) {
      throw new TypeConversionException("--egressip-orphan-grace-seconds must be 0 or more and"
          + " --egressip-orphan-grace-passes 2 or more");
    }
    Map<String, String> overrides = new HashMap<>();
    if (!blank(awsRegion)) {
      overrides.put("aws.region", awsRegion.trim());
    }
    if (!blank(awsEndpoint)) {
      overrides.put("aws.endpoint", awsEndpoint.trim());
    }
    return new EgressSettings(platform, writers, Duration.ofSeconds(fullPlanSeconds), incremental,
        new Orphans.Grace(Duration.ofSeconds(orphanGraceSeconds), orphanGracePasses),
        new CloudSettings(overrides, operatorNamespace, provider));
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
