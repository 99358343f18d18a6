package org.ipamoperators.controller.common.ids;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import org.ipamoperators.controller.common.ledger.ClaimOwner;

/**
 * What an IDClaim records: the id space, the number, what the owner uses it for (for example the VRRP instance key
 * {@code shop/web}) and the owner. Immutable once created, like an IPClaim: a number is released by deleting its
 * claim, never handed over by rewriting it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self == oldSelf", message = "an IDClaim cannot be changed; delete it and claim again")
public record IDClaimSpec(
    @Required @Pattern("^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$") String space,
    @Required @Min(0) Integer id,
    @Required @Size(max = 512) String purpose,
    @Required ClaimOwner owner) {}
