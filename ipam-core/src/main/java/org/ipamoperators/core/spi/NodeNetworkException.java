package org.ipamoperators.core.spi;

/**
 * A platform call that failed for a node or subnet: which one, the platform's error code, and
 * whether retrying may help (throttling, 5xx) or not (a terminated instance).
 */
public class NodeNetworkException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String subject;
  private final String errorCode;
  private final boolean retryable;

  public NodeNetworkException(String subject, String errorCode, String message, boolean retryable,
      Throwable cause) {
    super(subject + ": " + message + (errorCode == null ? "" : " (" + errorCode + ")"), cause);
    this.subject = subject;
    this.errorCode = errorCode;
    this.retryable = retryable;
  }

  /** The node or subnet the call was about. */
  public String subject() {
    return subject;
  }

  public String errorCode() {
    return errorCode;
  }

  public boolean retryable() {
    return retryable;
  }
}
