package org.ipamoperators.core.spi;

/**
 * A platform call that failed for a node or subnet: which one, the platform's error code, and
 * whether retrying may help (throttling, 5xx) or not (a terminated instance).
 */
public class NodeNetworkException extends Exception {
  private static final long serialVersionUID = 1L;
  /** The node or subnet the call was about. */
  private final String subject;
  /** The platform's error code, or null. */
  private final String errorCode;
  /** Whether trying again may succeed. */
  private final boolean retryable;

  /**
   * A failed call.
   *
   * @param subject the node or subnet the call was about; starts the message
   * @param errorCode the platform's error code, or null
   * @param message what failed
   * @param retryable whether trying again may succeed
   * @param cause the platform's exception, or null
   */
  public NodeNetworkException(String subject, String errorCode, String message, boolean retryable,
      Throwable cause) {
    super(subject + ": " + message + (errorCode == null ? "" : " (" + errorCode + ")"), cause);
    this.subject = subject;
    this.errorCode = errorCode;
    this.retryable = retryable;
  }

  /**
   * The node or subnet the call was about.
   *
   * @return the subject
   */
  public String subject() {
    return subject;
  }

  /**
   * The platform's error code, such as {@code InvalidInstanceID.NotFound}.
   *
   * @return the code, or null
   */
  public String errorCode() {
    return errorCode;
  }

  /**
   * Whether trying again may succeed.
   *
   * @return true for throttling and server errors
   */
  public boolean retryable() {
    return retryable;
  }
}
