package org.ipamoperators.vip.plan;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.core.address.Ip;

/**
 * What the ledger says about one Service's addresses, from the entries that concern it (its own
 * claims, shared claims listing it, its sharing key's claims): what it holds (own claims, and shared
 * claims listing it that it may keep), what its sharing key holds that it could join, how each held
 * address is held ({@code ""} its own claim, else the sharing key), its recorded sharing entries,
 * and memberships to leave once its new address is published (another key's, still used by others).
 * Every other address in the ledger is taken (see {@link #taken}).
 */
public record ServiceHoldings(List<Holding> held, Map<Ip, SharedAddress> joinable, Map<Ip, String> heldUnder,
    Map<Ip, ShareMember> recorded, List<Ip> leaveAfter) {

  /**
   * @param owner the Service as a claim owner
   * @param keyOwner its sharing key as a claim owner (null without a key)
   * @param related the ledger entries of its own claims, of shared claims listing it and of its key
   */
  public static ServiceHoldings of(ServiceRequest req, ClaimOwner owner, ClaimOwner keyOwner,
      Collection<LedgerEntry> related) {
    String me = req.key();
    List<Holding> held = new ArrayList<>();
    Map<Ip, SharedAddress> joinable = new HashMap<>();
    Map<Ip, String> heldUnder = new HashMap<>();
    Map<Ip, ShareMember> recorded = new HashMap<>();
    List<Ip> leaveAfter = new ArrayList<>();
    for (LedgerEntry e : related) {
      ClaimOwner o = e.owner();
      if (ServiceOwners.same(owner, o)) {
        if (!e.reserved()) { // a reservation is not a claim: nothing is held yet
          held.add(new Holding(e.ip(), e.pool()));
          heldUnder.put(e.ip(), "");
        }
        continue;
      }
      if (!e.shared()) {
        continue;
      }
      ShareMember mine = e.members().stream().filter(m -> m.service().equals(me)).findFirst().orElse(null);
      if (mine != null && !e.reserved()) {
        recorded.put(e.ip(), mine);
        // Its own key's, or another's used by it alone (it keeps the address under its new key, or
        // as its own); another key's used by others too: it moves and leaves afterwards.
        if (o.sameAs(keyOwner) || e.members().size() == 1) {
          held.add(new Holding(e.ip(), e.pool()));
          heldUnder.put(e.ip(), o.name());
        } else {
          leaveAfter.add(e.ip());
        }
      } else if (o.sameAs(keyOwner)) {
        joinable.put(e.ip(), new SharedAddress(e.pool(), req.sharingKey(), e.members()));
      }
    }
    return new ServiceHoldings(held, joinable, heldUnder, recorded, leaveAfter);
  }

  /** The addresses this Service may plan with although the ledger records them: held or joinable. */
  public Set<Ip> own() {
    Set<Ip> s = new HashSet<>(heldUnder.keySet());
    s.addAll(joinable.keySet());
    return s;
  }

  /**
   * The holdings that need a write: addresses to claim, and kept addresses held in the wrong form
   * (an own claim of a Service that now has a sharing key, a shared one of a Service whose key
   * changed) or whose recorded sharing entry (ports, backend) is out of date.
   */
  public List<Holding> work(VipPlan plan, ServiceRequest req) {
    List<Holding> out = new ArrayList<>(plan.toClaim());
    for (Holding h : plan.keep()) {
      String under = heldUnder.get(h.ip());
      String wanted = req.sharing() ? req.sharingKey() : "";
      ShareMember rec = recorded.get(h.ip());
      if (!wanted.equals(under) || (req.sharing() && (rec == null || !rec.sameEntry(req.member())))) {
        out.add(h);
      }
    }
    return out;
  }
}
