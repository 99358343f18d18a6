package org.ipamoperators.vip.plan;

import java.util.List;
import org.ipamoperators.core.address.Ip;

/**
 * The planner's decision for one Service: addresses it keeps (already claimed), addresses to claim
 * now (with their IPGroup), own claims to release once the new ingress is published (extra claims,
 * or the old address of a Service that asked for another), problems, and the ingress the Service
 * shows once every claim has succeeded (in the order of its families).
 */
public record VipPlan(List<Holding> keep, List<Holding> toClaim, List<Holding> toRelease, List<VipProblem> problems,
    List<Ip> ingress) {

  /** True when the Service gets an address of every family it must have. */
  public boolean complete() {
    return problems.stream().noneMatch(VipProblem::blocking);
  }
}
