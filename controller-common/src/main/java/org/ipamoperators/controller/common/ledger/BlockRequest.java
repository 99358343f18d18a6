package org.ipamoperators.controller.common.ledger;

import org.ipamoperators.core.address.Ip;

/** One address to claim in a block for an owner, from a pool; {@code origin} optional ("manual", "allocated"). */
public record BlockRequest(Ip ip, String pool, ClaimOwner owner, String origin) {}
