package org.ipamoperators.eip;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.plan.NodeBound;
import org.ipamoperators.eip.plan.NodeModeLimits;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;

/**
 * The operator's settings. {@code ipam operator} takes them as options ({@code --eip-cluster-name} ...), each
 * defaulting to the old operator's environment variable, so a Deployment written for k8s-eip-operator keeps
 * working unchanged. The names here are the variables ({@code CLUSTER_NAME}, required;
 * {@code NAMESPACE}, optional: only Eips, pods and addresses of that namespace; {@code DEFAULT_TAGS}, a JSON map
 * added to every address's tags; {@code AWS_REGION}, else {@code AWS_DEFAULT_REGION}, else the AWS SDK's default
 * region chain; {@code AWS_ENDPOINT_URL}) and new ones: how often every Eip is
 * checked against AWS ({@code EIP_RESYNC_INTERVAL}, default 2m: a disassociation made in the console is repaired
 * within it), how often orphaned addresses are swept ({@code EIP_ORPHAN_SWEEP_INTERVAL}, 10m), and node failover
 * ({@code EIP_FAILOVER_GRACE}, 10s NotReady before the address moves; {@code EIP_FAILOVER_RECOVERY}, 60s Ready
 * before a node may take one again), and who may use node mode ({@link NodeModeLimits}:
 * {@code EIP_NODE_MODE_NAMESPACES}, comma-separated, default every namespace; {@code EIP_NODE_MODE_NODE_SELECTOR},
 * a label selector, default any node). A bad value fails the start with a message naming the variable.
 */
