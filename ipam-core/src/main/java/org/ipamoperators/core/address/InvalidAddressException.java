package org.ipamoperators.core.address;

/** Text that is not a usable address, CIDR or range; the message names the value and the fix. */
public final class InvalidAddressException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String value;

  public InvalidAddressException(String value, String message) {
    super(message);
    this.value = value;
  }

  /** The offending text, as given. */
  public String value() {
    return value;
  }
}
