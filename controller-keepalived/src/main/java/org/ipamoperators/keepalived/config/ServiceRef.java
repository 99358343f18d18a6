package org.ipamoperators.keepalived.config;

import java.util.Comparator;
import java.util.Objects;

/**
 * A Service by namespace and name; {@link #key()} ({@code namespace/name}) is how keepalived-operator keys it in
 * {@code status.routerIDs} and names its VRRP instance.
 */
public record ServiceRef(String namespace, String name) implements Comparable<ServiceRef> {

  private static final Comparator<ServiceRef> ORDER =
      Comparator.comparing(ServiceRef::namespace).thenComparing(ServiceRef::name);

  public ServiceRef {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    if (!KubernetesNames.isName(namespace) || !KubernetesNames.isName(name)) {
      throw new IllegalArgumentException("Not a Kubernetes namespace/name: " + namespace + "/" + name);
    }
  }

  /** Parses {@code namespace/name}. */
  public static ServiceRef parse(String key) {
    int slash = key.indexOf('/');
    if (slash < 0 || slash != key.lastIndexOf('/')) {
      throw new IllegalArgumentException("Expected namespace/name: " + key);
    }
    return new ServiceRef(key.substring(0, slash), key.substring(slash + 1));
  }

  /** {@code namespace/name}. */
  public String key() {
    return namespace + "/" + name;
  }

  @Override
  public int compareTo(ServiceRef other) {
    return ORDER.compare(this, other);
  }

  @Override
  public String toString() {
    return key();
  }
}
