package org.ipamoperators.controller.common.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * What an IPClaim records: the address in canonical form, the pool it was handed out from (for
 * example {@code egressipam/bm}) and its owner. Immutable once created: a claim is released by
 * deleting it, never rewritten, so two writers can never both believe they hold an address. The
 * address must look like an IPv4 dotted quad or an IPv6 address (the API server refuses anything
 * else), so a hand-made claim cannot carry text that readers then fail to parse; readers still skip
 * claims whose address does not parse (one stored under a CRD without this pattern).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self == oldSelf", message = "an IPClaim cannot be changed; delete it and claim again")
public record IPClaimSpec(@Required @Pattern(ADDRESS) String address, @Required String pool, @Required ClaimOwner owner) {
  /** A dotted quad of 0-255, or hexadecimal groups with colons (IPv6, possibly with an IPv4 tail). */
  public static final String ADDRESS = "^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])[.]){3}"
      + "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$|^[0-9a-fA-F.]{0,39}:[0-9a-fA-F:.]{1,44}$";
}
