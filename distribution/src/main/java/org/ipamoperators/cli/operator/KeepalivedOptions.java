package org.ipamoperators.cli.operator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import org.ipamoperators.cli.DurationConverter;
import org.ipamoperators.keepalived.AttachRules;
import org.ipamoperators.keepalived.KeepalivedSettings;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code ipam operator}'s settings of the keepalived controller, each with an environment fallback. A KeepalivedGroup
 * runs its image as root with the host network on the nodes it selects: the images, namespaces and router-id quota
 * allowed here are the trust boundary around whoever may create one; the Service namespaces and VIP CIDRs are the
 * default of what a group lets others attach and announce.
 */
final class KeepalivedOptions {
  @Option(names = "--keepalived-image", paramLabel = "IMAGE",
      defaultValue = "${env:IPAM_KEEPALIVED_IMAGE:-" + KeepalivedSettings.DEFAULT_KEEPALIVED_IMAGE + "}",
      description = "keepalived: image of a group's keepalived container, and the only one a group may name unless"
          + " --keepalived-allowed-images lists more (env IPAM_KEEPALIVED_IMAGE; default: ${DEFAULT-VALUE})")
  String image;

  @Option(names = "--keepalived-reloader-image", paramLabel = "IMAGE",
      defaultValue = "${env:IPAM_KEEPALIVED_RELOADER_IMAGE:-" + KeepalivedSettings.DEFAULT_RELOADER_IMAGE + "}",
      description = "keepalived: image of the config-setup and config-reloader containers (env"
          + " IPAM_KEEPALIVED_RELOADER_IMAGE; default: ${DEFAULT-VALUE})")
  String reloaderImage;

  @Option(names = "--keepalived-router-id-grace-seconds", paramLabel = "SECONDS",
      defaultValue = "${env:IPAM_KEEPALIVED_ROUTER_ID_GRACE_SECONDS:-90}",
      description = "keepalived: how long the router id of a removed instance stays taken (env"
          + " IPAM_KEEPALIVED_ROUTER_ID_GRACE_SECONDS; default: ${DEFAULT-VALUE})")
  long routerIdGraceSeconds;

  @Option(names = "--keepalived-allowed-images", paramLabel = "IMAGE", split = ",",
      defaultValue = "${env:IPAM_KEEPALIVED_ALLOWED_IMAGES:-}",
      description = "keepalived: further images a group may name in spec.image; IMAGE* allows a prefix (env"
          + " IPAM_KEEPALIVED_ALLOWED_IMAGES; default: none)")
  List<String> allowedImages;

  @Option(names = "--keepalived-allowed-namespaces", paramLabel = "NAMESPACE", split = ",",
      defaultValue = "${env:IPAM_KEEPALIVED_ALLOWED_NAMESPACES:-}",
      description = "keepalived: serve KeepalivedGroups only in these namespaces; the others get a NotAllowed"
          + " condition (env IPAM_KEEPALIVED_ALLOWED_NAMESPACES; default: every namespace)")
  List<String> allowedNamespaces;

  @Option(names = "--keepalived-service-namespaces", paramLabel = "NAMESPACE", split = ",",
      defaultValue = "${env:IPAM_KEEPALIVED_SERVICE_NAMESPACES:-}",
      description = "keepalived: namespaces whose Services may attach VIPs to a group without serviceNamespaces of its"
          + " own; " + AttachRules.GROUP_NAMESPACE + " is the group's own namespace (env"
          + " IPAM_KEEPALIVED_SERVICE_NAMESPACES; default: every namespace)")
  List<String> serviceNamespaces;

  @Option(names = "--keepalived-vip-cidrs", paramLabel = "CIDR", split = ",",
      defaultValue = "${env:IPAM_KEEPALIVED_VIP_CIDRS:-}",
      description = "keepalived: the only addresses (IPv4 and IPv6 CIDRs, addresses or FIRST-LAST ranges) a group"
          + " without vipCIDRs of its own announces (env IPAM_KEEPALIVED_VIP_CIDRS; default: any address)")
  List<String> vipCidrs;

