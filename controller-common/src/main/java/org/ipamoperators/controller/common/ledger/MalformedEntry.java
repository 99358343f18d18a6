package org.ipamoperators.controller.common.ledger;

/** An IPBlock entry no reader can use ({@link Malformed#problem(String, IPBlockEntry)}): its block, key and fault. */
public record MalformedEntry(String block, String key, String problem) {}
