package org.ipamoperators.vip.plan;

/**
 * Why a Service did not get (or did not get all of) what it asked for. The reason becomes the
 * reason of a Warning Event on the Service; the message says what is wrong and with which pool.
 */
public record VipProblem(Reason reason, String message) {
  public enum Reason {
    /** An annotation or loadBalancerIP that is not an address, or two addresses of one family. */
    InvalidRequest,
    /** No pool may serve the Service (each pool's rejection is in the message). */
    NoPool,
    /** Pools may serve it but have no free address of the family. */
    PoolExhausted,
    /** The requested address is outside every pool, excluded, or held by someone else. */
    AddressUnavailable,
    /** The Service asks for an address other than the one it holds; it keeps the one it holds. */
    AddressKept
  }
}