  @Option(names = "--keepalived-namespaces", paramLabel = "NAMESPACE", split = ",",
      defaultValue = "${env:IPAM_KEEPALIVED_NAMESPACES:-}",
      description = "keepalived: watch KeepalivedGroups and Services only in these namespaces (env"
          + " IPAM_KEEPALIVED_NAMESPACES; default: all)")
  List<String> watchNamespaces;

  @Option(names = "--keepalived-router-ids-per-namespace", paramLabel = "N",
      defaultValue = "${env:IPAM_KEEPALIVED_ROUTER_IDS_PER_NAMESPACE:-0}",
      description = "keepalived: router ids the groups of one namespace may hold per router-id space; 0: no limit"
          + " (env IPAM_KEEPALIVED_ROUTER_IDS_PER_NAMESPACE; default: ${DEFAULT-VALUE})")
  int routerIdsPerNamespace;

  @Option(names = "--keepalived-allow-group-programs", paramLabel = "BOOLEAN", arity = "0..1", fallbackValue = "true",
      defaultValue = "${env:IPAM_KEEPALIVED_ALLOW_GROUP_PROGRAMS:-false}",
      description = "keepalived: let a group's verbatimConfig hold keys that run programs as root on the nodes"
          + " (notify*, *script*) (env IPAM_KEEPALIVED_ALLOW_GROUP_PROGRAMS; default: ${DEFAULT-VALUE})")
  boolean allowGroupPrograms;

  @Option(names = "--keepalived-metrics-ports", paramLabel = "FIRST-LAST",
      defaultValue = "${env:IPAM_KEEPALIVED_METRICS_PORTS:-9650-9899}",
      description = "keepalived: host ports for the groups' /metrics, one per group (env"
          + " IPAM_KEEPALIVED_METRICS_PORTS; default: ${DEFAULT-VALUE})")
  String metricsPorts;

  @Option(names = "--keepalived-secret-poll", paramLabel = "DURATION", converter = DurationConverter.class,
      defaultValue = "${env:IPAM_KEEPALIVED_SECRET_POLL:-10s}",
      description = "keepalived: how often a group's password Secret is read again for a rotation (env"
          + " IPAM_KEEPALIVED_SECRET_POLL; default: ${DEFAULT-VALUE})")
  Duration secretPoll;

  KeepalivedSettings settings() {
    String[] range = metricsPorts.trim().split("-", -1);
    int first;
    int last;
    try {
      first = Integer.parseInt(range[0].trim());
      last = Integer.parseInt(range[range.length - 1].trim());
    } catch (NumberFormatException e) {
      throw new TypeConversionException("--keepalived-metrics-ports: '" + metricsPorts + "' is not FIRST-LAST");
    }
    if (range.length > 2 || first < 1 || last > 65535 || first > last) {
      throw new TypeConversionException("--keepalived-metrics-ports: '" + metricsPorts
          + "' is not a port range such as 9650-9899");
    }
    if (routerIdGraceSeconds < 0) {
      throw new TypeConversionException("--keepalived-router-id-grace-seconds must be 0 or more");
    }
    if (routerIdsPerNamespace < 0 || routerIdsPerNamespace > 255) {
      throw new TypeConversionException("--keepalived-router-ids-per-namespace must be 0 (no limit) to 255");
    }
    AttachRules attach;
    try {
      attach = AttachRules.parse(nonBlank(serviceNamespaces), nonBlank(vipCidrs));
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException("--keepalived-service-namespaces / --keepalived-vip-cidrs: "
          + e.getMessage());
    }
    return new KeepalivedSettings(image.trim(), reloaderImage.trim(), Duration.ofSeconds(routerIdGraceSeconds))
        .withAllowedImages(nonBlank(allowedImages))
        .withAllowedNamespaces(new LinkedHashSet<>(nonBlank(allowedNamespaces)))
        .withWatchNamespaces(new LinkedHashSet<>(nonBlank(watchNamespaces)))
        .withRouterIdsPerNamespace(routerIdsPerNamespace)
        .withAllowGroupPrograms(allowGroupPrograms)
        .withMetricsPorts(first, last)
        .withSecretPoll(secretPoll)
        .withAttachRules(attach);
  }

  private static List<String> nonBlank(List<String> values) {
    List<String> out = new ArrayList<>();
    if (values != null) {
      values.stream().map(String::trim).filter(s -> !s.isEmpty()).forEach(out::add);
    }
    return out;
  }
}