public record EipSettings(String clusterName, String namespace, Map<String, String> defaultTags, AwsSettings aws,
    Duration resyncInterval, Duration sweepInterval, Duration failoverGrace, Duration failoverRecovery,
    NodeModeLimits nodeMode) {

  public EipSettings {
    nodeMode = nodeMode == null ? NodeModeLimits.NONE : nodeMode;
    if (clusterName == null || clusterName.isBlank()) {
      throw new IllegalArgumentException("CLUSTER_NAME is not set: the Eip controller tags every address with"
          + " its cluster's name and never touches another cluster's addresses");
    }
    defaultTags = Map.copyOf(defaultTags);
    for (String k : defaultTags.keySet()) {
      if (EipNames.RESERVED_TAGS.contains(k)) {
        throw new IllegalArgumentException("DEFAULT_TAGS may not set the tag " + k + ": the controller writes it");
      }
    }
  }

  /** The settings' names, as the old operator's environment variables; {@link #from(Map, Function)} keys. */
  public static final String CLUSTER_NAME = "CLUSTER_NAME";
  public static final String NAMESPACE = "NAMESPACE";
  public static final String DEFAULT_TAGS = "DEFAULT_TAGS";
  public static final String AWS_REGION = "AWS_REGION";
  public static final String AWS_DEFAULT_REGION = "AWS_DEFAULT_REGION";
  public static final String AWS_ENDPOINT_URL = "AWS_ENDPOINT_URL";
  public static final String RESYNC_INTERVAL = "EIP_RESYNC_INTERVAL";
  public static final String ORPHAN_SWEEP_INTERVAL = "EIP_ORPHAN_SWEEP_INTERVAL";
  public static final String FAILOVER_GRACE = "EIP_FAILOVER_GRACE";
  public static final String FAILOVER_RECOVERY = "EIP_FAILOVER_RECOVERY";
  public static final String NODE_MODE_NAMESPACES = "EIP_NODE_MODE_NAMESPACES";
  public static final String NODE_MODE_NODE_SELECTOR = "EIP_NODE_MODE_NODE_SELECTOR";

  static final java.util.List<String> NAMES = java.util.List.of("CLUSTER_NAME", "NAMESPACE", "DEFAULT_TAGS",
      "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "EIP_RESYNC_INTERVAL", "EIP_ORPHAN_SWEEP_INTERVAL",
      "EIP_FAILOVER_GRACE", "EIP_FAILOVER_RECOVERY", "EIP_NODE_MODE_NAMESPACES", "EIP_NODE_MODE_NODE_SELECTOR");

  /** The settings from the process environment. */
  public static EipSettings fromEnvironment() {
    return from(System.getenv());
  }

  public static EipSettings from(Map<String, String> env) {
    return from(env, Function.identity());
  }

  /**
   * The settings from values keyed by the variable names above; a bad or missing value fails with a message that
   * starts with {@code shown.apply(variable)} (how the caller lets users set it, such as an option and its variable).
   */
  public static EipSettings from(Map<String, String> env, Function<String, String> shown) {
    return from(env, shown, EipSettings::sdkRegion);
  }

  /** As {@link #from(Map, Function)}, with the region chain asked when no variable names a region. */
  static EipSettings from(Map<String, String> env, Function<String, String> shown,
      Supplier<Optional<String>> regionChain) {
    try {
      return parse(env, regionChain);
    } catch (IllegalArgumentException e) {
      String m = e.getMessage();
      for (String name : NAMES) {
        if (m.startsWith(name + " ")) {
          throw new IllegalArgumentException(shown.apply(name) + m.substring(name.length()), e);
        }
      }
      throw e;
    }
  }

  private static EipSettings parse(Map<String, String> env, Supplier<Optional<String>> regionChain) {
    String region = first(env, "AWS_REGION", "AWS_DEFAULT_REGION");
    if (region == null) {
      region = regionChain.get().orElseThrow(() -> new IllegalArgumentException("AWS_REGION is not set and the"
          + " AWS SDK's default region chain (aws.region, the profile's region, instance metadata) found none:"
          + " the Eip controller needs the region of the cluster's VPC"));
    }
    AwsSettings aws = AwsSettings.of(region);
    String endpoint = env.get("AWS_ENDPOINT_URL");
    if (endpoint != null && !endpoint.isBlank()) {
      aws = aws.withEndpoint(URI.create(endpoint));
    }
    String ns = env.get("NAMESPACE");
    return new EipSettings(env.get("CLUSTER_NAME"), ns == null || ns.isBlank() ? null : ns,
        defaultTags(env.get("DEFAULT_TAGS")), aws,
        duration(env, "EIP_RESYNC_INTERVAL", Duration.ofMinutes(2)),
        duration(env, "EIP_ORPHAN_SWEEP_INTERVAL", Duration.ofMinutes(10)),
        duration(env, "EIP_FAILOVER_GRACE", Duration.ofSeconds(10)),
        duration(env, "EIP_FAILOVER_RECOVERY", Duration.ofSeconds(60)), nodeModeLimits(env));
  }

  static NodeModeLimits nodeModeLimits(Map<String, String> env) {
    Set<String> namespaces = new LinkedHashSet<>();
    String list = env.get("EIP_NODE_MODE_NAMESPACES");
    for (String n : list == null ? new String[0] : list.split(",")) {
      if (!n.isBlank() && !n.trim().matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")) {
        throw new IllegalArgumentException("EIP_NODE_MODE_NAMESPACES '" + n.trim() + "' is not a namespace name");
      }
      if (!n.isBlank()) {
        namespaces.add(n.trim());
      }
    }
    try {
      return new NodeModeLimits(namespaces, NodeBound.parse(env.get("EIP_NODE_MODE_NODE_SELECTOR")));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("EIP_NODE_MODE_NODE_SELECTOR " + e.getMessage(), e);
    }
  }

  public EipSettings withAws(AwsSettings aws) {
    return new EipSettings(clusterName, namespace, defaultTags, aws, resyncInterval, sweepInterval, failoverGrace,
        failoverRecovery, nodeMode);
  }

  public EipSettings withIntervals(Duration resync, Duration sweep) {
    return new EipSettings(clusterName, namespace, defaultTags, aws, resync, sweep, failoverGrace, failoverRecovery,
        nodeMode);
  }

  public EipSettings withFailover(Duration grace, Duration recovery) {
    return new EipSettings(clusterName, namespace, defaultTags, aws, resyncInterval, sweepInterval, grace, recovery,
        nodeMode);
  }

  public EipSettings withNodeMode(NodeModeLimits limits) {
    return new EipSettings(clusterName, namespace, defaultTags, aws, resyncInterval, sweepInterval, failoverGrace,
        failoverRecovery, limits);
  }

  /**
   * The AWS SDK's default region chain, as k8s-eip-operator used it: the {@code aws.region} property, the
   * {@code AWS_REGION} variable, the profile's region ({@code AWS_CONFIG_FILE}, {@code AWS_PROFILE}), then the
   * instance metadata of the node the operator runs on.
   */
  static Optional<String> sdkRegion() {
    try {
      return Optional.of(new DefaultAwsRegionProviderChain().getRegion().id());
    } catch (SdkClientException e) {
      return Optional.empty();
    }
  }

  static Map<String, String> defaultTags(String json) {
    if (json == null || json.isBlank()) {
      return Map.of();
    }
    try {
      Map<String, String> tags = new ObjectMapper().readValue(json, new TypeReference<Map<String, String>>() {});
      return tags == null ? Map.of() : new TreeMap<>(tags);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("DEFAULT_TAGS is not a JSON object of strings (" + e.getOriginalMessage()
          + "), e.g. {\"team\":\"payments\"}");
    }
  }

  static Duration duration(Map<String, String> env, String name, Duration fallback) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return fallback;
    }
    var m = java.util.regex.Pattern.compile("(\\d+)(ms|s|m|h)").matcher(v.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(name + " '" + v + "' is not a duration such as 30s, 2m or 1h");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }

  private static String first(Map<String, String> env, String... names) {
    for (String n : names) {
      String v = env.get(n);
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return null;
  }
}
