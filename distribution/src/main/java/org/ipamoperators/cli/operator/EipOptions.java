package org.ipamoperators.cli.operator;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.ipamoperators.eip.EipSettings;
import picocli.CommandLine.Option;

/**
 * {@code ipam operator}'s settings of the eip controller. Each defaults to k8s-eip-operator's environment variable,
 * so a Deployment written for the old operator keeps working with its env unchanged; an option given wins. Read only
 * when eip runs: the other controllers never need CLUSTER_NAME. Java system properties are not read (as for the
 * other controllers' settings).
 */
final class EipOptions {
  @Option(names = "--eip-cluster-name", paramLabel = "NAME", defaultValue = "${env:CLUSTER_NAME:-}",
      description = "eip: the cluster's name, tagged on every address; addresses of other clusters are never touched"
          + " (env CLUSTER_NAME; required with eip)")
  String clusterName;

  @Option(names = "--eip-namespace", paramLabel = "NAMESPACE", defaultValue = "${env:NAMESPACE:-}",
      description = "eip: serve only this namespace's Eips, pods and addresses (env NAMESPACE; default: all)")
  String namespace;

  @Option(names = "--eip-default-tags", paramLabel = "JSON", defaultValue = "${env:DEFAULT_TAGS:-}",
      description = "eip: JSON map of tags added to every address, e.g. {\"team\":\"payments\"}; invalid JSON or one"
          + " of the controller's own tag keys stops the start (env DEFAULT_TAGS; default: none)")
  String defaultTags;

  @Option(names = "--eip-aws-region", paramLabel = "REGION", defaultValue = "${env:AWS_REGION:-}",
      description = "eip: the region of the cluster's VPC (env AWS_REGION, else AWS_DEFAULT_REGION, else the AWS SDK's default region chain)")
  String region;

  @Option(names = "--eip-aws-endpoint", paramLabel = "URL", defaultValue = "${env:AWS_ENDPOINT_URL:-}",
      description = "eip: EC2 and Service Quotas endpoint override, such as a VPC endpoint (env AWS_ENDPOINT_URL)")
  String endpoint;

  @Option(names = "--eip-resync-interval", paramLabel = "DURATION", defaultValue = "${env:EIP_RESYNC_INTERVAL:-2m}",
      description = "eip: how often every Eip is checked against AWS; a disassociation made outside is repaired"
          + " within it (env EIP_RESYNC_INTERVAL; default: ${DEFAULT-VALUE})")
  String resyncInterval;

  @Option(names = "--eip-orphan-sweep-interval", paramLabel = "DURATION",
      defaultValue = "${env:EIP_ORPHAN_SWEEP_INTERVAL:-10m}",
      description = "eip: how often addresses tagged with this cluster whose Eip is gone are released, and the quota"
          + " read (env EIP_ORPHAN_SWEEP_INTERVAL; default: ${DEFAULT-VALUE})")
  String sweepInterval;

  @Option(names = "--eip-failover-grace", paramLabel = "DURATION", defaultValue = "${env:EIP_FAILOVER_GRACE:-10s}",
      description = "eip: how long a node holding a node-mode Eip may be NotReady before the address moves (env"
          + " EIP_FAILOVER_GRACE; default: ${DEFAULT-VALUE})")
  String failoverGrace;

  @Option(names = "--eip-failover-recovery", paramLabel = "DURATION",
      defaultValue = "${env:EIP_FAILOVER_RECOVERY:-60s}",
      description = "eip: how long a node must be Ready again before it may take an address (env"
          + " EIP_FAILOVER_RECOVERY; default: ${DEFAULT-VALUE})")
  String failoverRecovery;

  @Option(names = "--eip-node-mode-namespaces", paramLabel = "NAMESPACE", split = ",",
      defaultValue = "${env:EIP_NODE_MODE_NAMESPACES:-}",
      description = "eip: the namespaces whose Eips may use node mode (select nodes); an Eip elsewhere gets"
          + " Ready=False NodeModeNotAllowed and no address (env EIP_NODE_MODE_NAMESPACES; default: every namespace)")
  java.util.List<String> nodeModeNamespaces;

  @Option(names = "--eip-node-mode-node-selector", paramLabel = "SELECTOR",
      defaultValue = "${env:EIP_NODE_MODE_NODE_SELECTOR:-}",
      description = "eip: label selector (kubectl -l syntax) of the nodes node-mode Eips may select; other nodes"
          + " never hold an Elastic IP (env EIP_NODE_MODE_NODE_SELECTOR; default: any managed node)")
  String nodeModeNodeSelector;

  /** Option name of each setting, by its variable (in the order of the help). */
  private static final Map<String, String> OPTIONS = optionNames();

  private static Map<String, String> optionNames() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(EipSettings.CLUSTER_NAME, "--eip-cluster-name");
    m.put(EipSettings.NAMESPACE, "--eip-namespace");
    m.put(EipSettings.DEFAULT_TAGS, "--eip-default-tags");
    m.put(EipSettings.AWS_REGION, "--eip-aws-region");
    m.put(EipSettings.AWS_ENDPOINT_URL, "--eip-aws-endpoint");
    m.put(EipSettings.RESYNC_INTERVAL, "--eip-resync-interval");
    m.put(EipSettings.ORPHAN_SWEEP_INTERVAL, "--eip-orphan-sweep-interval");
    m.put(EipSettings.FAILOVER_GRACE, "--eip-failover-grace");
    m.put(EipSettings.FAILOVER_RECOVERY, "--eip-failover-recovery");
    m.put(EipSettings.NODE_MODE_NAMESPACES, "--eip-node-mode-namespaces");
    m.put(EipSettings.NODE_MODE_NODE_SELECTOR, "--eip-node-mode-node-selector");
    return java.util.Collections.unmodifiableMap(m);
  }

  /** The settings; a missing or bad one throws with its option and variable named. */
  EipSettings settings() {
    Map<String, String> values = new HashMap<>();
    values.put(EipSettings.CLUSTER_NAME, clusterName);
    values.put(EipSettings.NAMESPACE, namespace);
    values.put(EipSettings.DEFAULT_TAGS, defaultTags);
    values.put(EipSettings.AWS_REGION, blank(region) ? variable(EipSettings.AWS_DEFAULT_REGION) : region);
    values.put(EipSettings.AWS_ENDPOINT_URL, endpoint);
    values.put(EipSettings.RESYNC_INTERVAL, resyncInterval);
    values.put(EipSettings.ORPHAN_SWEEP_INTERVAL, sweepInterval);
    values.put(EipSettings.FAILOVER_GRACE, failoverGrace);
    values.put(EipSettings.FAILOVER_RECOVERY, failoverRecovery);
    values.put(EipSettings.NODE_MODE_NAMESPACES, nodeModeNamespaces == null ? null
        : String.join(",", nodeModeNamespaces));
    values.put(EipSettings.NODE_MODE_NODE_SELECTOR, nodeModeNodeSelector);
    values.values().removeIf(EipOptions::blank);
    return EipSettings.from(values, EipOptions::shown);
  }

  static String shown(String variable) {
    String option = OPTIONS.get(variable);
    return option == null ? variable : option + " (env " + variable + ")";
  }

  private static String variable(String name) {
    return System.getenv(name);
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
