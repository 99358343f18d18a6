package org.ipamoperators.keepalived.config;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;

/**
 * What a service attached to the group asks for: its VIPs (the union of {@code status.loadBalancer.ingress[].ip}
 * and {@code spec.externalIPs}, any family), whether they are spread over the nodes ({@code spreadvips}
 * annotation), its verbatim lines ({@code verbatimconfig} annotation, unchecked yet) and, with
 * {@code externalTrafficPolicy: Local}, its {@code healthCheckNodePort}.
 */
public record ServiceVips(
    ServiceRef service,
    SortedSet<Ip> vips,
    boolean spread,
    SortedMap<String, String> verbatim,
    OptionalInt healthCheckPort) {

  public ServiceVips {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(healthCheckPort, "healthCheckPort");
    vips = Collections.unmodifiableSortedSet(new TreeSet<>(vips));
    verbatim = Collections.unmodifiableSortedMap(new TreeMap<>(verbatim));
  }

  /** A plain service: these VIPs, not spread, no verbatim lines, no health check. */
  public static ServiceVips of(String key, String... vips) {
    SortedSet<Ip> set = new TreeSet<>();
    for (String vip : vips) {
      set.add(Ip.parse(vip));
    }
    return new ServiceVips(ServiceRef.parse(key), set, false, new TreeMap<>(), OptionalInt.empty());
  }

  public ServiceVips spread(boolean value) {
    return new ServiceVips(service, vips, value, verbatim, healthCheckPort);
  }

  public ServiceVips withVerbatim(Map<String, String> lines) {
    return new ServiceVips(service, vips, spread, new TreeMap<>(lines), healthCheckPort);
  }

  public ServiceVips withHealthCheckPort(int port) {
    return new ServiceVips(service, vips, spread, verbatim, port > 0 ? OptionalInt.of(port) : OptionalInt.empty());
  }
}
