package org.ipamoperators.controller.common.ids;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A named space of small numbers handed out cluster-wide, one owner per number: for example the VRRP router ids
 * (1..255) of one layer-2 network. Groups that share a network must share a space; groups on networks that never
 * see each other's adverts may use spaces of their own and so reuse numbers.
 *
 * @param name a DNS label (at most 40 characters), part of every claim's object name
 * @param min the lowest number
 * @param max the highest number
 */
public record IdSpace(String name, int min, int max) {
  private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?");

  public IdSpace {
    Objects.requireNonNull(name, "name");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("An id space name is a DNS label of at most 40 characters: '" + name + "'");
    }
    if (min < 0 || max < min) {
      throw new IllegalArgumentException("An id space needs 0 <= min <= max: " + min + ".." + max);
    }
  }

  /** The VRRP router ids of one network: 1..255. */
  public static IdSpace vrrpRouterIds(String network) {
    return new IdSpace("vrrp-" + network, 1, 255);
  }

  public boolean contains(int id) {
    return id >= min && id <= max;
  }

  /** How many numbers the space has. */
  public int size() {
    return max - min + 1;
  }

  /** The name of the claim object of {@code id}: {@code <space>.<id>}. */
  public String claimName(int id) {
    if (!contains(id)) {
      throw new IllegalArgumentException(id + " is not in id space " + name + " (" + min + ".." + max + ")");
    }
    return name + "." + id;
  }
}
