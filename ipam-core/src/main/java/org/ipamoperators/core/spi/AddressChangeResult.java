package org.ipamoperators.core.spi;

/**
 * What became of one change. Partial success is normal: each change has its own outcome, and a
 * failure carries the platform's error code (such as {@code RequestLimitExceeded}) and whether a
 * retry may help.
 *
 * @param change the change this is the result of
 * @param outcome applied, failed or skipped
 * @param errorCode the platform's error code of a failure, else null
 * @param message why it failed or was skipped, naming the node; null when applied
 * @param retryable whether trying again may succeed (throttling, 5xx)
 */
public record AddressChangeResult(AddressChange change, Outcome outcome, String errorCode,
    String message, boolean retryable) {
  /** What became of the change. */
  public enum Outcome {
    /** Done, or found done already. */
    APPLIED,
    /** Not done; see the error code and message. */
    FAILED,
    /** Deliberately not done, such as detaching an address this network does not own. */
    SKIPPED
  }

  /**
   * A change that was done.
   *
   * @param change the change
   * @return an applied result
   */
  public static AddressChangeResult applied(AddressChange change) {
    return new AddressChangeResult(change, Outcome.APPLIED, null, null, false);
  }

  /**
   * A change that failed.
   *
   * @param change the change
   * @param errorCode the platform's error code
   * @param message what failed, naming the node
   * @param retryable whether trying again may succeed
   * @return a failed result
   */
  public static AddressChangeResult failed(AddressChange change, String errorCode, String message,
      boolean retryable) {
    return new AddressChangeResult(change, Outcome.FAILED, errorCode, message, retryable);
  }

  /**
   * A change deliberately not done.
   *
   * @param change the change
   * @param message why, naming the node
   * @return a skipped result
   */
  public static AddressChangeResult skipped(AddressChange change, String message) {
    return new AddressChangeResult(change, Outcome.SKIPPED, null, message, false);
  }

  /**
   * Whether the change was applied.
   *
   * @return true when applied
   */
  public boolean succeeded() {
    return outcome == Outcome.APPLIED;
  }
}
