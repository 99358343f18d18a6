package org.ipamoperators.core.audit;

import java.util.Objects;

/**
 * A thing that must have at most one owner: an address ({@code space} "ip", value in canonical form)
 * or a number of an id space (for example {@code space} "vrrp/default", value "7").
 *
 * @param space what kind of thing, and in which namespace of numbers
 * @param value the thing itself, in canonical form (the caller canonicalises, so equal means same)
 */
public record Resource(String space, String value) implements Comparable<Resource> {
  /** Validates that both parts are present. */
  public Resource {
    Objects.requireNonNull(space, "space");
    Objects.requireNonNull(value, "value");
  }

  /**
   * An IP address.
   *
   * @param canonical the address in canonical form
   * @return the resource
   */
  public static Resource ip(String canonical) {
    return new Resource("ip", canonical);
  }

  @Override
  public int compareTo(Resource o) {
    int c = space.compareTo(o.space);
    return c != 0 ? c : value.compareTo(o.value);
  }

  @Override
  public String toString() {
    return "ip".equals(space) ? value : space + ":" + value;
  }
}
