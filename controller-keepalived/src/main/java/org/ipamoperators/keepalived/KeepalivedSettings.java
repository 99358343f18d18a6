package org.ipamoperators.keepalived;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.ipamoperators.controller.common.ids.IdSpace;

/**
 * Operator-wide settings of the keepalived feature. A KeepalivedGroup is a privileged pod factory: whoever may create
 * one runs its image as root with the host network on the selected nodes. These settings are the trust boundary the
 * cluster admin draws around that (see the README's "Trust boundary").
 *
 * @param keepalivedImage image of a group's keepalived container when the group names none ({@code image})
 * @param reloaderImage image of the config-setup and config-reloader containers: the suite's {@code ipam} image,
 *     which runs {@code ipam keepalived-reloader} (it needs {@code keepalived} on its PATH for the config check)
 * @param routerIdGrace how long the router id of an instance that is gone stays taken before it is released: long
 *     enough for every node to load a configuration without it (kubelet syncs mounted ConfigMaps within about a
 *     minute); zero releases at once
 * @param allowedImages images a group may name in {@code spec.image}, besides {@code keepalivedImage}; an entry
 *     ending in {@code *} allows every image starting with the rest. Empty: only {@code keepalivedImage}
 * @param allowedNamespaces namespaces whose groups are served; empty: every namespace the operator watches
 * @param watchNamespaces namespaces the operator watches for groups and Services (and reads Secrets in); empty: all
 * @param routerIdsPerNamespace how many router ids the groups of one namespace may hold in one router-id space
 *     together; 0: no limit (one namespace may take all 255)
 * @param allowGroupPrograms whether a group's {@code verbatimConfig} may hold keys that run programs as root on the
 *     nodes ({@code notify*}, {@code *script*}); refused by default, like a Service's
 * @param metricsPorts the host ports the groups' metrics are served on, one per group, claimed in the cluster's id
 *     ledger so that two groups on one node never collide
 * @param secretPoll how often a group's password Secret is read again to notice a rotation (it is read by name, not
 *     watched: the operator holds no list or watch right on Secrets)
 * @param attach the default of a group's {@code serviceNamespaces} and {@code vipCIDRs}, for groups without them:
 *     which namespaces' Services may attach and which addresses a group announces ({@link AttachRules#ANY}: all)
 */
