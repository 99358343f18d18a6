package org.ipamoperators.vip;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;

/**
 * The address of a claim, parsed once: every reconcile reads every claim in the cluster, so parsing
 * on each read would repeat the same work for every Service. Owned by the reconciler that reads the claims.
 */
final class ClaimAddresses {
  private static final int LIMIT = 1 << 20;
  private final Map<String, Ip> parsed = new ConcurrentHashMap<>();

  /** The claim's address, or null when it is not one. */
  Ip of(IPClaim c) {
    if (c.getSpec() == null || c.getSpec().address() == null) {
      return null;
    }
    String text = c.getSpec().address();
    Ip ip = parsed.get(text);
    if (ip != null) {
      return ip;
    }
    try {
      ip = Ip.parse(text);
    } catch (RuntimeException e) {
      return null;
    }
    if (parsed.size() > LIMIT) {
      parsed.clear(); // released addresses accumulate; start over rather than grow without bound
    }
    parsed.put(text, ip);
    return ip;
  }
}
