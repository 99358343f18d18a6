package org.ipamoperators.vip.plan;

import org.ipamoperators.core.address.Ip;

/** An address a Service holds in the ledger, and the pool (ledger name, {@code ipgroup/<name>}) of the claim. */
public record Holding(Ip ip, String pool) {}
