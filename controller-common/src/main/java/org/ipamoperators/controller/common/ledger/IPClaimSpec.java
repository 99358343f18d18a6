package org.ipamoperators.controller.common.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * What an IPClaim records: the address in canonical form, the pool it was handed out from (for
 * example {@code egressipam/bm}) and its owner. Immutable once created: a claim is released by
 * deleting it, never rewritten, so two writers can never both believe they hold an address.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self == oldSelf", message = "an IPClaim cannot be changed; delete it and claim again")
public record IPClaimSpec(@Required String address, @Required String pool, @Required ClaimOwner owner) {}
