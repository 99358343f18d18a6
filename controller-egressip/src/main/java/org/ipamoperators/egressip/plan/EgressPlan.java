package org.ipamoperators.egressip.plan;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.placement.PlacementPlan;
import org.ipamoperators.core.pool.PoolProblem;

/**
 * Everything one reconcile of an EgressIPAM should do, decided without I/O:
 * <ul>
 *   <li>{@code specProblems}: when not empty the spec is unusable and nothing else is planned;</li>
 *   <li>{@code toClaim}: addresses to claim in the ledger, per namespace, before anything is
 *       published; {@code toRelease}: claims of this IPAM to give back;</li>
 *   <li>{@code annotations}: the egressips value each namespace should carry, written only once
 *       all of its claims succeeded;</li>
 *   <li>{@code served}: the namespaces whose addresses are complete and theirs, with their
 *       addresses in spec order; only these reach the network;</li>
 *   <li>{@code placement}: which node hosts each served address;</li>
 *   <li>{@code problems}: the namespaces not served and why.</li>
 * </ul>
 */
public record EgressPlan(List<PoolProblem> specProblems, SortedMap<String, List<Ip>> toClaim,
    List<Ip> toRelease, SortedMap<String, String> annotations, SortedMap<String, List<Ip>> served,
    PlacementPlan placement, List<NamespaceProblem> problems, List<CidrUsage> usage,
    Map<Ip, Integer> cidrOf) {

  /** Usage of one CIDR after the plan. */
  public record CidrUsage(String cidr, java.math.BigInteger capacity, java.math.BigInteger allocated,
      java.math.BigInteger free) {}

  public boolean specValid() {
    return specProblems.isEmpty();
  }

  /** At most this many spec problems are spelled out in a condition or Event; the rest are counted. */
  static final int PROBLEMS_SHOWN = 5;

  /** The spec problems as one message: the first few, then how many more (a huge spec stays readable). */
  public String specMessage() {
    String shown = String.join("; ", specProblems.stream().limit(PROBLEMS_SHOWN).map(PoolProblem::message).toList());
    return specProblems.size() <= PROBLEMS_SHOWN ? shown
        : shown + "; and " + (specProblems.size() - PROBLEMS_SHOWN) + " more problem(s)";
  }
}
