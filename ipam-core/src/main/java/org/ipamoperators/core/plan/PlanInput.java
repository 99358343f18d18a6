package org.ipamoperators.core.plan;

import java.util.List;
import org.ipamoperators.core.ledger.Claim;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;

/** Everything {@link IpamPlanner} decides from: pools, nodes, claimants and the claims found. */
public record PlanInput(List<PoolDefinition> pools, List<NodeState> nodes, List<Claimant> claimants,
    List<Claim> claims, PlacementOptions placement) {
  /**
   * Copies the lists.
   *
   * @param pools the pools
   * @param nodes the nodes
   * @param claimants who wants addresses
   * @param claims the claims found in the cluster
   * @param placement placement options; null for the default
   */
  public PlanInput {
    pools = List.copyOf(pools);
    nodes = List.copyOf(nodes);
    claimants = List.copyOf(claimants);
    claims = List.copyOf(claims);
    placement = placement == null ? PlacementOptions.DEFAULT : placement;
  }
}
