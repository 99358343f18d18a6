package org.ipamoperators.egressip;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.egressip.plan.Orphans;

/**
 * Takes due orphans (see {@link Orphans}) off their nodes, each only after the ledger, read again
 * from the API server rather than the informers (which may lag), shows no claim on it.
 *
 * <p>Why this is safe with two replicas: the ledger's order. A claim is created before its address
 * is attached, and released only after it was detached. So an address on an interface with no claim
 * in the API server is nobody's live attachment. If another replica claims it right after this
 * read, it attaches the address only after its claim; should this detach land after that attach,
 * the other replica's next pass finds its claimed address missing from the interface and attaches
 * it again (every pass confirms each served address). The address never has two owners, and an
 * address with a claim is never detached here.
 */
final class OrphanTakeOff {
  private OrphanTakeOff() {}

  /**
   * @param takenOff detached (and unmarked) now
   * @param claimed found claimed in the API server: left on
   * @param failures the detaches that failed, one message each
   */
  record Outcome(List<Orphans.Orphan> takenOff, List<Orphans.Orphan> claimed, List<String> failures) {}

  static Outcome run(List<Orphans.Orphan> due, Predicate<Ip> claimedInApiServer, NodeNetwork network) {
    List<AddressChange> detach = new ArrayList<>();
    Map<Ip, Orphans.Orphan> byIp = new HashMap<>();
    List<Orphans.Orphan> claimed = new ArrayList<>();
    for (Orphans.Orphan o : due) {
      if (claimedInApiServer.test(o.address())) {
        claimed.add(o);
        continue;
      }
      detach.add(AddressChange.detach(o.address(), o.node()));
      byIp.put(o.address(), o);
    }
    List<Orphans.Orphan> takenOff = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (AddressChangeResult r : detach.isEmpty() ? List.<AddressChangeResult>of() : network.apply(detach)) {
      Orphans.Orphan o = byIp.get(r.change().address());
      if (r.outcome() == AddressChangeResult.Outcome.APPLIED) {
        takenOff.add(o);
      } else if (r.outcome() == AddressChangeResult.Outcome.FAILED) {
        failures.add("DETACH orphan " + o.address() + " on " + o.node() + ": " + r.message()
            + (r.errorCode() == null ? "" : " (" + r.errorCode() + ")"));
      }
    }
    return new Outcome(takenOff, claimed, failures);
  }
}
