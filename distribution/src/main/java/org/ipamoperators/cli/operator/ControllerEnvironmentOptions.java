package org.ipamoperators.cli.operator;

import picocli.CommandLine.Option;

/**
 * Settings the egressip and vip controllers read from system properties or the environment, as {@code ipam operator}
 * options so that {@code --help} shows them. An option given wins over the environment variable; unset, the
 * controllers read the variable themselves as before.
 */
final class ControllerEnvironmentOptions {
  @Option(names = "--platform", paramLabel = "TYPE",
      description = "egressip: the platform type as OpenShift names it (AWS, BareMetal, VSphere, None...) when there is no"
          + " Infrastructure object to read it from (env IPAM_PLATFORM)")
  String platform;

  @Option(names = "--aws-region", paramLabel = "REGION",
      description = "egressip: AWS region when the Infrastructure gives none (env IPAM_AWS_REGION)")
  String awsRegion;

  @Option(names = "--aws-endpoint", paramLabel = "URL",
      description = "egressip: EC2 endpoint override, such as a VPC endpoint (env IPAM_AWS_ENDPOINT)")
  String awsEndpoint;

  @Option(names = "--operator-namespace", paramLabel = "NAMESPACE",
      description = "egressip: namespace of the old operator's cloud credentials Secret (env IPAM_OPERATOR_NAMESPACE;"
          + " default: the client's namespace)")
  String operatorNamespace;

  @Option(names = "--egressip-writers", paramLabel = "N",
      description = "egressip: namespaces published in parallel (default: 8)")
  Integer egressWriters;

  @Option(names = "--vip-handle-unclassed", paramLabel = "BOOLEAN", arity = "0..1", fallbackValue = "true",
      description = "vip: serve LoadBalancer Services without spec.loadBalancerClass (env IPAM_VIP_HANDLE_UNCLASSED;"
          + " default: true)")
  Boolean vipHandleUnclassed;

  @Option(names = "--provider-dir", paramLabel = "DIR",
      description = "egressip: a directory of NodeNetwork provider jars, found beside the built-in providers"
          + " (env IPAM_PROVIDER_DIR; the egressip image sets /opt/ipam/providers)")
  java.nio.file.Path providerDir;

  java.nio.file.Path providerDir() {
    return providerDir;
  }

  /** Hands the options given to the controllers, which read these properties before the environment. */
  void apply() {
    set("ipam.platform", platform);
    set("ipam.aws.region", awsRegion);
    set("ipam.aws.endpoint", awsEndpoint);
    set("ipam.operator.namespace", operatorNamespace);
    set("ipam.egressip.writers", egressWriters == null ? null : egressWriters.toString());
    set("ipam.vip.handleUnclassed", vipHandleUnclassed == null ? null : vipHandleUnclassed.toString());
  }

  private static void set(String property, String value) {
    if (value != null && !value.isBlank()) {
      System.setProperty(property, value.trim());
    }
  }
}