public record KeepalivedSettings(String keepalivedImage, String reloaderImage, Duration routerIdGrace,
    List<String> allowedImages, Set<String> allowedNamespaces, Set<String> watchNamespaces, int routerIdsPerNamespace,
    boolean allowGroupPrograms, IdSpace metricsPorts, Duration secretPoll, AttachRules attach) {
  public static final Duration DEFAULT_ROUTER_ID_GRACE = Duration.ofSeconds(90);
  public static final String DEFAULT_KEEPALIVED_IMAGE = "ipam-operators/keepalived:0.1.0";
  public static final String DEFAULT_RELOADER_IMAGE = "ipam-operators/ipam:0.1.0";
  public static final String METRICS_PORT_SPACE = "keepalived-metrics-ports";
  public static final IdSpace DEFAULT_METRICS_PORTS = new IdSpace(METRICS_PORT_SPACE, 9650, 9899);
  public static final Duration DEFAULT_SECRET_POLL = Duration.ofSeconds(10);

  public KeepalivedSettings {
    if (keepalivedImage == null || keepalivedImage.isBlank() || reloaderImage == null || reloaderImage.isBlank()) {
      throw new IllegalArgumentException("keepalived and reloader images must be set");
    }
    if (routerIdGrace == null || routerIdGrace.isNegative()) {
      throw new IllegalArgumentException("routerIdGrace must be zero or more");
    }
    allowedImages = allowedImages == null ? List.of() : List.copyOf(allowedImages);
    allowedNamespaces = allowedNamespaces == null ? Set.of() : Set.copyOf(allowedNamespaces);
    watchNamespaces = watchNamespaces == null ? Set.of() : Set.copyOf(watchNamespaces);
    if (routerIdsPerNamespace < 0 || routerIdsPerNamespace > 255) {
      throw new IllegalArgumentException("routerIdsPerNamespace must be 0 (no limit) to 255: " + routerIdsPerNamespace);
    }
    if (metricsPorts == null) {
      metricsPorts = DEFAULT_METRICS_PORTS;
    }
    if (metricsPorts.min() < 1 || metricsPorts.max() > 65535) {
      throw new IllegalArgumentException("metrics ports must be in 1..65535: " + metricsPorts.min() + "-"
          + metricsPorts.max());
    }
    if (secretPoll == null || secretPoll.isNegative() || secretPoll.isZero()) {
      secretPoll = DEFAULT_SECRET_POLL;
    }
    if (attach == null) {
      attach = AttachRules.ANY;
    }
  }

  /** The images and grace; every other setting at its default. */
  public KeepalivedSettings(String keepalivedImage, String reloaderImage, Duration routerIdGrace) {
    this(keepalivedImage, reloaderImage, routerIdGrace, List.of(), Set.of(), Set.of(), 0, false,
        DEFAULT_METRICS_PORTS, DEFAULT_SECRET_POLL, AttachRules.ANY);
  }

  /** The defaults (the {@code ipam operator} options set the rest). */
  public static KeepalivedSettings defaults() {
    return new KeepalivedSettings(DEFAULT_KEEPALIVED_IMAGE, DEFAULT_RELOADER_IMAGE, DEFAULT_ROUTER_ID_GRACE);
  }

  /** Whether a group may run {@code image} (null or blank: the default image). */
  public boolean imageAllowed(String image) {
    if (image == null || image.isBlank() || image.trim().equals(keepalivedImage)) {
      return true;
    }
    String i = image.trim();
    return allowedImages.stream().anyMatch(a -> a.endsWith("*") ? i.startsWith(a.substring(0, a.length() - 1))
        : a.equals(i));
  }

  /** Whether groups of this namespace are served. */
  public boolean namespaceAllowed(String namespace) {
    return allowedNamespaces.isEmpty() || allowedNamespaces.contains(namespace);
  }

  public KeepalivedSettings withAllowedImages(List<String> images) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, images, allowedNamespaces,
        watchNamespaces, routerIdsPerNamespace, allowGroupPrograms, metricsPorts, secretPoll, attach);
  }

  public KeepalivedSettings withAllowedNamespaces(Set<String> namespaces) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, allowedImages, namespaces,
        watchNamespaces, routerIdsPerNamespace, allowGroupPrograms, metricsPorts, secretPoll, attach);
  }

  public KeepalivedSettings withWatchNamespaces(Set<String> namespaces) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, allowedImages, allowedNamespaces,
        namespaces, routerIdsPerNamespace, allowGroupPrograms, metricsPorts, secretPoll, attach);
  }

  public KeepalivedSettings withRouterIdsPerNamespace(int quota) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, allowedImages, allowedNamespaces,
        watchNamespaces, quota, allowGroupPrograms, metricsPorts, secretPoll, attach);
  }

  public KeepalivedSettings withAllowGroupPrograms(boolean allow) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, allowedImages, allowedNamespaces,
        watchNamespaces, routerIdsPerNamespace, allow, metricsPorts, secretPoll, attach);
  }

  public KeepalivedSettings withMetricsPorts(int first, int last) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, allowedImages, allowedNamespaces,
        watchNamespaces, routerIdsPerNamespace, allowGroupPrograms, new IdSpace(METRICS_PORT_SPACE, first, last),
        secretPoll, attach);
  }

  /** The default attach rules of groups that set none of their own. */
  public KeepalivedSettings withAttachRules(AttachRules rules) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, allowedImages, allowedNamespaces,
        watchNamespaces, routerIdsPerNamespace, allowGroupPrograms, metricsPorts, secretPoll, rules);
  }

  public KeepalivedSettings withSecretPoll(Duration poll) {
    return new KeepalivedSettings(keepalivedImage, reloaderImage, routerIdGrace, allowedImages, allowedNamespaces,
        watchNamespaces, routerIdsPerNamespace, allowGroupPrograms, metricsPorts, poll, attach);
  }
}
