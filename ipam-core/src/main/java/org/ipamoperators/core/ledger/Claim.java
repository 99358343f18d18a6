package org.ipamoperators.core.ledger;

import java.time.Instant;
import java.util.Objects;
import org.ipamoperators.core.address.Ip;

/**
 * An address held by an owner, as found in a cluster (a claim object, an annotation, a status).
 * {@code claimedAt} (may be null) decides who keeps an address claimed twice: the earlier claim.
 */
public record Claim(Ip address, String owner, Instant claimedAt) {
  public Claim {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(owner, "owner");
  }

  public static Claim of(Ip address, String owner) {
    return new Claim(address, owner, null);
  }
}
