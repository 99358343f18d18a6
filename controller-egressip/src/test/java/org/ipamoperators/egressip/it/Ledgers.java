package org.ipamoperators.egressip.it;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.ipamoperators.controller.common.ledger.BlockLedger;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.core.address.Ip;

/** Who holds what in both ledgers (IPClaims and IPBlock entries), read from the API server. */
final class Ledgers {
  private Ledgers() {}

  /** The holder of an address in either ledger. */
  static Optional<ClaimOwner> holder(KubernetesClient client, Ip ip) {
    Optional<ClaimOwner> claim = new ClusterLedger(client).get(ip).map(c -> c.getSpec().owner());
    if (claim.isPresent()) {
      return claim;
    }
    IPBlockEntry e = new BlockLedger(client).entry(ip);
    return Optional.ofNullable(e == null ? null : e.owner());
  }

  /** Every address of a pool, in either ledger, with its owner's name. */
  static Map<Ip, String> ofPool(KubernetesClient client, String pool) {
    Map<Ip, String> out = new TreeMap<>();
    new ClusterLedger(client).claimsOfPool(pool).forEach(c -> out.put(Ip.parse(c.getSpec().address()),
        c.getSpec().owner().name()));
    new BlockLedger(client).entriesOfPool(pool).forEach((ip, e) -> out.put(ip, e.owner().name()));
    return out;
  }
}
