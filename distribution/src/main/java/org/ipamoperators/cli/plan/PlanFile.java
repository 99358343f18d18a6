package org.ipamoperators.cli.plan;

import java.util.List;

/**
 * The YAML a user writes for {@code ipam plan}: pools, nodes, claimants and the claims already
 * found in a cluster. Field names are the file's; see examples/ for complete files.
 */
record PlanFile(List<PoolEntry> pools, List<NodeEntry> nodes, List<ClaimantEntry> claimants,
    List<ClaimEntry> claims, PlacementEntry placement) {

  record PoolEntry(String name, List<String> ranges, List<String> reserved, String strategy,
      String group, String cooldown) {}

  record NodeEntry(String name, String group, Boolean ready, Integer capacity, List<String> addresses) {}

  record ClaimantEntry(String name, List<String> pools) {}

  record ClaimEntry(String address, String owner, String claimedAt) {}

  record PlacementEntry(Boolean rebalance, Integer maxMoves) {}
}
