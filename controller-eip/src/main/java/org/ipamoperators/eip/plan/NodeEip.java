package org.ipamoperators.eip.plan;

import java.util.Map;

/**
 * A node-mode Eip: its key ({@code namespace/name}), node selector, the node holding it now (or null), and whether
 * its namespace may use node mode ({@link NodeModeLimits}).
 */
public record NodeEip(String key, Map<String, String> selector, String holder, boolean allowed) {

  /** An Eip of a namespace that may use node mode. */
  public NodeEip(String key, Map<String, String> selector, String holder) {
    this(key, selector, holder, true);
  }
}
