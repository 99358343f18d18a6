package org.ipamoperators.keepalived.api;

/** keepalived-operator's Service annotations and the labels of the generated objects. */
public final class KeepalivedAnnotations {
  private KeepalivedAnnotations() {}

  private static final String PREFIX = "keepalived-operator.redhat-cop.io/";
  /** {@code <group-namespace>/<group-name>}: the Service's VIPs are announced by that group. */
  public static final String GROUP = PREFIX + "keepalivedgroup";
  /** JSON object of {@code key: value} lines for the service's VRRP instance. */
  public static final String VERBATIM_CONFIG = PREFIX + "verbatimconfig";
  /** {@code "true"}: one VRRP instance per VIP, spread over the nodes. */
  public static final String SPREAD_VIPS = PREFIX + "spreadvips";
  /** Label of the pods, DaemonSet, ConfigMap and PodMonitor of a group: the group's name. */
  public static final String GROUP_LABEL = "keepalivedGroup";
  public static final String FINALIZER = "keepalivedgroups.redhatcop.redhat.io/router-ids";
}
