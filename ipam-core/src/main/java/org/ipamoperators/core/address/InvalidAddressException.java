package org.ipamoperators.core.address;

/** Text that is not a usable address, CIDR or range; the message names the value and the fix. */
public final class InvalidAddressException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  /** The offending text, as given (part of the serialized form). */
  private final String value;

  /**
   * Creates the exception.
   *
   * @param value the offending text, as given
   * @param message what is wrong and how to fix it
   */
  public InvalidAddressException(String value, String message) {
    super(message);
    this.value = value;
  }

  /**
   * The offending text, as given.
   *
   * @return the text that failed to parse
   */
  public String value() {
    return value;
  }
}
