package org.ipamoperators.core.placement;

/**
 * Planner settings. Rebalancing is opt-in because every move interrupts the traffic of an address;
 * {@code maxMoves} bounds the rebalancing moves of one plan (failover moves are never bounded).
 */
public record PlacementOptions(boolean rebalance, int maxMoves) {
  public static final PlacementOptions DEFAULT = new PlacementOptions(false, 0);

  public PlacementOptions {
    if (maxMoves < 0) {
      throw new IllegalArgumentException("maxMoves must not be negative");
    }
  }

  public static PlacementOptions rebalance(int maxMoves) {
    return new PlacementOptions(true, maxMoves);
  }
}
