package org.ipamoperators.vip.plan;

import org.ipamoperators.vip.api.IPGroupSpec;

/**
 * An IPGroup as the planner sees it: its name, its spec and, when its addresses overlap an older
 * IPGroup's, why it is refused (null when it serves). A refused group hands out no new address;
 * what it gave stays with its holders.
 */
public record GroupInfo(String name, IPGroupSpec spec, String refused) {

  /** A group that is not refused. */
  public GroupInfo(String name, IPGroupSpec spec) {
    this(name, spec, null);
  }

  /** The pool name recorded in the ledger's claims. */
  public String pool() {
    return VipPlanner.pool(name);
  }
}
