package org.ipamoperators.core.ledger;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.allocation.Allocator;

/**
 * Allocator state rebuilt from a cluster's claims: the allocator with every honoured address taken,
 * who owns what, and the claims that could not be honoured.
 */
public record RebuiltLedger(Allocator allocator, SortedMap<Ip, String> owners,
    List<LedgerConflict> conflicts) {

  /**
   * Copies the owners and conflicts.
   *
   * @param allocator the allocator with every honoured address taken
   * @param owners who owns each address
   * @param conflicts the claims that could not be honoured
   */
  public RebuiltLedger {
    owners = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(owners));
    conflicts = List.copyOf(conflicts);
  }

  /**
   * The addresses an owner holds.
   *
   * @param owner the owner
   * @return its addresses, in order
   */
  public List<Ip> addressesOf(String owner) {
    return owners.entrySet().stream().filter(e -> e.getValue().equals(owner))
        .map(Map.Entry::getKey).toList();
  }
}
