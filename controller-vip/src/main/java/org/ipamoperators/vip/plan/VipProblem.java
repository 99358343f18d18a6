package org.ipamoperators.vip.plan;

/**
 * Why a Service did not get (or did not get all of) what it asked for. The reason becomes the
 * reason of a Warning Event on the Service (and of its condition); the message says what is wrong
 * and with which pool.
 */
public record VipProblem(Reason reason, String message) {
  public enum Reason {
    /** An annotation or loadBalancerIP that is not an address, or two addresses of one family. */
    InvalidRequest(true),
    /** No pool may serve the Service (each pool's rejection is in the message). */
    NoPool(true),
    /** Pools may serve it but have no free address of the family. */
    PoolExhausted(true),
    /** The requested address is outside every pool, excluded, or held by someone else. */
    AddressUnavailable(true),
    /** The address of its sharing key cannot be shared with it: a port or the traffic policy clashes. */
    PortClash(true),
    /** It asks for another address that it cannot have; it keeps the one it holds. */
    AddressKept(false),
    /** It holds an address its IPGroup no longer offers (excluded, outside, group gone); kept, not moved. */
    AddressOutsidePool(false);

    private final boolean blocking;

    Reason(boolean blocking) {
      this.blocking = blocking;
    }

    /** Whether the Service lacks an address because of it (rather than keeping one with a remark). */
    public boolean blocking() {
      return blocking;
    }
  }

  public boolean blocking() {
    return reason.blocking();
  }
}
