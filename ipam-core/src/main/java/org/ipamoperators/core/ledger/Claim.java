package org.ipamoperators.core.ledger;

import java.time.Instant;
import java.util.Objects;
import org.ipamoperators.core.address.Ip;

/**
 * An address held by an owner, as found in a cluster (a claim object, an annotation, a status).
 * {@code claimedAt} (may be null) decides who keeps an address claimed twice: the earlier claim.
 */
public record Claim(Ip address, String owner, Instant claimedAt) {
  /**
   * Checks the address and owner.
   *
   * @param address the address
   * @param owner who holds it
   * @param claimedAt when it was claimed, or null
   */
  public Claim {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(owner, "owner");
  }

  /**
   * A claim without a time.
   *
   * @param address the address
   * @param owner who holds it
   * @return the claim
   */
  public static Claim of(Ip address, String owner) {
    return new Claim(address, owner, null);
  }
}
