package org.ipamoperators.vip.plan;

import java.util.List;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.core.address.Ip;

/**
 * One address as the ledger shows it to planning: the pool and owner of its claim, the Services
 * listed on it when it is shared (owner kind {@value #SHARING_KIND}), and whether it is only
 * reserved (a thread of this process is claiming it right now; not held by anyone yet).
 */
public record LedgerEntry(Ip ip, String pool, ClaimOwner owner, List<ShareMember> members, boolean reserved) {
  /** The owner kind of a claim held by a sharing key. */
  public static final String SHARING_KIND = "SharingKey";

  public LedgerEntry {
    members = members == null ? List.of() : List.copyOf(members);
  }

  public boolean shared() {
    return SHARING_KIND.equals(owner.kind());
  }

  /** Who holds (or is claiming) the address, for messages. */
  public String describe() {
    String who = shared() ? "sharing key " + owner.name() + " ("
        + String.join(", ", members.stream().map(ShareMember::service).toList()) + ")" : owner.describe();
    return reserved ? who + ", being claimed" : who;
  }
}
