package org.ipamoperators.keepalived.config;

import java.util.Comparator;
import java.util.Objects;

/**
 * The health check of a service with {@code externalTrafficPolicy: Local}: kube-proxy answers on
 * {@code healthCheckNodePort} whether this node has a ready endpoint, and an instance whose check fails on a node
 * gives up its VIPs there (keepalived-operator's PR #54). Rendered as a {@code vrrp_script} named after the service.
 */
public record HealthCheck(ServiceRef service, int port) implements Comparable<HealthCheck> {

  private static final Comparator<HealthCheck> ORDER =
      Comparator.comparing(HealthCheck::service).thenComparingInt(HealthCheck::port);

  public HealthCheck {
    Objects.requireNonNull(service, "service");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("healthCheckNodePort must be in 1..65535: " + port);
    }
  }

  /** The {@code vrrp_script} name: the service key, as keepalived-operator names it. */
  public String scriptName() {
    return service.key();
  }

  @Override
  public int compareTo(HealthCheck other) {
    return ORDER.compare(this, other);
  }
}
