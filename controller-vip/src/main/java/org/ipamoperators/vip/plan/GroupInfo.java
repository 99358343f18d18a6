package org.ipamoperators.vip.plan;

import org.ipamoperators.vip.api.IPGroupSpec;

/** An IPGroup as the planner sees it: its name and spec. */
public record GroupInfo(String name, IPGroupSpec spec) {

  /** The pool name recorded in the ledger's claims. */
  public String pool() {
    return VipPlanner.pool(name);
  }
}
