package org.ipamoperators.controller.common.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Required;

/**
 * One held address of a block: the pool it was handed out from, its owner (the same fields an
 * IPClaim carries), how it was chosen ({@code origin}, e.g. "manual" or "allocated", optional) and
 * when the entry was written (RFC 3339, optional).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record IPBlockEntry(@Required String pool, @Required ClaimOwner owner, String origin, String since) {}
