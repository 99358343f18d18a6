package org.ipamoperators.vip.plan;

import java.util.List;

/** An address held under a sharing key: the ledger pool of its claim, the key and the Services using it. */
public record SharedAddress(String pool, String key, List<ShareMember> members) {
  public SharedAddress {
    members = members == null ? List.of() : List.copyOf(members);
  }
}
