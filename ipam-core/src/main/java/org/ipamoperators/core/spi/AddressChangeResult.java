package org.ipamoperators.core.spi;

/**
 * What became of one change. Partial success is normal: each change has its own outcome, and a
 * failure carries the platform's error code (such as {@code RequestLimitExceeded}) and whether a
 * retry may help.
 */
public record AddressChangeResult(AddressChange change, Outcome outcome, String errorCode,
    String message, boolean retryable) {
  public enum Outcome { APPLIED, FAILED, SKIPPED }

  public static AddressChangeResult applied(AddressChange change) {
    return new AddressChangeResult(change, Outcome.APPLIED, null, null, false);
  }

  public static AddressChangeResult failed(AddressChange change, String errorCode, String message,
      boolean retryable) {
    return new AddressChangeResult(change, Outcome.FAILED, errorCode, message, retryable);
  }

  public static AddressChangeResult skipped(AddressChange change, String message) {
    return new AddressChangeResult(change, Outcome.SKIPPED, null, message, false);
  }

  public boolean succeeded() {
    return outcome == Outcome.APPLIED;
  }
}
