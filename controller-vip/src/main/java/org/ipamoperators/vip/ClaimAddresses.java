package org.ipamoperators.vip;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;

/**
 * The address of a claim, parsed once: every reconcile reads every claim in the cluster, and
 * parsing the same few thousand address strings again and again was most of a burst's CPU time.
 */
final class ClaimAddresses {
  private static final int LIMIT = 1 << 20;
  private static final Map<String, Ip> PARSED = new ConcurrentHashMap<>();

  private ClaimAddresses() {}

  /** The claim's address, or null when it is not one. */
  static Ip of(IPClaim c) {
    if (c.getSpec() == null || c.getSpec().address() == null) {
      return null;
    }
    String text = c.getSpec().address();
    Ip ip = PARSED.get(text);
    if (ip != null) {
      return ip;
    }
    try {
      ip = Ip.parse(text);
    } catch (RuntimeException e) {
      return null;
    }
    if (PARSED.size() > LIMIT) {
      PARSED.clear(); // released addresses accumulate; start over rather than grow without bound
    }
    PARSED.put(text, ip);
    return ip;
  }
}
