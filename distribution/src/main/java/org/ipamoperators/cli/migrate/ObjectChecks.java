package org.ipamoperators.cli.migrate;

import java.util.List;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolProblem;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.egressip.plan.EgressPlanner;
import org.ipamoperators.vip.api.IPGroupSpec;

/** "Would the new controller refuse it?", answered by the controllers' own validation code. */
public final class ObjectChecks {
  private ObjectChecks() {}

  /** What the egress controller reports on an EgressIPAM it refuses. */
  public static List<String> egressIpam(EgressIPAMSpec spec) {
    return EgressPlanner.validate(spec).stream().map(PoolProblem::message).toList();
  }

  /** What the vip controller reports on an IPGroup it refuses. */
  public static List<String> ipGroup(String name, IPGroupSpec spec) {
    if (spec == null) {
      return List.of("spec is missing: give spec.segment or spec.cidrs");
    }
    return Pool.validate(name, spec.ranges(), spec.excluded()).stream().map(PoolProblem::message).toList();
  }
}
