package org.ipamoperators.core.placement;

/**
 * Planner settings. Rebalancing is opt-in because every move interrupts the traffic of an address;
 * {@code maxMoves} bounds the rebalancing moves of one plan (failover moves are never bounded).
 */
public record PlacementOptions(boolean rebalance, int maxMoves) {
  /** No rebalancing. */
  public static final PlacementOptions DEFAULT = new PlacementOptions(false, 0);

  /**
   * Checks the values.
   *
   * @param rebalance whether to even out nodes (moves cost traffic)
   * @param maxMoves at most this many moves for rebalancing
   */
  public PlacementOptions {
    if (maxMoves < 0) {
      throw new IllegalArgumentException("maxMoves must not be negative");
    }
  }

  /**
   * Rebalancing with a limit.
   *
   * @param maxMoves at most this many moves
   * @return the options
   */
  public static PlacementOptions rebalance(int maxMoves) {
    return new PlacementOptions(true, maxMoves);
  }
}
